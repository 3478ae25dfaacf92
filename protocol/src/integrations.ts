import { z } from 'zod';
import { JsonObject } from './common.ts';

export const VoiceEndpoint = z
  .object({
    entity_id: z.string(),
    name: z.string(),
    domain: z.string(),
    state: z.string().nullable(),
    attributes: JsonObject,
    exposed: z.boolean(),
  })
  .meta({ id: 'VoiceAssistantEndpoint' });
export const VoiceEndpointList = z.array(VoiceEndpoint);
export const PutVoiceEndpointBody = z.object({ exposed: z.boolean() }).meta({ id: 'PutVoiceAssistantEndpoint' });

export const SmartHome = z
  .object({
    id: z.number().int(),
    name: z.string(),
    org_id: z.string().nullable(),
    location: z.string(),
    status: z.string(),
    devices: z.number().int(),
    entities: z.number().int(),
  })
  .meta({ id: 'SmartHome' });
export const SmartHomesQuery = z.object({
  cursor: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export const SmartHomePage = z
  .object({ items: z.array(SmartHome), next_cursor: z.string().nullable() })
  .meta({ id: 'SmartHomePage' });
