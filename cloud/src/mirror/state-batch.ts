import type { EntityState, tunnel } from '@smarthome/protocol';
import type { CloudDatabase, SqlStatement } from '../db/database.ts';
import { stateRow, toEntityState } from './rows.ts';

type Delta = tunnel.Delta;
type Row = Record<string, any>;

/** One edge's consecutive changes, as the tunnel hands them in; `lastSeq` is recorded when given. */
export interface DeltaBatch {
  edgeId: number;
  deltas: readonly Delta[];
  lastSeq: number | null;
  /**
   * false: the caller has no use for the states these changes replace (the tunnel announced each
   * with the old state its edge sent), so they are not read: every oldState answered is null
   */
  oldStates: boolean;
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

/** writeStateChunk's statements, for a chunk of `states` or `batches` (the text varies with their number) */
const selectOld = (states: readonly ChunkState[]) =>
  `SELECT * FROM mirror_entities WHERE disabled_by IS NULL AND (${states.map(() => '(edge_id = ? AND entity_id = ?)').join(' OR ')})`;
const upsertStates = (states: readonly ChunkState[]) =>
  `INSERT INTO mirror_entities (edge_id, entity_id, name, domain, platform, registered, state, attributes, last_changed, last_updated)
      VALUES ${states.map(() => '(?, ?, ?, ?, ?, 0, ?, ?, ?, ?)').join(', ')}
      ON CONFLICT (edge_id, entity_id) DO UPDATE SET state = excluded.state, attributes = excluded.attributes,
        last_changed = excluded.last_changed, last_updated = excluded.last_updated`;
const stateParams = (states: readonly ChunkState[]) => states.flatMap(({ edgeId, state }) => stateRow(edgeId, state));
const upsertSeqs = (batches: readonly DeltaBatch[]) =>
  `INSERT INTO mirror_sync (edge_id, seq, snapshot_at, updated_at, version) VALUES ${batches.map(() => '(?, ?, NULL, ?, 1)').join(', ')}
      ON CONFLICT (edge_id) DO UPDATE SET seq = excluded.seq, updated_at = excluded.updated_at, version = mirror_sync.version + 1`;
const bumpVersions = (batches: readonly DeltaBatch[]) =>
  `INSERT INTO mirror_sync (edge_id, seq, snapshot_at, updated_at, version) VALUES ${batches.map(() => '(?, NULL, NULL, ?, 1)').join(', ')}
      ON CONFLICT (edge_id) DO UPDATE SET updated_at = excluded.updated_at, version = mirror_sync.version + 1`;

interface ChunkState {
  edgeId: number;
  state: EntityState;
}

function chunkStates(batches: readonly DeltaBatch[]): ChunkState[] {
  const states: ChunkState[] = [];
  for (const b of batches)
    for (const d of b.deltas) if (d.kind === 'state') states.push({ edgeId: b.edgeId, state: d.state });
  return states;
}

function results(batches: readonly DeltaBatch[], rows: readonly Row[]): BatchResult[] {
  const old = new Map<string, EntityState>();
  for (const r of rows) old.set(key(Number(r.edge_id), r.entity_id as string), toEntityState(r));
  return batches.map((b) =>
    b.deltas.map((d) => ({
      oldState: d.kind === 'state' && b.oldStates ? (old.get(key(b.edgeId, d.state.entity_id)) ?? null) : null,
    })),
  );
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
  let rows: Row[] = [];
  const reads = chunkStates(batches.filter((b) => b.oldStates));
  if (reads.length > 0)
    rows = await database.query<Row>(
      selectOld(reads),
      reads.flatMap((s) => [s.edgeId, s.state.entity_id]),
    );
  for (const { sql, params } of chunkWrites(batches)) await database.execute(sql, params);
  return results(batches, rows);
}

/** writeStateChunk's writes: the states upserted, then the sequences (or versions) */
function chunkWrites(batches: readonly DeltaBatch[]): SqlStatement[] {
  const writes: SqlStatement[] = [];
  const states = chunkStates(batches);
  if (states.length > 0) writes.push({ sql: upsertStates(states), params: stateParams(states) });
  const at = new Date().toISOString();
  const withSeq = batches.filter((b) => b.lastSeq !== null);
  const without = batches.filter((b) => b.lastSeq === null);
  if (withSeq.length > 0)
    writes.push({ sql: upsertSeqs(withSeq), params: withSeq.flatMap((b) => [b.edgeId, b.lastSeq, at]) });
  if (without.length > 0) writes.push({ sql: bumpVersions(without), params: without.flatMap((b) => [b.edgeId, at]) });
  return writes;
}

/**
 * writeStateChunk as a batch (CloudDatabase.batch), for a chunk that wants no old state (each
 * change was announced with the one its edge sent): on SQLite the file's own thread writes it,
 * once the file is busy, instead of the event loop (a quarter of the replica's main thread at
 * 10,000 edges, #19). Answers null old states.
 */
export async function writeStatesInBatch(
  database: CloudDatabase,
  batches: readonly DeltaBatch[],
): Promise<BatchResult[]> {
  await database.batch(chunkWrites(batches));
  return results(batches, []);
}

/** Whether writeStatesAtOnce can take these batches: each has state changes only, no edge or entity twice, one chunk. */
export function atOnce(batches: readonly DeltaBatch[]): boolean {
  const seen = new Set<string>();
  let rows = 0;
  for (const b of batches) {
    const keys = stateKeys(b);
    const edge = `edge ${b.edgeId}`;
    if (!keys || keys.length === 0 || seen.has(edge) || keys.some((k) => seen.has(k))) return false;
    seen.add(edge);
    for (const k of keys) seen.add(k);
    rows += keys.length;
  }
  return batches.length > 0 && rows <= STATE_CHUNK;
}

/**
 * writeStateChunk as ONE statement (PostgreSQL only: data-modifying WITH), so one round trip and
 * no transaction around it: each round trip waits for a turn of the replica's busy loop (BEGIN,
 * three statements and COMMIT were five). PostgreSQL runs every data-modifying CTE whether or not
 * it is referenced, all against the snapshot taken when the statement starts, so `old` reads the
 * states as they were before the upsert; one statement is atomic. The rows come as one array
 * per column (`unnest`), so the text is the same whatever their number: the server parses and
 * plans it once per connection (a named statement, postgres-statements.ts) instead of once per
 * group, and finds the old states by a join on the primary key instead of an OR of key pairs.
 * Columns are named: a prepared `SELECT *` breaks when a migration adds one.
 */
const STATE_ROWS = `k AS (
    SELECT * FROM unnest(CAST(? AS BIGINT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]),
      CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]), CAST(? AS TEXT[]))
      AS k (edge_id, entity_id, name, domain, platform, state, attributes, last_changed, last_updated))`;
const OLD_STATES = `old AS (
    SELECT m.edge_id, m.entity_id, m.name, m.domain, m.platform, m.state, m.attributes, m.last_changed, m.last_updated
    FROM mirror_entities m JOIN k ON m.edge_id = k.edge_id AND m.entity_id = k.entity_id WHERE m.disabled_by IS NULL)`;
const UPSERT_STATES = `INSERT INTO mirror_entities (edge_id, entity_id, name, domain, platform, registered, state, attributes, last_changed, last_updated)
    SELECT edge_id, entity_id, name, domain, platform, 0, state, attributes, last_changed, last_updated FROM k
    ON CONFLICT (edge_id, entity_id) DO UPDATE SET state = excluded.state, attributes = excluded.attributes,
      last_changed = excluded.last_changed, last_updated = excluded.last_updated`;
const UPSERT_SEQS = `INSERT INTO mirror_sync (edge_id, seq, snapshot_at, updated_at, version)
    SELECT edge_id, seq, NULL, ?, 1 FROM unnest(CAST(? AS BIGINT[]), CAST(? AS BIGINT[])) AS q (edge_id, seq)
    ON CONFLICT (edge_id) DO UPDATE SET seq = COALESCE(excluded.seq, mirror_sync.seq), updated_at = excluded.updated_at,
      version = mirror_sync.version + 1`;
const STATES_AT_ONCE_SQL = `WITH ${STATE_ROWS},
  ${OLD_STATES},
  s AS (${UPSERT_STATES}),
  q AS (${UPSERT_SEQS})
  SELECT edge_id, entity_id, name, domain, platform, state, attributes, last_changed, last_updated FROM old`;
/** the same when no batch wants the old states: the join is not made (same parameters) */
const STATES_AT_ONCE_NO_OLD_SQL = `WITH ${STATE_ROWS},
  s AS (${UPSERT_STATES})
  ${UPSERT_SEQS}`;

export async function writeStatesAtOnce(
  database: CloudDatabase,
  batches: readonly DeltaBatch[],
): Promise<BatchResult[]> {
  const rows = chunkStates(batches).map(({ edgeId, state }) => stateRow(edgeId, state));
  const columns = Array.from({ length: 9 }, (_, i) => rows.map((r) => r[i]));
  // a batch without a sequence keeps the one recorded (COALESCE) and only bumps the version
  const sequences = [new Date().toISOString(), batches.map((b) => b.edgeId), batches.map((b) => b.lastSeq)];
  const params = [...columns, ...sequences];
  if (batches.some((b) => b.oldStates)) return results(batches, await database.query<Row>(STATES_AT_ONCE_SQL, params));
  await database.execute(STATES_AT_ONCE_NO_OLD_SQL, params);
  return results(batches, []);
}
