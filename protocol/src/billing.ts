import { z } from 'zod';
import { Timestamp } from './common.ts';

export const Limit = z.number().int().nullable().meta({ description: 'null = unlimited' });
export const Plan = z
  .object({
    id: z.number().int(),
    name: z.string(),
    limits: z.object({ config_entries: Limit, devices: Limit, automations: Limit }),
  })
  .meta({ id: 'Plan' });
const Counter = z.object({ current: z.number().int(), limit: Limit });
export const Usage = z
  .object({
    plan: z.object({ id: z.number().int(), name: z.string() }),
    usage: z.object({ config_entries: Counter, devices: Counter, automations: Counter }),
  })
  .meta({ id: 'Usage' });
export const SubscriptionStatus = z.enum(['active', 'grace_period', 'billing_retry', 'expired', 'revoked']);
export const Subscription = z
  .object({
    id: z.string(),
    plan_id: z.number().int(),
    status: SubscriptionStatus,
    gateway_provider: z.string(),
    auto_renew: z.boolean(),
    expires_at: Timestamp.nullable(),
    pending_plan_id: z.number().int().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Subscription' });
export type Usage = z.infer<typeof Usage>;
export type Subscription = z.infer<typeof Subscription>;
export type SubscriptionStatus = z.infer<typeof SubscriptionStatus>;
export const CountedKind = z.enum(['config_entries', 'devices', 'automations']);
export type CountedKind = z.infer<typeof CountedKind>;
