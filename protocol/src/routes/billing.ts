import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { Plan, Subscription, Usage } from '../billing.ts';

export const billingUsageRoute = defineRoute({
  method: 'get',
  path: '/v1/billing/usage',
  summary: 'Plan usage of the active scope (null limit = unlimited)',
  tag: 'billing',
  auth: 'bearer',
  orgContext: true,
  status: 200,
  response: Usage,
  errors: [401, 403, 500],
});
export const billingSubscriptionsRoute = defineRoute({
  method: 'get',
  path: '/v1/billing/subscriptions',
  summary: 'Subscriptions of the authenticated user',
  tag: 'billing',
  auth: 'bearer',
  status: 200,
  response: z.array(Subscription),
  errors: [400, 401, 500],
});
export const billingPlansRoute = defineRoute({
  method: 'get',
  path: '/v1/billing/plans',
  summary: 'Available plans and their limits',
  tag: 'billing',
  auth: 'bearer',
  status: 200,
  response: z.array(Plan),
  errors: [401],
});
