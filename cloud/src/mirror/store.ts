import type { Statement } from 'better-sqlite3';
import type Database from 'better-sqlite3';
import type { ConfigEntry, Device, EntityRecord, EntityState, tunnel } from '@smarthome/protocol';
import type { CloudDatabase } from '../db/database.ts';

type Snapshot = tunnel.Snapshot;
type Delta = tunnel.Delta;
type Row = Record<string, any>;

export interface MirrorCounts { devices: number; entities: number; config_entries: number; automations: number }

const json = (v: unknown) => JSON.stringify(v ?? null);
function parse<T>(text: string | null, fallback: T): T {
  if (!text) return fallback;
  try { return JSON.parse(text) as T; } catch { return fallback; }
}
const bool = (v: boolean) => (v ? 1 : 0);

const SQL = {
  upsertDevice: `INSERT INTO mirror_devices (edge_id, id, name, manufacturer, model, sw_version, identifiers, config_entry_id, user_id)
    VALUES (@edge_id, @id, @name, @manufacturer, @model, @sw_version, @identifiers, @config_entry_id, @user_id)
    ON CONFLICT (edge_id, id) DO UPDATE SET name = excluded.name, manufacturer = excluded.manufacturer, model = excluded.model,
      sw_version = excluded.sw_version, identifiers = excluded.identifiers, config_entry_id = excluded.config_entry_id, user_id = excluded.user_id`,
  /** a record keeps the entity's state */
  upsertEntity: `INSERT INTO mirror_entities (edge_id, entity_id, id, name, domain, platform, unique_id, config_entry_id, device_registry_id, registered)
    VALUES (@edge_id, @entity_id, @id, @name, @domain, @platform, @unique_id, @config_entry_id, @device_registry_id, 1)
    ON CONFLICT (edge_id, entity_id) DO UPDATE SET id = excluded.id, name = excluded.name, domain = excluded.domain, platform = excluded.platform,
      unique_id = excluded.unique_id, config_entry_id = excluded.config_entry_id, device_registry_id = excluded.device_registry_id, registered = 1`,
  /** a renamed entity (same registry id, new entity_id) leaves no stale row behind */
  dropRenamed: 'DELETE FROM mirror_entities WHERE edge_id = ? AND id = ? AND entity_id <> ?',
  /** a state keeps the entity's record; for an unknown entity it creates an unregistered row */
  upsertState: `INSERT INTO mirror_entities (edge_id, entity_id, name, domain, platform, registered, state, attributes, last_changed, last_updated)
    VALUES (@edge_id, @entity_id, @name, @domain, @platform, 0, @state, @attributes, @last_changed, @last_updated)
    ON CONFLICT (edge_id, entity_id) DO UPDATE SET state = excluded.state, attributes = excluded.attributes,
      last_changed = excluded.last_changed, last_updated = excluded.last_updated`,
  upsertEntry: `INSERT INTO mirror_config_entries (edge_id, id, domain, title, source, state, created_at)
    VALUES (@edge_id, @id, @domain, @title, @source, @state, @created_at)
    ON CONFLICT (edge_id, id) DO UPDATE SET domain = excluded.domain, title = excluded.title, source = excluded.source,
      state = excluded.state, created_at = excluded.created_at`,
  upsertAutomation: `INSERT INTO mirror_automations (edge_id, id, alias, enabled, mode, webhook_id)
    VALUES (@edge_id, @id, @alias, @enabled, @mode, @webhook_id)
    ON CONFLICT (edge_id, id) DO UPDATE SET alias = excluded.alias, enabled = excluded.enabled, mode = excluded.mode, webhook_id = excluded.webhook_id`,
  removeDevice: 'DELETE FROM mirror_devices WHERE edge_id = ? AND id = ?',
  removeEntity: 'DELETE FROM mirror_entities WHERE edge_id = ? AND entity_id = ?',
  removeEntry: 'DELETE FROM mirror_config_entries WHERE edge_id = ? AND id = ?',
  removeAutomation: 'DELETE FROM mirror_automations WHERE edge_id = ? AND id = ?',
  setSeq: `INSERT INTO mirror_sync (edge_id, seq, snapshot_at, updated_at) VALUES (@edge_id, @seq, @snapshot_at, @updated_at)
    ON CONFLICT (edge_id) DO UPDATE SET seq = excluded.seq, snapshot_at = COALESCE(excluded.snapshot_at, mirror_sync.snapshot_at), updated_at = excluded.updated_at`,
  getSeq: 'SELECT seq FROM mirror_sync WHERE edge_id = ?',
} as const;

