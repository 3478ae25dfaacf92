import { MessageBody } from '../common.ts';
import { LocalSession, LocalSignInBody, OnboardBody, OnboardingStatus } from '../local-accounts.ts';
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
