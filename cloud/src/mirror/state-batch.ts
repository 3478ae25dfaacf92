import type { EntityState, tunnel } from '@smarthome/protocol';
import type { CloudDatabase } from '../db/database.ts';
import { json, toEntityState } from './rows.ts';

type Delta = tunnel.Delta;
type Row = Record<string, any>;

/** One edge's consecutive changes, as the tunnel hands them in; `lastSeq` is recorded when given. */
export interface DeltaBatch {
  edgeId: number;
  deltas: readonly Delta[];
  lastSeq: number | null;
}
export type BatchResult = { oldState: EntityState | null }[];

/**
 * Rows one chunk writes at most: 9 parameters a row stays far below both engines' limits, and
 * on SQLite (synchronous) one chunk's three statements are a short stall.
 */
export const STATE_CHUNK = 500;

const key = (edgeId: number, entityId: string) => `${edgeId}\u0000${entityId}`;

/** A batch made only of state changes, each of a different entity: it can share a chunk's statements. */
export function stateKeys(batch: DeltaBatch): string[] | null {
  const keys: string[] = [];
  for (const d of batch.deltas) {
    if (d.kind !== 'state') return null;
    keys.push(key(batch.edgeId, d.state.entity_id));
  }
  return new Set(keys).size === keys.length ? keys : null;
}

/**
 * Writes the state changes of several edges' batches with three statements, whatever their
 * number: the old states read in one SELECT, the new ones upserted in one multi-row INSERT, the
 * sequences in another. On PostgreSQL each statement is a round trip, and its answer waits for a
 * turn of a busy event loop: one SELECT and two upserts per delta, in turn, capped the mirror at
 * fewer deltas per second than 10,000 edges send (#19). The same result as applying the batches
 * one after the other, because no edge and no entity appears twice in a chunk (the caller splits
 * them: `stateKeys`). Must run inside the caller's transaction.
 */
export async function writeStateChunk(database: CloudDatabase, batches: readonly DeltaBatch[]): Promise<BatchResult[]> {
  const states: { edgeId: number; state: EntityState }[] = [];
  for (const b of batches)
    for (const d of b.deltas) if (d.kind === 'state') states.push({ edgeId: b.edgeId, state: d.state });
  const old = new Map<string, EntityState>();
  if (states.length > 0) {
    const rows = await database.query<Row>(
      `SELECT * FROM mirror_entities WHERE disabled_by IS NULL AND (${states.map(() => '(edge_id = ? AND entity_id = ?)').join(' OR ')})`,
      states.flatMap((s) => [s.edgeId, s.state.entity_id]),
    );
    for (const r of rows) old.set(key(Number(r.edge_id), r.entity_id as string), toEntityState(r));
    await database.execute(
      `INSERT INTO mirror_entities (edge_id, entity_id, name, domain, platform, registered, state, attributes, last_changed, last_updated)
      VALUES ${states.map(() => '(?, ?, ?, ?, ?, 0, ?, ?, ?, ?)').join(', ')}
      ON CONFLICT (edge_id, entity_id) DO UPDATE SET state = excluded.state, attributes = excluded.attributes,
        last_changed = excluded.last_changed, last_updated = excluded.last_updated`,
      states.flatMap(({ edgeId, state: s }) => [
        edgeId,
        s.entity_id,
        s.name,
        s.domain,
        s.platform,
        s.state,
        json(s.attributes ?? {}),
        s.last_changed ?? null,
        s.last_updated ?? null,
      ]),
    );
  }
  const at = new Date().toISOString();
  const withSeq = batches.filter((b) => b.lastSeq !== null);
  const without = batches.filter((b) => b.lastSeq === null);
  if (withSeq.length > 0)
    await database.execute(
      `INSERT INTO mirror_sync (edge_id, seq, snapshot_at, updated_at, version) VALUES ${withSeq.map(() => '(?, ?, NULL, ?, 1)').join(', ')}
      ON CONFLICT (edge_id) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at, version = mirror_sync.version + 1`,
      withSeq.flatMap((b) => [b.edgeId, b.lastSeq, at]),
    );
  if (without.length > 0)
    await database.execute(
      `INSERT INTO mirror_sync (edge_id, seq, snapshot_at, updated_at, version) VALUES ${without.map(() => '(?, NULL, NULL, ?, 1)').join(', ')}
      ON CONFLICT (edge_id) DO UPDATE SET updated_at = excluded.updated_at, version = mirror_sync.version + 1`,
      without.flatMap((b) => [b.edgeId, at]),
    );
  return batches.map((b) =>
    b.deltas.map((d) => ({
      oldState: d.kind === 'state' ? (old.get(key(b.edgeId, d.state.entity_id)) ?? null) : null,
    })),
  );
}
