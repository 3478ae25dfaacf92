import { z } from 'zod';
import { NonEmpty, Timestamp } from './common.ts';

const Host = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9.:\-[\]]+$/, 'must be a host name or address');
export const CreateVoipAccountBody = z
  .object({
    name: NonEmpty(200),
    server: Host,
    domain: Host.optional(),
    port: z.number().int().min(1).max(65535).default(5060),
    transport: z.enum(['udp', 'tcp', 'tls']).default('udp'),
    username: NonEmpty(200),
    password: z.string().min(1).max(500),
    display_name: z.string().max(200).optional(),
  })
  .meta({ id: 'CreateVoipAccount' });
export const VoipAccount = z
  .object({
    id: z.number().int(),
    name: z.string(),
    server: z.string(),
    domain: z.string().nullable(),
    port: z.number().int(),
    transport: z.enum(['udp', 'tcp', 'tls']),
    username: z.string(),
    display_name: z.string().nullable(),
    user_id: z.string(),
    org_id: z.string().nullable(),
    created_at: Timestamp,
  })
  .meta({ id: 'VoipAccount' });
export type VoipAccount = z.infer<typeof VoipAccount>;
