import type { ConfigEntry, Device, EntityRecord, EntityState, tunnel } from '@smarthome/protocol';

/** Conversions between the wire records and the mirror's rows. */

type Row = Record<string, any>;
type Snapshot = tunnel.Snapshot;

export const json = (v: unknown) => JSON.stringify(v ?? null);
export function parse<T>(text: string | null, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
export const bool = (v: boolean) => (v ? 1 : 0);

/** A state change's parameters for `SQL.upsertState` (one row of state-batch.ts's multi-row upsert). */
export function stateRow(edgeId: number, s: EntityState): unknown[] {
  return [
    edgeId,
    s.entity_id,
    s.name,
    s.domain,
    s.platform,
    s.state,
    json(s.attributes ?? {}),
    s.last_changed ?? null,
    s.last_updated ?? null,
  ];
}

export function deviceRow(edgeId: number, d: Device): unknown[] {
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
    d.area_id ?? null,
  ];
}

/** The record's registry settings that are set, as JSON (null when none). */
export function settingsOf(e: EntityRecord): string | null {
  const set = Object.fromEntries(
    (['entity_category', 'area_id', 'name_by_user', 'icon', 'hidden_by'] as const)
      .filter((k) => e[k] !== null && e[k] !== undefined)
      .map((k) => [k, e[k]]),
  );
  return Object.keys(set).length ? JSON.stringify(set) : null;
}

export function entryRow(edgeId: number, c: ConfigEntry): unknown[] {
  return [edgeId, c.id, c.domain, c.title, c.source, c.state, c.created_at];
}

export function automationRow(edgeId: number, a: Snapshot['automations'][number]): unknown[] {
  return [edgeId, a.id, a.alias, bool(a.enabled), a.mode, a.webhook_id ?? null];
}

export function toDevice(r: Row): Device {
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
    ...(r.area_id ? { area_id: r.area_id } : {}),
  };
}

export function toEntityRecord(r: Row): EntityRecord {
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
    ...parse<Partial<EntityRecord>>(r.settings, {}),
  };
}

/** With no published state, attributes default to what the registry knows (friendly_name). */
export function toEntityState(r: Row): EntityState {
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

/** A snapshot's records and states merged into one row per entity (ENTITY_COLUMNS), so the table is a few multi-row inserts. */
export function snapshotEntityRows(edgeId: number, snapshot: Snapshot): unknown[][] {
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
      settingsOf(e),
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
      null,
    ];
    row[10] = s.state;
    row[11] = json(s.attributes ?? {});
    row[12] = s.last_changed ?? null;
    row[13] = s.last_updated ?? null;
    entities.set(s.entity_id, row);
  }
  return [...entities.values()];
}
