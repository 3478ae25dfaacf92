import { z } from 'zod';

/** auth/current_user: who the token belongs to (Node-RED's HA nodes refuse a user without is_admin). */
export const HaCurrentUser = z
  .object({
    id: z.string(),
    name: z.string(),
    is_owner: z.boolean(),
    is_admin: z.boolean(),
    credentials: z.array(z.object({ auth_provider_type: z.string(), auth_provider_id: z.string().nullable() })),
    mfa_modules: z.array(z.object({ id: z.string(), name: z.string(), enabled: z.boolean() })),
  })
  .meta({ id: 'HaCurrentUser' });
export type HaCurrentUser = z.infer<typeof HaCurrentUser>;
