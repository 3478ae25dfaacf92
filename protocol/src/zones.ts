import { z } from 'zod';
import { NonEmpty, Timestamp } from './common.ts';

export const ZoneIcon = z
  .string()
  .regex(/^[a-z0-9_-]+:[a-z0-9_.-]+$/, 'icon must look like <set>:<name>, e.g. mdi:home');
const Latitude = z.number().min(-90).max(90);
const Longitude = z.number().min(-180).max(180);
const Radius = z.number().positive('radius must be > 0 (metres)').max(20_000_000).meta({ description: 'metres' });

export const CreateZoneBody = z
  .object({
    name: NonEmpty(200),
    icon: ZoneIcon,
    latitude: Latitude,
    longitude: Longitude,
    radius: Radius,
    passive: z.boolean().default(false),
  })
  .meta({ id: 'CreateZone' });
export const PatchZoneBody = z
  .object({
    name: NonEmpty(200),
    icon: ZoneIcon,
    latitude: Latitude,
    longitude: Longitude,
    radius: Radius,
    passive: z.boolean(),
  })
  .partial()
  .meta({ id: 'PatchZone' });
export const Zone = z
  .object({
    id: z.number().int(),
    name: z.string(),
    icon: z.string(),
    latitude: z.number(),
    longitude: z.number(),
    radius: z.number(),
    passive: z.boolean(),
    user_id: z.string(),
    org_id: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Zone' });
export type Zone = z.infer<typeof Zone>;
