import { z } from 'zod';
import { Timestamp } from './common.ts';

/**
 * Local accounts of an edge (the portal works offline): created by the first-run onboarding
 * or `pnpm edge account create`, signed in locally. Schemas only, so the portal imports them
 * without the OpenAPI machinery (routes: routes/local-accounts.ts).
 */
export const LocalUsername = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9_.@-]{1,64}$/, 'username: 1-64 of A-Z a-z 0-9 _ . @ -');
export const LocalPassword = z.string().min(8, 'password must be at least 8 characters').max(1024);

export const LocalAccount = z
  .object({
    id: z.number().int(),
    username: z.string(),
    role: z.enum(['owner', 'user']),
    created_at: Timestamp,
  })
  .meta({ id: 'LocalAccount' });
export type LocalAccount = z.infer<typeof LocalAccount>;

export const OnboardingStatus = z
  .object({
    onboarded: z
      .boolean()
      .meta({ description: 'false until the first local account exists (the portal then shows onboarding)' }),
  })
  .meta({ id: 'OnboardingStatus' });

export const OnboardBody = z.object({ username: LocalUsername, password: LocalPassword }).meta({ id: 'Onboard' });
export const LocalSignInBody = z
  .object({ username: z.string().max(64), password: z.string().min(1).max(1024) })
  .meta({ id: 'LocalSignIn' });

/** An edge-local session: a local API token (`sht_…`) bound to the account, valid for the local API and /api/websocket. */
export const LocalSession = z
  .object({
    access_token: z.string(),
    token_type: z.literal('Bearer'),
    account: LocalAccount,
  })
  .meta({ id: 'LocalSession' });
export type LocalSession = z.infer<typeof LocalSession>;

/** An owner adds an account: the same username and password rules as onboarding and the CLI. */
export const CreateLocalAccountBody = z
  .object({ username: LocalUsername, password: LocalPassword, role: z.enum(['owner', 'user']).default('user') })
  .meta({ id: 'CreateLocalAccount' });

export const ChangeLocalPasswordBody = z
  .object({ current_password: z.string().min(1).max(1024), new_password: LocalPassword })
  .meta({ id: 'ChangeLocalPassword' });
