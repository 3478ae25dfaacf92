import { z } from 'zod';
import { NonEmpty, Timestamp } from './common.ts';

export const DashboardView = z.looseObject({
  title: z.string().max(200),
  cards: z.array(z.record(z.string(), z.unknown())).max(500),
});
export const DashboardConfig = z
  .looseObject({ views: z.array(DashboardView).max(100) })
  .meta({ id: 'DashboardConfig' });

export const PutDashboardBody = z
  .object({
    id: z.number().int().positive().optional(),
    name: NonEmpty(200),
    config: DashboardConfig,
    title: z.string().max(200).optional(),
    icon: z.string().max(100).optional(),
    type: z.string().max(50).optional(),
    url: z.string().max(2048).nullable().optional(),
  })
  .meta({ id: 'PutDashboard' });
export const Dashboard = z
  .object({
    id: z.number().int(),
    name: z.string(),
    type: z.string(),
    title: z.string(),
    icon: z.string(),
    url: z.string().nullable(),
    config: DashboardConfig,
    user_id: z.string(),
    org_id: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Dashboard' });
export type Dashboard = z.infer<typeof Dashboard>;
