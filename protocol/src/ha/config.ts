import { z } from 'zod';

/** get_config / GET /api/config: what home-assistant-js-websocket's HassConfig and the HA frontend read. */
export const HaUnitSystem = z.object({
  length: z.string(),
  accumulated_precipitation: z.string(),
  mass: z.string(),
  pressure: z.string(),
  temperature: z.string(),
  volume: z.string(),
  wind_speed: z.string(),
});

export const HaConfig = z
  .object({
    latitude: z.number(),
    longitude: z.number(),
    elevation: z.number(),
    radius: z.number(),
    unit_system: HaUnitSystem,
    location_name: z.string(),
    time_zone: z.string(),
    components: z.array(z.string()),
    config_dir: z.string(),
    allowlist_external_dirs: z.array(z.string()),
    allowlist_external_urls: z.array(z.string()),
    version: z.string(),
    config_source: z.string(),
    recovery_mode: z.boolean(),
    safe_mode: z.boolean(),
    state: z.enum(['NOT_RUNNING', 'STARTING', 'RUNNING', 'STOPPING', 'FINAL_WRITE']),
    external_url: z.string().nullable(),
    internal_url: z.string().nullable(),
    currency: z.string(),
    country: z.string().nullable(),
    language: z.string(),
    debug: z.boolean(),
  })
  .meta({ id: 'HaConfig' });
export type HaConfig = z.infer<typeof HaConfig>;

export const HaServiceField = z.object({
  name: z.string().optional(),
  description: z.string().optional(),
  required: z.boolean().optional(),
  example: z.unknown().optional(),
  selector: z.record(z.string(), z.unknown()).optional(),
});

export const HaService = z.object({
  name: z.string(),
  description: z.string(),
  fields: z.record(z.string(), HaServiceField),
  target: z.object({ entity: z.array(z.object({ domain: z.array(z.string()).optional() })) }).optional(),
  response: z.object({ optional: z.boolean() }).optional(),
});

/** get_services: domain → service → description */
export const HaServices = z.record(z.string(), z.record(z.string(), HaService)).meta({ id: 'HaServices' });
export type HaServices = z.infer<typeof HaServices>;