const TABLES = ['mirror_devices', 'mirror_entities', 'mirror_config_entries', 'mirror_automations', 'mirror_sync'] as const;
const IN_EDGES = 'edge_id IN (SELECT value FROM json_each(?))';

/**
 * The read mirror of each edge's registries and states. The tunnel calls replaceSnapshot on
 * (re)connect and applyDelta for each change; reads never go to the edge. Writes of one
 * snapshot or delta are one transaction. Prepared statements are cached per connection.
 */
export class MirrorStore {
  private readonly database: CloudDatabase;
  private cache = new Map<string, Statement>();
  private cachedFor: Database.Database | null = null;
  constructor(database: CloudDatabase) {
    this.database = database;
  }

  private stmt(sql: string): Statement {
    const raw = this.database.raw;
    if (raw !== this.cachedFor) { this.cache = new Map(); this.cachedFor = raw; }
    let s = this.cache.get(sql);
    if (!s) { s = raw.prepare(sql); this.cache.set(sql, s); }
    return s;
  }

  private tx<T>(fn: () => T): T {
    const raw = this.database.raw;
    return raw.inTransaction ? fn() : raw.transaction(fn)();
  }

  /** Replaces everything mirrored for the edge by the snapshot; records `seq` when given. */
  replaceSnapshot(edgeId: number, snapshot: Snapshot, seq: number | null = null): void {
    this.tx(() => {
      for (const table of TABLES) if (table !== 'mirror_sync') this.stmt(`DELETE FROM ${table} WHERE edge_id = ?`).run(edgeId);
      for (const d of snapshot.devices) this.putDevice(edgeId, d);
      for (const e of snapshot.entities) this.putEntity(edgeId, e, false);
      for (const s of snapshot.states) this.putState(edgeId, s);
      for (const c of snapshot.config_entries) this.putEntry(edgeId, c);
      for (const a of snapshot.automations) this.putAutomation(edgeId, a);
      const at = new Date().toISOString();
      this.stmt(SQL.setSeq).run({ edge_id: edgeId, seq, snapshot_at: at, updated_at: at });
    });
  }

  /** Applies one change; records `seq` when given. */
  applyDelta(edgeId: number, delta: Delta, seq: number | null = null): void {
    this.tx(() => {
      switch (delta.kind) {
        case 'state': this.putState(edgeId, delta.state); break;
        case 'device_upsert': this.putDevice(edgeId, delta.device); break;
        case 'device_remove': this.stmt(SQL.removeDevice).run(edgeId, delta.id); break;
        case 'entity_upsert': this.putEntity(edgeId, delta.entity); break;
        case 'entity_remove': this.stmt(SQL.removeEntity).run(edgeId, delta.entity_id); break;
        case 'config_entry_upsert': this.putEntry(edgeId, delta.entry); break;
        case 'config_entry_remove': this.stmt(SQL.removeEntry).run(edgeId, delta.id); break;
        case 'automation_upsert': this.putAutomation(edgeId, delta.automation); break;
        case 'automation_remove': this.stmt(SQL.removeAutomation).run(edgeId, delta.id); break;
      }
      if (seq !== null) this.stmt(SQL.setSeq).run({ edge_id: edgeId, seq, snapshot_at: null, updated_at: new Date().toISOString() });
    });
  }

  /** Last sequence recorded for the edge, or null (no snapshot yet, or none given). */
  lastSeq(edgeId: number): number | null {
    const row = this.stmt(SQL.getSeq).get(edgeId) as { seq: number | null } | undefined;
    return row?.seq ?? null;
  }

