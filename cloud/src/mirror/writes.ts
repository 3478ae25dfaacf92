import type { EntityRecord, EntityState, tunnel } from '@smarthome/protocol';
import type { CloudDatabase } from '../db/database.ts';
import { EntityIndex } from './entity-index.ts';
import { automationRow, deviceRow, entryRow, settingsOf, snapshotEntityRows, stateRow } from './rows.ts';
import { AUTOMATION_COLUMNS, DEVICE_COLUMNS, ENTITY_COLUMNS, ENTRY_COLUMNS, SQL } from './sql.ts';
import { type BatchResult, type DeltaBatch, STATE_CHUNK, stateKeys, writeStateChunk } from './state-batch.ts';

type Snapshot = tunnel.Snapshot;
type Delta = tunnel.Delta;

/** what a snapshot replaces; mirror_sync (sequence, version) outlives it */
const DATA_TABLES = [
  'mirror_devices',
  'mirror_entities',
  'mirror_config_entries',
  'mirror_automations',
  'mirror_areas',
] as const;
/** rows per multi-row INSERT of a snapshot: 16 columns × 200 stays far below both engines' parameter limits */
const CHUNK = 200;

/** Lets timers, I/O and health checks run between a large snapshot's chunks (the transaction stays open). */
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Snapshots stored at once on PostgreSQL. Each holds a client of the pool (10) for its whole
 * transaction, turns of the loop included; a fleet's first sync brought a thousand at once, and
 * the edges' hellos, token lookups and the API then waited behind them for a client past the
 * pool's 5 s and failed (#19). The rest wait here, for no client. SQLite runs one transaction at
 * a time anyway.
 */
const PG_SNAPSHOTS_AT_ONCE = 3;

/** At most `size` holders at once; the others wait in order. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(size: number) {
    this.free = size;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}

/**
 * The mirror's writes (snapshots, deltas, clearing an edge); MirrorStore (store.ts) adds the
 * reads. Writes of one snapshot or delta are one transaction. SQL here is portable (SQLite and
 * PostgreSQL).
 */
export abstract class MirrorWrites {
  protected readonly database: CloudDatabase;
  private readonly snapshotSlots: Slots | null;
  /** which entities each edge has (service calls' lookup); told of every committed registry change */
  readonly index: EntityIndex;
  constructor(database: CloudDatabase) {
    this.database = database;
    this.index = new EntityIndex(database);
    this.snapshotSlots = database.dialect === 'postgres' ? new Slots(PG_SNAPSHOTS_AT_ONCE) : null;
  }

  /**
   * The stored state of one enabled entity on one of the given edges, or null (a delta's old
   * state): inside a write, so it must not wait for announced writes (its own may be one).
   */
  protected abstract storedState(edgeIds: number[], entityId: string): Promise<EntityState | null>;

  protected run(sql: string, params: unknown[]): Promise<number> {
    return this.database.execute(sql, params);
  }

  /**
   * Replaces everything mirrored for the edge by the snapshot; records `seq` when given. One
   * transaction, written in chunks of CHUNK rows with a turn of the event loop before each, so a
   * large snapshot does not stall the process (SQLite's calls are synchronous).
   */
  async replaceSnapshot(edgeId: number, snapshot: Snapshot, seq: number | null = null): Promise<void> {
    try {
      if (this.snapshotSlots) return await this.snapshotSlots.run(() => this.storeSnapshot(edgeId, snapshot, seq));
      return await this.storeSnapshot(edgeId, snapshot, seq);
    } finally {
      this.index.changed(edgeId);
    }
  }

  private async storeSnapshot(edgeId: number, snapshot: Snapshot, seq: number | null): Promise<void> {
    const entities = snapshotEntityRows(edgeId, snapshot);
    const written = { rows: 0 }; // since the last yield: a snapshot under a chunk goes in one go
    await this.database.atomic(async () => {
      await yieldToLoop(); // SQLite chains queued transactions in microtasks: a storm's, one stall
      for (const table of DATA_TABLES) await this.run(`DELETE FROM ${table} WHERE edge_id = ?`, [edgeId]);
      await this.insertRows(
        'mirror_devices',
        DEVICE_COLUMNS,
        snapshot.devices.map((d) => deviceRow(edgeId, d)),
        written,
      );
      await this.insertRows('mirror_entities', ENTITY_COLUMNS, entities, written);
      await this.insertRows(
        'mirror_areas',
        ['edge_id', 'area_id', 'name'],
        (snapshot.areas ?? []).map((a) => [edgeId, a.area_id, a.name]),
        written,
      );
      await this.insertRows(
        'mirror_config_entries',
        ENTRY_COLUMNS,
        snapshot.config_entries.map((c) => entryRow(edgeId, c)),
        written,
      );
      await this.insertRows(
        'mirror_automations',
        AUTOMATION_COLUMNS,
        snapshot.automations.map((a) => automationRow(edgeId, a)),
        written,
      );
      const at = new Date().toISOString();
      await this.run(SQL.setSeq, [edgeId, seq, at, at]);
    });
  }

  private async insertRows(
    table: string,
    columns: readonly string[],
    rows: unknown[][],
    written: { rows: number },
  ): Promise<void> {
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    for (let i = 0; i < rows.length; i += CHUNK) {
      if (written.rows >= CHUNK) {
        await yieldToLoop();
        written.rows = 0;
      }
      const chunk = rows.slice(i, i + CHUNK);
      written.rows += chunk.length;
      await this.run(
        `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${chunk.map(() => tuple).join(', ')}`,
        chunk.flat(),
      );
    }
  }

