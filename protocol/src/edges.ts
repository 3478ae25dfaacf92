import { z } from 'zod';
import { JsonObject, NonEmpty, Timestamp } from './common.ts';

export const EdgeStatus = z.enum(['pending', 'online', 'offline', 'revoked']);
export const EdgeLocation = z.enum(['home', 'cloud']);
export const Edge = z
  .object({
    id: z.number().int(),
    name: z.string(),
    org_id: z.string().nullable(),
    user_id: z.string(),
    location: EdgeLocation,
    status: EdgeStatus,
    capabilities: JsonObject,
    hostname: z.string().nullable(),
    last_seen_at: Timestamp.nullable(),
    paired_at: Timestamp.nullable(),
    created_at: Timestamp,
  })
  .meta({ id: 'Edge' });

export const CreateEdgeBody = z
  .object({ name: NonEmpty(200), capabilities: JsonObject.optional() })
  .meta({ id: 'CreateEdge' });
export const CreatedEdge = z
  .object({ edge: Edge, token: z.string().meta({ description: 'pairing token, shown once' }) })
  .meta({ id: 'CreatedEdge' });

export const MqttCredentials = z.object({ username: z.string(), password: z.string() }).meta({ id: 'MqttCredentials' });

export const RegisterCloudBody = z
  .object({
    hostname: NonEmpty(253),
    name: NonEmpty(200),
    capabilities: JsonObject.default({}),
  })
  .meta({ id: 'RegisterCloudEdge' });
export const RegisterCloudResult = z
  .object({
    edge: Edge,
    mqtt: MqttCredentials,
    token: z.string().meta({ description: 'edge token for the tunnel' }),
  })
  .meta({ id: 'CloudEdgeRegistration' });

export type Edge = z.infer<typeof Edge>;
export type EdgeStatus = z.infer<typeof EdgeStatus>;
export type MqttCredentials = z.infer<typeof MqttCredentials>;