  /** Forgets everything mirrored for the edge (e.g. when it is revoked). */
  clear(edgeId: number): void {
    this.tx(() => { for (const table of TABLES) this.stmt(`DELETE FROM ${table} WHERE edge_id = ?`).run(edgeId); });
  }

  /** Totals over the given edges. */
  counts(edgeIds: number[]): MirrorCounts {
    const ids = json(edgeIds);
    const row = this.stmt(`SELECT
      (SELECT COUNT(*) FROM mirror_devices WHERE ${IN_EDGES}) AS devices,
      (SELECT COUNT(*) FROM mirror_entities WHERE ${IN_EDGES}) AS entities,
      (SELECT COUNT(*) FROM mirror_config_entries WHERE ${IN_EDGES}) AS config_entries,
      (SELECT COUNT(*) FROM mirror_automations WHERE ${IN_EDGES}) AS automations`).get(ids, ids, ids, ids) as MirrorCounts;
    return row;
  }

  /** Device and entity counts per edge (edges without rows are absent). */
  countsByEdge(edgeIds: number[]): Map<number, { devices: number; entities: number }> {
    const out = new Map<number, { devices: number; entities: number }>();
    const ids = json(edgeIds);
    const at = (id: number) => { let v = out.get(id); if (!v) { v = { devices: 0, entities: 0 }; out.set(id, v); } return v; };
    for (const r of this.stmt(`SELECT edge_id, COUNT(*) AS n FROM mirror_devices WHERE ${IN_EDGES} GROUP BY edge_id`).all(ids) as Row[]) at(r.edge_id).devices = r.n;
    for (const r of this.stmt(`SELECT edge_id, COUNT(*) AS n FROM mirror_entities WHERE ${IN_EDGES} GROUP BY edge_id`).all(ids) as Row[]) at(r.edge_id).entities = r.n;
    return out;
  }

  devices(edgeIds: number[]): Device[] {
    return (this.stmt(`SELECT * FROM mirror_devices WHERE ${IN_EDGES} ORDER BY edge_id, id`).all(json(edgeIds)) as Row[]).map(toDevice);
  }

  /** One device of an edge with its registered entities, or null. */
  device(edgeId: number, id: number): { device: Device; entities: EntityRecord[] } | null {
    const row = this.stmt('SELECT * FROM mirror_devices WHERE edge_id = ? AND id = ?').get(edgeId, id) as Row | undefined;
    if (!row) return null;
    const entities = this.stmt('SELECT * FROM mirror_entities WHERE edge_id = ? AND device_registry_id = ? AND registered = 1 ORDER BY entity_id')
      .all(edgeId, id) as Row[];
    return { device: toDevice(row), entities: entities.map(toEntityRecord) };
  }

  /** Which edge (of the given ones) holds a device id; device ids are only unique per edge. */
  findDevice(edgeIds: number[], id: number): { device: Device; entities: EntityRecord[] } | null {
    const row = this.stmt(`SELECT edge_id FROM mirror_devices WHERE ${IN_EDGES} AND id = ? ORDER BY edge_id LIMIT 1`).get(json(edgeIds), id) as Row | undefined;
    return row ? this.device(row.edge_id, id) : null;
  }

  entityRecords(edgeIds: number[]): EntityRecord[] {
    return (this.stmt(`SELECT * FROM mirror_entities WHERE ${IN_EDGES} AND registered = 1 ORDER BY edge_id, entity_id`).all(json(edgeIds)) as Row[]).map(toEntityRecord);
  }

  states(edgeIds: number[]): EntityState[] {
    return (this.stmt(`SELECT * FROM mirror_entities WHERE ${IN_EDGES} ORDER BY edge_id, entity_id`).all(json(edgeIds)) as Row[]).map(toEntityState);
  }

  /** The state of one entity on one of the given edges, or null. */
  state(edgeIds: number[], entityId: string): EntityState | null {
    const row = this.stmt(`SELECT * FROM mirror_entities WHERE ${IN_EDGES} AND entity_id = ? ORDER BY edge_id LIMIT 1`).get(json(edgeIds), entityId) as Row | undefined;
    return row ? toEntityState(row) : null;
  }

