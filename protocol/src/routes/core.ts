import { z } from 'zod';
import { defineRoute } from '../route.ts';
import {
  Account,
  BackupCodes,
  ChangePasswordBody,
  CreatePatBody,
  CreatedPersonalAccessToken,
  PersonalAccessToken,
  RegisterBody,
  TokenBody,
  TokenResponse,
} from '../auth.ts';
import { IdParams, MessageBody } from '../common.ts';

export const Health = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

export const healthRoute = defineRoute({
  method: 'get',
  path: '/healthz',
  summary:
    'Health check: 503 {error} when this replica lost Redis (redis_unavailable) or its database (database_unavailable)',
  tag: 'system',
  auth: 'none',
  status: 200,
  response: Health,
  errors: [503],
});
export const registerRoute = defineRoute({
  method: 'post',
  path: '/v1/auth/register',
  summary: 'Create an account',
  tag: 'auth',
  auth: 'none',
  body: RegisterBody,
  status: 201,
  response: TokenResponse,
  errors: [400, 409, 413, 429],
});
export const tokenRoute = defineRoute({
  method: 'post',
  path: '/v1/auth/token',
  summary: 'Issue tokens (password or refresh_token grant)',
  tag: 'auth',
  auth: 'none',
  body: TokenBody,
  status: 200,
  response: TokenResponse,
  errors: [400, 401, 413, 429],
});
export const accountRoute = defineRoute({
  method: 'get',
  path: '/v1/account',
  summary: 'The authenticated account',
  tag: 'account',
  auth: 'bearer',
  status: 200,
  response: Account,
  errors: [401],
});
export const createPatRoute = defineRoute({
  method: 'post',
  path: '/v1/account/tokens',
  summary: 'Create a personal access token (shown once)',
  tag: 'account',
  auth: 'bearer',
  body: CreatePatBody,
  status: 201,
  response: CreatedPersonalAccessToken,
  errors: [400, 401],
});
export const listPatsRoute = defineRoute({
  method: 'get',
  path: '/v1/account/tokens',
  summary: 'List personal access tokens',
  tag: 'account',
  auth: 'bearer',
  status: 200,
  response: z.array(PersonalAccessToken),
  errors: [401],
});
export const deletePatRoute = defineRoute({
  method: 'delete',
  path: '/v1/account/tokens/{id}',
  summary: 'Revoke a personal access token',
  tag: 'account',
  auth: 'bearer',
  params: IdParams,
  status: 200,
  response: MessageBody,
  errors: [401, 404],
});
export const backupCodesRoute = defineRoute({
  method: 'post',
  path: '/v1/account/mfa/backup-codes',
  summary: 'Generate 10 MFA backup codes (replaces earlier ones)',
  tag: 'account',
  auth: 'bearer',
  headers: z.object({
    'x-account-verification': z
      .string()
      .meta({ description: 'current password, or a current TOTP code once TOTP is enrolled' }),
  }),
  status: 200,
  response: BackupCodes,
  errors: [401, 403, 429, 500],
});
export const changePasswordRoute = defineRoute({
  method: 'post',
  path: '/v1/account/password',
  tag: 'account',
  auth: 'bearer',
  summary:
    "Change the password; every other sign-in session ends (its refresh and access tokens, and app WebSockets opened with them). The caller's own session and personal access tokens stay",
  headers: z.object({ 'x-account-verification': z.string().meta({ description: 'the current password' }) }),
  body: ChangePasswordBody,
  status: 200,
  response: MessageBody,
  errors: [400, 401, 403, 413, 429],
});
