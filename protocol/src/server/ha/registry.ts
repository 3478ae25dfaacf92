import type { Device, EntityRecord } from '../../devices.ts';
import type { HaAreaRegistryEntry, HaDeviceRegistryEntry, HaEntityRegistryEntry } from '../../ha/index.ts';

/**
 * How a registry row's numeric id (device, entity, config entry) is shown: the edge shows the
 * number, the cloud prefixes the edge (ids are per edge there).
 */
export type RegistryIdOf = (id: number | null | undefined) => string | null;
export const localRegistryId: RegistryIdOf = (id) => (id === null || id === undefined ? null : String(id));
/** How an area id is shown: the edge's own, or (cloud) prefixed with the edge. */
export type AreaIdOf = (areaId: string | null | undefined) => string | null;
export const localAreaId: AreaIdOf = (areaId) => areaId ?? null;

/** An entity registry row as HA's config/entity_registry/list shows it. */
export function toHaEntityEntry(
  e: EntityRecord,
  idOf: RegistryIdOf = localRegistryId,
  areaOf: AreaIdOf = localAreaId,
): HaEntityRegistryEntry {
  return {
    id: idOf(e.id)!,
    entity_id: e.entity_id,
    unique_id: e.unique_id,
    platform: e.platform,
    config_entry_id: idOf(e.config_entry_id),
    device_id: idOf(e.device_registry_id),
    area_id: areaOf(e.area_id),
    name: e.name_by_user ?? null,
    original_name: e.name,
    icon: e.icon ?? null,
    disabled_by: e.disabled_by ?? null,
    hidden_by: e.hidden_by ?? null,
    entity_category: e.entity_category ?? null,
    has_entity_name: false,
    translation_key: null,
    labels: [],
    categories: {},
  };
}

export interface HaDeviceEntryOptions {
  idOf?: RegistryIdOf;
  /** the integration the identifiers belong to (HA's [domain, id] pairs) */
  identifierDomain?: string;
  areaOf?: AreaIdOf;
}

/** A device registry row as HA's config/device_registry/list shows it. */
export function toHaDeviceEntry(d: Device, options: HaDeviceEntryOptions = {}): HaDeviceRegistryEntry {
  const { idOf = localRegistryId, identifierDomain = 'mqtt', areaOf = localAreaId } = options;
  const entry = idOf(d.config_entry_id);
  return {
    id: idOf(d.id)!,
    name: d.name,
    name_by_user: null,
    manufacturer: d.manufacturer,
    model: d.model,
    model_id: null,
    sw_version: d.sw_version ?? null,
    hw_version: null,
    serial_number: null,
    identifiers: (d.identifiers ?? []).map((i) => [identifierDomain, i] as [string, string]),
    connections: [],
    config_entries: entry ? [entry] : [],
    primary_config_entry: entry,
    area_id: areaOf(d.area_id),
    via_device_id: idOf(d.via_device_id),
    disabled_by: null,
    entry_type: null,
    configuration_url: null,
    labels: [],
  };
}

/** An area as HA's config/area_registry/list shows it. */
export function toHaAreaEntry(
  a: { area_id: string; name: string },
  areaOf: AreaIdOf = localAreaId,
): HaAreaRegistryEntry {
  return {
    area_id: areaOf(a.area_id)!,
    name: a.name,
    aliases: [],
    floor_id: null,
    icon: null,
    labels: [],
    picture: null,
  };
}