  configEntries(edgeIds: number[]): ConfigEntry[] {
    return (this.stmt(`SELECT * FROM mirror_config_entries WHERE ${IN_EDGES} ORDER BY edge_id, id`).all(json(edgeIds)) as Row[]).map((r) => ({
      id: r.id, domain: r.domain, title: r.title, source: r.source, state: r.state, created_at: r.created_at, edge_id: r.edge_id,
    }));
  }

  automations(edgeIds: number[]): { id: string; edge_id: number; alias: string; enabled: boolean; mode: string; webhook_id: string | null }[] {
    return (this.stmt(`SELECT * FROM mirror_automations WHERE ${IN_EDGES} ORDER BY edge_id, id`).all(json(edgeIds)) as Row[]).map((r) => ({
      id: r.id, edge_id: r.edge_id, alias: r.alias, enabled: r.enabled === 1, mode: r.mode, webhook_id: r.webhook_id,
    }));
  }

  private putDevice(edgeId: number, d: Device): void {
    this.stmt(SQL.upsertDevice).run({
      edge_id: edgeId, id: d.id, name: d.name, manufacturer: d.manufacturer, model: d.model, sw_version: d.sw_version ?? null,
      identifiers: json(d.identifiers ?? []), config_entry_id: d.config_entry_id, user_id: d.user_id,
    });
  }

  private putEntity(edgeId: number, e: EntityRecord, mayBeRenamed = true): void {
    if (mayBeRenamed) this.stmt(SQL.dropRenamed).run(edgeId, e.id, e.entity_id);
    this.stmt(SQL.upsertEntity).run({
      edge_id: edgeId, entity_id: e.entity_id, id: e.id, name: e.name, domain: e.domain, platform: e.platform,
      unique_id: e.unique_id, config_entry_id: e.config_entry_id, device_registry_id: e.device_registry_id,
    });
  }

  private putState(edgeId: number, s: EntityState): void {
    this.stmt(SQL.upsertState).run({
      edge_id: edgeId, entity_id: s.entity_id, name: s.name, domain: s.domain, platform: s.platform, state: s.state,
      attributes: json(s.attributes ?? {}), last_changed: s.last_changed ?? null, last_updated: s.last_updated ?? null,
    });
  }

  private putEntry(edgeId: number, c: ConfigEntry): void {
    this.stmt(SQL.upsertEntry).run({ edge_id: edgeId, id: c.id, domain: c.domain, title: c.title, source: c.source, state: c.state, created_at: c.created_at });
  }

  private putAutomation(edgeId: number, a: Snapshot['automations'][number]): void {
    this.stmt(SQL.upsertAutomation).run({ edge_id: edgeId, id: a.id, alias: a.alias, enabled: bool(a.enabled), mode: a.mode, webhook_id: a.webhook_id ?? null });
  }
}

function toDevice(r: Row): Device {
  return {
    id: r.id, name: r.name, manufacturer: r.manufacturer, model: r.model, sw_version: r.sw_version,
    identifiers: parse<string[]>(r.identifiers, []), config_entry_id: r.config_entry_id, user_id: r.user_id, edge_id: r.edge_id,
  };
}

function toEntityRecord(r: Row): EntityRecord {
  return {
    id: r.id, entity_id: r.entity_id, name: r.name, domain: r.domain, platform: r.platform, unique_id: r.unique_id ?? '',
    config_entry_id: r.config_entry_id, device_registry_id: r.device_registry_id,
  };
}

/** With no published state, attributes default to what the registry knows (friendly_name). */
function toEntityState(r: Row): EntityState {
  const attributes = parse<Record<string, unknown>>(r.attributes, {});
  return {
    entity_id: r.entity_id, name: r.name, domain: r.domain, platform: r.platform, state: r.state,
    attributes: r.state === null && Object.keys(attributes).length === 0 ? { friendly_name: r.name } : attributes,
    last_changed: r.last_changed, last_updated: r.last_updated, edge_id: r.edge_id,
  };
}
