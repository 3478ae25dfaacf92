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
  })
  .meta({ id: 'Device' });

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
export type EntityRecord = z.infer<typeof EntityRecord>;
export type EntityState = z.infer<typeof EntityState>;
export type ConfigEntry = z.infer<typeof ConfigEntry>;
export type ServiceCallBody = z.infer<typeof ServiceCallBody>;
