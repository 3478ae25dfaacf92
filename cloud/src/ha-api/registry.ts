import type { EntityRecord } from '@smarthome/protocol';
import type { HaAreaRegistryEntry, HaDeviceRegistryEntry, HaEntityRegistryEntry } from '@smarthome/protocol/ha/index';
import {
  HaCommandError,
  toHaAreaEntry,
  toHaDeviceEntry,
  toHaEntityEntry,
  type AreaIdOf,
  type RegistryIdOf,
} from '@smarthome/protocol/server/ha/index';
import type { MirrorStore } from '../mirror/store.ts';
import type { Scope } from './relay.ts';

const key = (edgeId: number, entityId: string) => `${edgeId}:${entityId}`;
/** registry ids are per edge on the cloud: "<edge>_<id>" keeps them unique across the caller's edges */
export const cloudIdOf =
  (edgeId: number): RegistryIdOf =>
  (id) =>
    id === null || id === undefined ? null : `${edgeId}_${id}`;
/** area ids too: every edge has its own "living_room", so the cloud shows "<edge>_living_room" */
export const cloudAreaOf =
  (edgeId: number): AreaIdOf =>
  (areaId) =>
    areaId ? `${edgeId}_${areaId}` : null;

/** The entity records the caller sees, by edge: all of a whole edge's, the shared ones of others. */
async function visibleRecords(mirror: MirrorStore, scope: Scope): Promise<Map<number, EntityRecord[]>> {
  const edgeIds = [...new Set([...scope.edges.map((e) => e.edgeId), ...scope.shared.map((g) => g.edgeId)])];
  const whole = new Set(scope.edges.map((e) => e.edgeId));
  const shared = new Set(scope.shared.map((g) => key(g.edgeId, g.entityId)));
  const records = new Map<number, EntityRecord[]>();
  for (const edgeId of edgeIds) {
    const list = await mirror.entityRecords([edgeId]);
    records.set(
      edgeId,
      list.filter((e) => whole.has(edgeId) || shared.has(key(edgeId, e.entity_id))),
    );
  }
  return records;
}

/**
 * HA's registries for a cloud caller, from the mirror. An entity is listed from its record, not
 * its state: a disabled entity has no state but is registered. As with states, an entity_id on
 * several edges is the lowest edge's.
 */
export async function entityRegistry(mirror: MirrorStore, scope: Scope): Promise<HaEntityRegistryEntry[]> {
  const records = await visibleRecords(mirror, scope);
  const owner = new Map<string, number>();
  for (const [edgeId, list] of records)
    for (const e of list) owner.set(e.entity_id, Math.min(owner.get(e.entity_id) ?? edgeId, edgeId));
  const out: HaEntityRegistryEntry[] = [];
  for (const [edgeId, list] of records)
    for (const e of list)
      if (owner.get(e.entity_id) === edgeId) out.push(toHaEntityEntry(e, cloudIdOf(edgeId), cloudAreaOf(edgeId)));
  return out;
}

/** Devices of the whole edges in scope (a shared entity does not share its device). */
export async function deviceRegistry(mirror: MirrorStore, scope: Scope): Promise<HaDeviceRegistryEntry[]> {
  return (await mirror.devices(scope.edges.map((e) => e.edgeId))).map((d) =>
    toHaDeviceEntry(d, { idOf: cloudIdOf(d.edge_id ?? 0), areaOf: cloudAreaOf(d.edge_id ?? 0) }),
  );
}

/** The areas of the whole edges in scope; of an edge that only shares entities, the areas those entities are in. */
export async function areaRegistry(mirror: MirrorStore, scope: Scope): Promise<HaAreaRegistryEntry[]> {
  const whole = new Set(scope.edges.map((e) => e.edgeId));
  const records = await visibleRecords(mirror, scope);
  const out: HaAreaRegistryEntry[] = [];
  for (const a of await mirror.areas([...records.keys()])) {
    const used = whole.has(a.edge_id) || records.get(a.edge_id)!.some((e) => e.area_id === a.area_id);
    if (used) out.push(toHaAreaEntry(a, cloudAreaOf(a.edge_id)));
  }
  return out;
}

/**
 * The edge of an entity the caller may change in the registry: a whole edge's (the lowest
 * holding it), or a share with control or edit; not_found when invisible, unauthorized when view-only.
 */
export async function editableEntityEdge(mirror: MirrorStore, scope: Scope, entityId: string): Promise<number> {
  for (const { edgeId } of [...scope.edges].sort((a, b) => a.edgeId - b.edgeId))
    if ((await mirror.entityRecords([edgeId])).some((e) => e.entity_id === entityId)) return edgeId;
  const grant = scope.shared.filter((g) => g.entityId === entityId).sort((a, b) => a.edgeId - b.edgeId)[0];
  if (!grant) throw new HaCommandError('not_found', 'Entity not found');
  if (!grant.canControl && !grant.canEdit)
    throw new HaCommandError('unauthorized', 'Not allowed to change this entity (view-only).');
  return grant.edgeId;
}

/** The caller's area id ("<edge>_<area>") as the edge knows it; an area of another edge is not found. */
export function edgeAreaId(edgeId: number, areaId: string | null | undefined): string | null | undefined {
  if (areaId === null || areaId === undefined) return areaId;
  const prefix = `${edgeId}_`;
  if (!areaId.startsWith(prefix) || areaId.length === prefix.length)
    throw new HaCommandError('not_found', `Area not found: ${areaId}`);
  return areaId.slice(prefix.length);
}

/** The edge's answer to an update, with the cloud's ids. */
export function cloudEntityEntry(edgeId: number, e: HaEntityRegistryEntry): HaEntityRegistryEntry {
  const idOf = (id: string | null) => (id === null ? null : `${edgeId}_${id}`);
  return {
    ...e,
    id: idOf(e.id)!,
    config_entry_id: idOf(e.config_entry_id),
    device_id: idOf(e.device_id),
    area_id: idOf(e.area_id),
  };
}
