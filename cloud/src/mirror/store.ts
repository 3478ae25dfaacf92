import type { ConfigEntry, Device, EntityRecord, EntityState, tunnel } from '@smarthome/protocol';
import type { CloudDatabase } from '../db/database.ts';

type Snapshot = tunnel.Snapshot;
type Delta = tunnel.Delta;
type Row = Record<string, any>;

export interface MirrorCounts {
  devices: number;
  entities: number;
  config_entries: number;
  automations: number;
}

const json = (v: unknown) => JSON.stringify(v ?? null);
function parse<T>(text: string | null, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
const bool = (v: boolean) => (v ? 1 : 0);

const DEVICE_COLUMNS = [
  'edge_id',
  'id',
  'name',
  'manufacturer',
  'model',
  'sw_version',
  'identifiers',
  'config_entry_id',
  'user_id',
  'via_device_id',
] as const;
const ENTITY_COLUMNS = [
  'edge_id',
  'entity_id',
  'id',
  'name',
  'domain',
  'platform',
  'unique_id',
  'config_entry_id',
  'device_registry_id',
  'registered',
  'state',
  'attributes',
  'last_changed',
  'last_updated',
  'disabled_by',
] as const;
const ENTRY_COLUMNS = ['edge_id', 'id', 'domain', 'title', 'source', 'state', 'created_at'] as const;
const AUTOMATION_COLUMNS = ['edge_id', 'id', 'alias', 'enabled', 'mode', 'webhook_id'] as const;

const SQL = {
  upsertDevice: `INSERT INTO mirror_devices (${DEVICE_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (edge_id, id) DO UPDATE SET name = excluded.name, manufacturer = excluded.manufacturer, model = excluded.model,
      sw_version = excluded.sw_version, identifiers = excluded.identifiers, config_entry_id = excluded.config_entry_id, user_id = excluded.user_id,
      via_device_id = excluded.via_device_id`,
  /** a record keeps the entity's state */
  upsertEntity: `INSERT INTO mirror_entities (edge_id, entity_id, id, name, domain, platform, unique_id, config_entry_id, device_registry_id, registered, disabled_by)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)
    ON CONFLICT (edge_id, entity_id) DO UPDATE SET id = excluded.id, name = excluded.name, domain = excluded.domain, platform = excluded.platform,
      unique_id = excluded.unique_id, config_entry_id = excluded.config_entry_id, device_registry_id = excluded.device_registry_id, registered = 1,
      disabled_by = excluded.disabled_by`,
  /** a disabled entity has no state (as on the edge); enabling it brings the next state from the edge */
  dropDisabledState: `UPDATE mirror_entities SET state = NULL, attributes = '{}', last_changed = NULL, last_updated = NULL
    WHERE edge_id = ? AND entity_id = ? AND disabled_by IS NOT NULL`,
  /** a renamed entity (same registry id, new entity_id) leaves no stale row behind */
  dropRenamed: 'DELETE FROM mirror_entities WHERE edge_id = ? AND id = ? AND entity_id <> ?',
  /** a state keeps the entity's record; for an unknown entity it creates an unregistered row */
  upsertState: `INSERT INTO mirror_entities (edge_id, entity_id, name, domain, platform, registered, state, attributes, last_changed, last_updated)
    VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
    ON CONFLICT (edge_id, entity_id) DO UPDATE SET state = excluded.state, attributes = excluded.attributes,
      last_changed = excluded.last_changed, last_updated = excluded.last_updated`,
  upsertEntry: `INSERT INTO mirror_config_entries (${ENTRY_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (edge_id, id) DO UPDATE SET domain = excluded.domain, title = excluded.title, source = excluded.source,
      state = excluded.state, created_at = excluded.created_at`,
  upsertAutomation: `INSERT INTO mirror_automations (${AUTOMATION_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?)
    ON CONFLICT (edge_id, id) DO UPDATE SET alias = excluded.alias, enabled = excluded.enabled, mode = excluded.mode, webhook_id = excluded.webhook_id`,
  removeDevice: 'DELETE FROM mirror_devices WHERE edge_id = ? AND id = ?',
  removeEntity: 'DELETE FROM mirror_entities WHERE edge_id = ? AND entity_id = ?',
  removeEntry: 'DELETE FROM mirror_config_entries WHERE edge_id = ? AND id = ?',
  removeAutomation: 'DELETE FROM mirror_automations WHERE edge_id = ? AND id = ?',
  setSeq: `INSERT INTO mirror_sync (edge_id, seq, snapshot_at, updated_at, version) VALUES (?, ?, ?, ?, 1)
    ON CONFLICT (edge_id) DO UPDATE SET seq = excluded.seq, snapshot_at = COALESCE(excluded.snapshot_at, mirror_sync.snapshot_at),
      updated_at = excluded.updated_at, version = mirror_sync.version + 1`,
  /** a write without a sequence (the cloud's own, or a cleared mirror) still changes the version */
  bumpVersion: `INSERT INTO mirror_sync (edge_id, seq, snapshot_at, updated_at, version) VALUES (?, NULL, NULL, ?, 1)
    ON CONFLICT (edge_id) DO UPDATE SET updated_at = excluded.updated_at, version = mirror_sync.version + 1`,
  clearSync:
    'UPDATE mirror_sync SET seq = NULL, snapshot_at = NULL, updated_at = ?, version = version + 1 WHERE edge_id = ?',
  getSeq: 'SELECT seq FROM mirror_sync WHERE edge_id = ?',
} as const;

/** what a snapshot replaces; mirror_sync (sequence, version) outlives it */
const DATA_TABLES = ['mirror_devices', 'mirror_entities', 'mirror_config_entries', 'mirror_automations'] as const;
/** rows per multi-row INSERT of a snapshot: 15 columns × 200 stays far below both engines' parameter limits */
const CHUNK = 200;

/** `edge_id IN (?, ?, …)`; callers return early for an empty list (an empty IN list is not valid SQL everywhere). */
const inEdges = (edgeIds: readonly number[]) => `edge_id IN (${edgeIds.map(() => '?').join(', ')})`;

/**
 * The read mirror of each edge's registries and states. The tunnel calls replaceSnapshot on
 * (re)connect and applyDelta for each change; reads never go to the edge. Writes of one
 * snapshot or delta are one transaction. SQL here is portable (SQLite and PostgreSQL).
 */
export class MirrorStore {
  private readonly database: CloudDatabase;
  constructor(database: CloudDatabase) {
    this.database = database;
  }

  private run(sql: string, params: unknown[]): Promise<number> {
    return this.database.execute(sql, params);
  }

  /** Replaces everything mirrored for the edge by the snapshot; records `seq` when given. */
  async replaceSnapshot(edgeId: number, snapshot: Snapshot, seq: number | null = null): Promise<void> {
    // Records and states merge into one row per entity in memory, so each table is a few multi-row inserts.
    const entities = new Map<string, unknown[]>();
    for (const e of snapshot.entities) {
      entities.set(e.entity_id, [
        edgeId,
        e.entity_id,
        e.id,
        e.name,
        e.domain,
        e.platform,
        e.unique_id,
        e.config_entry_id,
        e.device_registry_id,
        1,
        null,
        '{}',
        null,
        null,
        e.disabled_by ?? null,
      ]);
    }
    for (const s of snapshot.states) {
      const row = entities.get(s.entity_id) ?? [
        edgeId,
        s.entity_id,
        null,
        s.name,
        s.domain,
        s.platform,
        null,
        null,
        null,
        0,
        null,
        '{}',
        null,
        null,
        null,
      ];
      row[10] = s.state;
      row[11] = json(s.attributes ?? {});
      row[12] = s.last_changed ?? null;
      row[13] = s.last_updated ?? null;
      entities.set(s.entity_id, row);
    }
    await this.database.atomic(async () => {
      for (const table of DATA_TABLES) await this.run(`DELETE FROM ${table} WHERE edge_id = ?`, [edgeId]);
      await this.insertRows(
        'mirror_devices',
        DEVICE_COLUMNS,
        snapshot.devices.map((d) => deviceRow(edgeId, d)),
      );
      await this.insertRows('mirror_entities', ENTITY_COLUMNS, [...entities.values()]);
      await this.insertRows(
        'mirror_config_entries',
        ENTRY_COLUMNS,
        snapshot.config_entries.map((c) => entryRow(edgeId, c)),
      );
      await this.insertRows(
        'mirror_automations',
        AUTOMATION_COLUMNS,
        snapshot.automations.map((a) => automationRow(edgeId, a)),
      );
      const at = new Date().toISOString();
      await this.run(SQL.setSeq, [edgeId, seq, at, at]);
    });
  }

  private async insertRows(table: string, columns: readonly string[], rows: unknown[][]): Promise<void> {
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK);
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
   * change) and records `lastSeq`, the sequence of the last one, when given.
   */
  async applyDeltas(
    edgeId: number,
    deltas: readonly Delta[],
    lastSeq: number | null = null,
  ): Promise<{ oldState: EntityState | null }[]> {
    return this.database.atomic(async () => {
      const out: { oldState: EntityState | null }[] = [];
      for (const delta of deltas) out.push({ oldState: await this.applyOne(edgeId, delta) });
      if (lastSeq !== null) await this.run(SQL.setSeq, [edgeId, lastSeq, null, new Date().toISOString()]);
      else await this.run(SQL.bumpVersion, [edgeId, new Date().toISOString()]);
      return out;
    });
  }

  private async applyOne(edgeId: number, delta: Delta): Promise<EntityState | null> {
    // a state change replaces the old state; disabling an entity removes it
    const oldState =
      delta.kind === 'state'
        ? await this.state([edgeId], delta.state.entity_id)
        : delta.kind === 'entity_upsert' && delta.entity.disabled_by
          ? await this.state([edgeId], delta.entity.entity_id)
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

  /** Last sequence recorded for the edge, or null (no snapshot yet, or none given). */
  async lastSeq(edgeId: number): Promise<number | null> {
    const row = await this.database.one<{ seq: number | null }>(SQL.getSeq, [edgeId]);
    return row?.seq ?? null;
  }

  /** Forgets everything mirrored for the edge (e.g. when it is revoked); its version keeps counting up. */
  async clear(edgeId: number): Promise<void> {
    await this.database.atomic(async () => {
      for (const table of DATA_TABLES) await this.run(`DELETE FROM ${table} WHERE edge_id = ?`, [edgeId]);
      await this.run(SQL.clearSync, [new Date().toISOString(), edgeId]);
    });
  }

  /** The mirror version of each given edge (0 for an edge never mirrored). */
  async versions(edgeIds: number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>(edgeIds.map((id) => [id, 0]));
    if (edgeIds.length === 0) return out;
    for (const r of await this.database.query<{ edge_id: number; version: number }>(
      `SELECT edge_id, version FROM mirror_sync WHERE ${inEdges(edgeIds)}`,
      edgeIds,
    )) {
      out.set(r.edge_id, r.version);
    }
    return out;
  }

  /** Totals over the given edges. */
  async counts(edgeIds: number[]): Promise<MirrorCounts> {
    if (edgeIds.length === 0) return { devices: 0, entities: 0, config_entries: 0, automations: 0 };
    const where = inEdges(edgeIds);
    const row = await this.database.one<MirrorCounts>(
      `SELECT
      (SELECT COUNT(*) FROM mirror_devices WHERE ${where}) AS devices,
      (SELECT COUNT(*) FROM mirror_entities WHERE ${where}) AS entities,
      (SELECT COUNT(*) FROM mirror_config_entries WHERE ${where}) AS config_entries,
      (SELECT COUNT(*) FROM mirror_automations WHERE ${where}) AS automations`,
      [...edgeIds, ...edgeIds, ...edgeIds, ...edgeIds],
    );
    return row!;
  }

  /** Device and entity counts per edge (edges without rows are absent). */
  async countsByEdge(edgeIds: number[]): Promise<Map<number, { devices: number; entities: number }>> {
    const out = new Map<number, { devices: number; entities: number }>();
    if (edgeIds.length === 0) return out;
    const at = (id: number) => {
      let v = out.get(id);
      if (!v) {
        v = { devices: 0, entities: 0 };
        out.set(id, v);
      }
      return v;
    };
    const where = inEdges(edgeIds);
    for (const r of await this.database.query<Row>(
      `SELECT edge_id, COUNT(*) AS n FROM mirror_devices WHERE ${where} GROUP BY edge_id`,
      edgeIds,
    ))
      at(r.edge_id).devices = r.n;
    for (const r of await this.database.query<Row>(
      `SELECT edge_id, COUNT(*) AS n FROM mirror_entities WHERE ${where} GROUP BY edge_id`,
      edgeIds,
    ))
      at(r.edge_id).entities = r.n;
    return out;
  }

  async devices(edgeIds: number[]): Promise<Device[]> {
    if (edgeIds.length === 0) return [];
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_devices WHERE ${inEdges(edgeIds)} ORDER BY edge_id, id`,
        edgeIds,
      )
    ).map(toDevice);
  }

  /** One device of an edge with its registered entities, or null. */
  async device(edgeId: number, id: number): Promise<{ device: Device; entities: EntityRecord[] } | null> {
    const row = await this.database.one<Row>('SELECT * FROM mirror_devices WHERE edge_id = ? AND id = ?', [edgeId, id]);
    if (!row) return null;
    const entities = await this.database.query<Row>(
      'SELECT * FROM mirror_entities WHERE edge_id = ? AND device_registry_id = ? AND registered = 1 ORDER BY entity_id',
      [edgeId, id],
    );
    return { device: toDevice(row), entities: entities.map(toEntityRecord) };
  }

  /** Which edge (of the given ones) holds a device id; device ids are only unique per edge. */
  async findDevice(edgeIds: number[], id: number): Promise<{ device: Device; entities: EntityRecord[] } | null> {
    if (edgeIds.length === 0) return null;
    const row = await this.database.one<Row>(
      `SELECT edge_id FROM mirror_devices WHERE ${inEdges(edgeIds)} AND id = ? ORDER BY edge_id LIMIT 1`,
      [...edgeIds, id],
    );
    return row ? this.device(row.edge_id, id) : null;
  }

  async entityRecords(edgeIds: number[]): Promise<EntityRecord[]> {
    if (edgeIds.length === 0) return [];
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_entities WHERE ${inEdges(edgeIds)} AND registered = 1 ORDER BY edge_id, entity_id`,
        edgeIds,
      )
    ).map(toEntityRecord);
  }

  /** The states of the given edges' enabled entities (a disabled one has none, as in HA). */
  async states(edgeIds: number[]): Promise<EntityState[]> {
    if (edgeIds.length === 0) return [];
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_entities WHERE ${inEdges(edgeIds)} AND disabled_by IS NULL ORDER BY edge_id, entity_id`,
        edgeIds,
      )
    ).map(toEntityState);
  }

  /** The state of one enabled entity on one of the given edges, or null. */
  async state(edgeIds: number[], entityId: string): Promise<EntityState | null> {
    if (edgeIds.length === 0) return null;
    const row = await this.database.one<Row>(
      `SELECT * FROM mirror_entities WHERE ${inEdges(edgeIds)} AND entity_id = ? AND disabled_by IS NULL ORDER BY edge_id LIMIT 1`,
      [...edgeIds, entityId],
    );
    return row ? toEntityState(row) : null;
  }

  async configEntries(edgeIds: number[]): Promise<ConfigEntry[]> {
    if (edgeIds.length === 0) return [];
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_config_entries WHERE ${inEdges(edgeIds)} ORDER BY edge_id, id`,
        edgeIds,
      )
    ).map((r) => ({
      id: r.id,
      domain: r.domain,
      title: r.title,
      source: r.source,
      state: r.state,
      created_at: r.created_at,
      edge_id: r.edge_id,
    }));
  }

  async automations(
    edgeIds: number[],
  ): Promise<
    { id: string; edge_id: number; alias: string; enabled: boolean; mode: string; webhook_id: string | null }[]
  > {
    if (edgeIds.length === 0) return [];
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_automations WHERE ${inEdges(edgeIds)} ORDER BY edge_id, id`,
        edgeIds,
      )
    ).map((r) => ({
      id: r.id,
      edge_id: r.edge_id,
      alias: r.alias,
      enabled: r.enabled === 1,
      mode: r.mode,
      webhook_id: r.webhook_id,
    }));
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
    ]);
    await this.run(SQL.dropDisabledState, [edgeId, e.entity_id]);
  }

  private async putState(edgeId: number, s: EntityState): Promise<void> {
    await this.run(SQL.upsertState, [
      edgeId,
      s.entity_id,
      s.name,
      s.domain,
      s.platform,
      s.state,
      json(s.attributes ?? {}),
      s.last_changed ?? null,
      s.last_updated ?? null,
    ]);
  }
}

function deviceRow(edgeId: number, d: Device): unknown[] {
  return [
    edgeId,
    d.id,
    d.name,
    d.manufacturer,
    d.model,
    d.sw_version ?? null,
    json(d.identifiers ?? []),
    d.config_entry_id,
    d.user_id,
    d.via_device_id ?? null,
  ];
}

function entryRow(edgeId: number, c: ConfigEntry): unknown[] {
  return [edgeId, c.id, c.domain, c.title, c.source, c.state, c.created_at];
}

function automationRow(edgeId: number, a: Snapshot['automations'][number]): unknown[] {
  return [edgeId, a.id, a.alias, bool(a.enabled), a.mode, a.webhook_id ?? null];
}

function toDevice(r: Row): Device {
  return {
    id: r.id,
    name: r.name,
    manufacturer: r.manufacturer,
    model: r.model,
    sw_version: r.sw_version,
    identifiers: parse<string[]>(r.identifiers, []),
    config_entry_id: r.config_entry_id,
    user_id: r.user_id,
    edge_id: r.edge_id,
    ...(r.via_device_id === null || r.via_device_id === undefined ? {} : { via_device_id: r.via_device_id }),
  };
}

function toEntityRecord(r: Row): EntityRecord {
  return {
    id: r.id,
    entity_id: r.entity_id,
    name: r.name,
    domain: r.domain,
    platform: r.platform,
    unique_id: r.unique_id ?? '',
    config_entry_id: r.config_entry_id,
    device_registry_id: r.device_registry_id,
    ...(r.disabled_by === 'integration' || r.disabled_by === 'user' ? { disabled_by: r.disabled_by } : {}),
  };
}

/** With no published state, attributes default to what the registry knows (friendly_name). */
function toEntityState(r: Row): EntityState {
  const attributes = parse<Record<string, unknown>>(r.attributes, {});
  return {
    entity_id: r.entity_id,
    name: r.name,
    domain: r.domain,
    platform: r.platform,
    state: r.state,
    attributes: r.state === null && Object.keys(attributes).length === 0 ? { friendly_name: r.name } : attributes,
    last_changed: r.last_changed,
    last_updated: r.last_updated,
    edge_id: r.edge_id,
  };
}