  /**
   * Applies one change; records `seq` when given. For a state change, resolves to the state it
   * replaced; for a record that disables its entity, to the state it removed.
   */
  async applyDelta(edgeId: number, delta: Delta, seq: number | null = null): Promise<{ oldState: EntityState | null }> {
    return (await this.applyDeltas(edgeId, [delta], seq))[0]!;
  }

  /**
   * Applies consecutive changes of one edge in one unit (a burst costs one commit, not one per
   * change) and records `lastSeq`, the sequence of the last one, when given. `oldStates` false:
   * the states that state changes replace are not read (answered null; see DeltaBatch).
   */
  async applyDeltas(
    edgeId: number,
    deltas: readonly Delta[],
    lastSeq: number | null = null,
    oldStates = true,
  ): Promise<{ oldState: EntityState | null }[]> {
    return this.database.atomic(async () => {
      const out: { oldState: EntityState | null }[] = [];
      for (const delta of deltas) out.push({ oldState: await this.applyOne(edgeId, delta, oldStates) });
      if (lastSeq !== null) await this.run(SQL.setSeq, [edgeId, lastSeq, null, new Date().toISOString()]);
      else await this.run(SQL.bumpVersion, [edgeId, new Date().toISOString()]);
      return out;
    });
  }

  /**
   * Applies several edges' batches, in order, in the caller's transaction (or one of its own):
   * the same as applyDeltas for each, but runs of state changes share their statements
   * (`writeStateChunk`), whose round trips were the mirror's limit on PostgreSQL. A batch with
   * other changes, or a chunk meeting an edge or entity it already has, ends the run.
   */
  async applyBatches(batches: readonly DeltaBatch[]): Promise<BatchResult[]> {
    return this.database.atomic(async () => {
      const out: BatchResult[] = [];
      let chunk: DeltaBatch[] = [];
      const seen = new Set<string>();
      let rows = 0;
      const flush = async () => {
        if (chunk.length > 0) out.push(...(await writeStateChunk(this.database, chunk)));
        chunk = [];
        seen.clear();
        rows = 0;
      };
      for (const b of batches) {
        const keys = stateKeys(b);
        if (!keys) {
          await flush();
          out.push(await this.applyDeltas(b.edgeId, b.deltas, b.lastSeq, b.oldStates));
          continue;
        }
        const edge = `edge ${b.edgeId}`;
        if (seen.has(edge) || keys.some((k) => seen.has(k)) || (rows > 0 && rows + keys.length > STATE_CHUNK))
          await flush();
        chunk.push(b);
        seen.add(edge);
        for (const k of keys) seen.add(k);
        rows += keys.length;
      }
      await flush();
      return out;
    });
  }

  private async applyOne(edgeId: number, delta: Delta, oldStates: boolean): Promise<EntityState | null> {
    // a state change replaces the old state; disabling an entity removes it
    const oldState =
      delta.kind === 'state'
        ? oldStates
          ? await this.storedState([edgeId], delta.state.entity_id)
          : null
        : delta.kind === 'entity_upsert' && delta.entity.disabled_by
          ? await this.storedState([edgeId], delta.entity.entity_id)
          : null;
    switch (delta.kind) {
      case 'state':
        await this.putState(edgeId, delta.state);
        break;
      case 'device_upsert':
        await this.run(SQL.upsertDevice, deviceRow(edgeId, delta.device));
        break;
      case 'device_remove':
        await this.run(SQL.removeDevice, [edgeId, delta.id]);
        break;
      case 'entity_upsert':
        await this.putEntity(edgeId, delta.entity);
        break;
      case 'entity_remove':
        await this.run(SQL.removeEntity, [edgeId, delta.entity_id]);
        break;
      case 'area_upsert':
        await this.run(SQL.upsertArea, [edgeId, delta.area.area_id, delta.area.name]);
        break;
      case 'config_entry_upsert':
        await this.run(SQL.upsertEntry, entryRow(edgeId, delta.entry));
        break;
      case 'config_entry_remove':
        await this.run(SQL.removeEntry, [edgeId, delta.id]);
        break;
      case 'automation_upsert':
        await this.run(SQL.upsertAutomation, automationRow(edgeId, delta.automation));
        break;
      case 'automation_remove':
        await this.run(SQL.removeAutomation, [edgeId, delta.id]);
        break;
    }
    return oldState;
  }

  /** Forgets everything mirrored for the edge (e.g. when it is revoked); its version keeps counting up. */
  async clear(edgeId: number): Promise<void> {
    await this.database.atomic(async () => {
      await yieldToLoop(); // SQLite chains queued transactions in microtasks: a storm's, one stall
      for (const table of DATA_TABLES) await this.run(`DELETE FROM ${table} WHERE edge_id = ?`, [edgeId]);
      await this.run(SQL.clearSync, [new Date().toISOString(), edgeId]);
    });
    this.index.changed(edgeId);
  }

  private async putEntity(edgeId: number, e: EntityRecord): Promise<void> {
    await this.run(SQL.dropRenamed, [edgeId, e.id, e.entity_id]);
    await this.run(SQL.upsertEntity, [
      edgeId,
      e.entity_id,
      e.id,
      e.name,
      e.domain,
      e.platform,
      e.unique_id,
      e.config_entry_id,
      e.device_registry_id,
      e.disabled_by ?? null,
      settingsOf(e),
    ]);
    await this.run(SQL.dropDisabledState, [edgeId, e.entity_id]);
  }

  private async putState(edgeId: number, s: EntityState): Promise<void> {
    await this.run(SQL.upsertState, stateRow(edgeId, s));
  }
}
