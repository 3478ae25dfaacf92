import type { Device, EntityRecord } from '@smarthome/protocol';
import type { devices, entities } from '../db/schema.ts';
import { intern } from '../intern.ts';

/** An entity registry row: the wire record plus the platform's own settings. */
export interface RegistryEntity extends EntityRecord {
  config: Record<string, unknown>;
  /** HA's disabled_by: null when enabled; a disabled entity has no state */
  disabled_by: DisabledBy | null;
  entity_category: EntityCategory | null;
  area_id: string | null;
  name_by_user: string | null;
  icon: string | null;
  hidden_by: DisabledBy | null;
}

export type DisabledBy = 'integration' | 'user';
export type EntityCategory = 'config' | 'diagnostic';

/** What the user may change of an entity (HA's config/entity_registry/update); null clears. */
export interface EntitySettings {
  name_by_user?: string | null;
  icon?: string | null;
  area_id?: string | null;
  hidden_by?: DisabledBy | null;
}

export interface DeviceInput {
  identifiers: string[];
  name: string;
  manufacturer?: string | null;
  model?: string | null;
  sw_version?: string | null;
  config_entry_id?: number | null;
  /** an identifier of the device this one connects through (HA's via_device; created when unknown) */
  via_device?: string | null;
  /** HA's suggested_area: the device goes into that area (created when missing) while it has none */
  suggested_area?: string | null;
}

/** What HA's device registry keeps besides the wire Device: the parent device and the area. */
export interface DeviceLinks {
  via_device_id: number | null;
  area_id: string | null;
}

export interface EntityInput {
  platform: string;
  unique_id: string;
  domain: string;
  name: string;
  /** object id to derive entity_id from on creation (slugified); entity_id never changes afterwards */
  suggested_object_id: string;
  config_entry_id?: number | null;
  device_registry_id?: number | null;
  config?: Record<string, unknown>;
  /** only when the entity is created (HA's enabled_by_default); afterwards setDisabledBy decides */
  disabled_by?: DisabledBy | null;
  /** the integration's (kept up to date on every upsert, as HA does) */
  entity_category?: EntityCategory | null;
}

/** Entity object ids as HA makes them from a name. */
export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return slug || 'unnamed';
}

export function toDevice(row: typeof devices.$inferSelect): Device {
  return {
    id: row.id,
    name: row.name,
    manufacturer: row.manufacturer,
    model: row.model,
    sw_version: row.swVersion,
    identifiers: row.identifiers,
    config_entry_id: row.configEntryId,
    user_id: row.userId,
  };
}

const BY = ['integration', 'user'] as const;
const CATEGORIES = ['config', 'diagnostic'] as const;
const oneOf = <T extends string>(v: string | null, allowed: readonly T[]): T | null =>
  allowed.includes(v as T) ? (v as T) : null;

export function toEntity(row: typeof entities.$inferSelect): RegistryEntity {
  return {
    id: row.id,
    entity_id: row.entityId,
    name: row.name,
    // one copy of "sensor", "mqtt" … for all rows
    domain: intern(row.domain),
    platform: intern(row.platform),
    unique_id: row.uniqueId,
    config_entry_id: row.configEntryId,
    device_registry_id: row.deviceRegistryId,
    config: row.config,
    disabled_by: oneOf(row.disabledBy, BY),
    entity_category: oneOf(row.entityCategory, CATEGORIES),
    area_id: row.areaId,
    name_by_user: row.nameByUser,
    icon: row.icon,
    hidden_by: oneOf(row.hiddenBy, BY),
  };
}

export function toRecord(e: RegistryEntity): EntityRecord {
  return {
    id: e.id,
    entity_id: e.entity_id,
    name: e.name,
    domain: e.domain,
    platform: e.platform,
    unique_id: e.unique_id,
    config_entry_id: e.config_entry_id,
    device_registry_id: e.device_registry_id,
    // only what is set: a record without settings keeps its old shape (absent means unset)
    ...(e.disabled_by ? { disabled_by: e.disabled_by } : {}),
    ...(e.entity_category ? { entity_category: e.entity_category } : {}),
    ...(e.area_id ? { area_id: e.area_id } : {}),
    ...(e.name_by_user !== null ? { name_by_user: e.name_by_user } : {}),
    ...(e.icon ? { icon: e.icon } : {}),
    ...(e.hidden_by ? { hidden_by: e.hidden_by } : {}),
  };
}
