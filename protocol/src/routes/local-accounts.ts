import { z } from 'zod';
import { IntIdParam, MessageBody } from '../common.ts';
import {
  ChangeLocalPasswordBody,
  CreateLocalAccountBody,
  LocalAccount,
  LocalSession,
  LocalSignInBody,
  OnboardBody,
  OnboardingStatus,
} from '../local-accounts.ts';
import { defineRoute } from '../route.ts';

const TAG = 'Edge local accounts';

export const localOnboardingStatusRoute = defineRoute({
  method: 'get',
  path: '/v1/local/onboarding',
  summary: 'Whether this edge has its first local account yet',
  tag: TAG,
  auth: 'none',
  status: 200,
  response: OnboardingStatus,
  errors: [],
});
export const localOnboardRoute = defineRoute({
  method: 'post',
  path: '/v1/local/onboarding',
  summary: "Create the home's first local account (its owner) and sign it in; 409 once one exists",
  tag: TAG,
  auth: 'none',
  body: OnboardBody,
  status: 201,
  response: LocalSession,
  errors: [400, 409],
});
export const localSignInRoute = defineRoute({
  method: 'post',
  path: '/v1/local/auth/token',
  summary: 'Sign a local account in: an edge-local session token',
  tag: TAG,
  auth: 'none',
  body: LocalSignInBody,
  status: 200,
  response: LocalSession,
  errors: [400, 401, 429],
});
export const localSignOutRoute = defineRoute({
  method: 'post',
  path: '/v1/local/auth/logout',
  summary: 'End the session whose token authenticates this request',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: MessageBody,
  errors: [401],
});

/*
 * Managing local accounts. Who may: an owner's session; a local token that is not a session (the
 * CLI's `token create`, whose holder already has the data directory) acts as an owner. A user's
 * session gets 403 owner_only; a call relayed by the cloud gets 403 edge_local_only.
 */
export const localMeRoute = defineRoute({
  method: 'get',
  path: '/v1/local/account',
  summary: 'The signed-in local account (403 not_a_local_account for a token that is not a session)',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: LocalAccount,
  errors: [401, 403],
});
export const localAccountsListRoute = defineRoute({
  method: 'get',
  path: '/v1/local/accounts',
  summary: "The home's local accounts (owners only; never their password hashes)",
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: z.array(LocalAccount),
  errors: [401, 403],
});
export const localAccountCreateRoute = defineRoute({
  method: 'post',
  path: '/v1/local/accounts',
  summary: 'Add a local account (owners only); 409 when the username is taken',
  tag: TAG,
  auth: 'bearer',
  body: CreateLocalAccountBody,
  status: 201,
  response: LocalAccount,
  errors: [400, 401, 403, 409],
});
export const localAccountDeleteRoute = defineRoute({
  method: 'delete',
  path: '/v1/local/accounts/{id}',
  summary: 'Delete a local account and end its sessions (owners only); 409 for yourself or the last owner',
  tag: TAG,
  auth: 'bearer',
  params: z.object({ id: IntIdParam }),
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404, 409],
});
export const localPasswordRoute = defineRoute({
  method: 'post',
  path: '/v1/local/account/password',
  summary: "Change the signed-in local account's password; its other sessions end",
  tag: TAG,
  auth: 'bearer',
  body: ChangeLocalPasswordBody,
  status: 200,
  response: MessageBody,
  errors: [400, 401, 403, 429],
});
