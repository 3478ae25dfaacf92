import { z } from 'zod';

/** config/entity_registry/list, config/device_registry/list, config/area_registry/list entries (HA's display fields). */
export const HaEntityRegistryEntry = z
  .object({
    id: z.string(),
    entity_id: z.string(),
    unique_id: z.string(),
    platform: z.string(),
    config_entry_id: z.string().nullable(),
    device_id: z.string().nullable(),
    area_id: z.string().nullable(),
    name: z.string().nullable(),
    original_name: z.string().nullable(),
    icon: z.string().nullable(),
    disabled_by: z.string().nullable(),
    hidden_by: z.string().nullable(),
    entity_category: z.string().nullable(),
    has_entity_name: z.boolean(),
    translation_key: z.string().nullable(),
    labels: z.array(z.string()),
    categories: z.record(z.string(), z.string()),
  })
  .meta({ id: 'HaEntityRegistryEntry' });
export type HaEntityRegistryEntry = z.infer<typeof HaEntityRegistryEntry>;

export const HaDeviceRegistryEntry = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    name_by_user: z.string().nullable(),
    manufacturer: z.string().nullable(),
    model: z.string().nullable(),
    model_id: z.string().nullable(),
    sw_version: z.string().nullable(),
    hw_version: z.string().nullable(),
    serial_number: z.string().nullable(),
    identifiers: z.array(z.tuple([z.string(), z.string()])),
    connections: z.array(z.tuple([z.string(), z.string()])),
    config_entries: z.array(z.string()),
    primary_config_entry: z.string().nullable(),
    area_id: z.string().nullable(),
    via_device_id: z.string().nullable(),
    disabled_by: z.string().nullable(),
    entry_type: z.string().nullable(),
    configuration_url: z.string().nullable(),
    labels: z.array(z.string()),
  })
  .meta({ id: 'HaDeviceRegistryEntry' });
export type HaDeviceRegistryEntry = z.infer<typeof HaDeviceRegistryEntry>;

export const HaAreaRegistryEntry = z
  .object({
    area_id: z.string(),
    name: z.string(),
    aliases: z.array(z.string()),
    floor_id: z.string().nullable(),
    icon: z.string().nullable(),
    labels: z.array(z.string()),
    picture: z.string().nullable(),
  })
  .meta({ id: 'HaAreaRegistryEntry' });
export type HaAreaRegistryEntry = z.infer<typeof HaAreaRegistryEntry>;

/**
 * config/entity_registry/update: HA's user settings of an entity (`name`, `icon`, `area_id`,
 * `hidden_by`, `disabled_by`; null clears) and `new_entity_id` (HA's rename, same domain). Any
 * other change (options…) is refused with invalid_format instead of ignored.
 */
export const HaEntityRegistryUpdate = z
  .object({
    id: z.number().int(),
    type: z.literal('config/entity_registry/update'),
    entity_id: z.string().min(1),
    name: z.string().max(255).nullable().optional(),
    icon: z.string().max(255).nullable().optional(),
    area_id: z.string().min(1).nullable().optional(),
    disabled_by: z.literal('user').nullable().optional(),
    hidden_by: z.literal('user').nullable().optional(),
    new_entity_id: z.string().min(1).max(255).optional(),
  })
  .strict();
export type HaEntityRegistryUpdate = z.infer<typeof HaEntityRegistryUpdate>;
/** The changes of an update (the message without id, type and entity_id). */
export type HaEntityRegistryChanges = Omit<HaEntityRegistryUpdate, 'id' | 'type' | 'entity_id'>;

/** config/entity_registry/get */
export const HaEntityRegistryGet = z
  .object({ id: z.number().int(), type: z.literal('config/entity_registry/get'), entity_id: z.string().min(1) })
  .strict();
