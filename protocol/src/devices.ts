import { z } from 'zod';
import { JsonObject, Timestamp } from './common.ts';

export const Device = z
  .object({
    id: z.number().int(),
    name: z.string(),
    manufacturer: z.string().nullable(),
    model: z.string().nullable(),
    sw_version: z.string().nullable().optional(),
    identifiers: z.array(z.string()).optional(),
    config_entry_id: z.number().int().nullable(),
    user_id: z.string().nullable(),
    edge_id: z.number().int().nullable().optional(),
    /** the device it connects through (HA's via_device_id), by id on the same edge; absent: none */
    via_device_id: z.number().int().nullable().optional(),
    /** the area it is in (HA's area_id), an area of the same edge; absent: none */
    area_id: z.string().nullable().optional(),
  })
  .meta({ id: 'Device' });

/** An area of an edge's area registry (HA's area_id: a slug of the name, unique per edge). */
export const Area = z.object({ area_id: z.string(), name: z.string() }).meta({ id: 'Area' });

export const EntityRecord = z
  .object({
    id: z.number().int(),
    entity_id: z.string(),
    name: z.string(),
    domain: z.string(),
    platform: z.string(),
    unique_id: z.string(),
    config_entry_id: z.number().int().nullable(),
    device_registry_id: z.number().int().nullable(),
    /** HA's entity registry disabled_by ("integration", "user"); absent or null: enabled. A disabled entity has no state. */
    disabled_by: z.enum(['integration', 'user']).nullable().optional(),
    // HA's entity registry settings; absent or null: not set (older edges send none of them)
    /** "config" or "diagnostic" (the integration's, e.g. MQTT discovery's entity_category) */
    entity_category: z.enum(['config', 'diagnostic']).nullable().optional(),
    /** the entity's own area (overrides its device's), an area of the same edge */
    area_id: z.string().nullable().optional(),
    /** the name the user gave it (HA's registry `name`); `name` stays the integration's */
    name_by_user: z.string().nullable().optional(),
    /** the icon the user gave it */
    icon: z.string().nullable().optional(),
    hidden_by: z.enum(['integration', 'user']).nullable().optional(),
  })
  .meta({ id: 'EntityRecord' });

export const DeviceWithEntities = z
  .object({ device: Device, entities: z.array(EntityRecord) })
  .meta({ id: 'DeviceWithEntities' });

export const EntityState = z
  .object({
    entity_id: z.string(),
    name: z.string(),
    domain: z.string(),
    platform: z.string(),
    state: z.string().nullable(),
    attributes: JsonObject,
    last_changed: Timestamp.nullable().optional(),
    last_updated: Timestamp.nullable().optional(),
    edge_id: z.number().int().nullable().optional(),
  })
  .meta({ id: 'EntityState' });

export const EntityIdParam = z
  .string()
  .regex(/^[a-z0-9_]+\.[a-z0-9_]+$/, 'entity_id must look like <domain>.<object_id>');
export const ServiceName = z.string().regex(/^[a-z0-9_]+$/);

/** `POST /v1/services/{domain}/{service}`: `{entity_id, ...data}`. */
export const ServiceCallBody = z
  .looseObject({
    entity_id: z.union([EntityIdParam, z.array(EntityIdParam).min(1).max(500)]),
  })
  .meta({ id: 'ServiceCall' });
export const ServiceCallResult = z
  .object({
    changed_states: z.array(EntityState),
  })
  .meta({ id: 'ServiceCallResult' });

export const ConfigEntry = z
  .object({
    id: z.number().int(),
    domain: z.string(),
    title: z.string(),
    source: z.string(),
    state: z.string(),
    created_at: Timestamp,
    edge_id: z.number().int().nullable().optional(),
  })
  .meta({ id: 'ConfigEntry' });

export type Device = z.infer<typeof Device>;
export type Area = z.infer<typeof Area>;
export type EntityRecord = z.infer<typeof EntityRecord>;
export type EntityState = z.infer<typeof EntityState>;
export type ConfigEntry = z.infer<typeof ConfigEntry>;
export type ServiceCallBody = z.infer<typeof ServiceCallBody>;
