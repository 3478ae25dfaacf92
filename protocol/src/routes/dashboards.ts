import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { IntIdParam, MessageBody } from '../common.ts';
import { Dashboard, PutDashboardBody } from '../dashboards.ts';

const DashboardParams = z.object({ id: IntIdParam });

export const putDashboardRoute = defineRoute({
  method: 'put',
  path: '/v1/ui-dashboard',
  summary:
    'Create or update a dashboard: with id, update that dashboard; without id, create or replace the dashboard of that name in the scope. Answers 200 with the dashboard in every case.',
  tag: 'dashboards',
  auth: 'bearer',
  orgContext: true,
  body: PutDashboardBody,
  status: 200,
  response: Dashboard,
  errors: [400, 401, 403, 404, 409, 500],
});
export const listDashboardsRoute = defineRoute({
  method: 'get',
  path: '/v1/ui-dashboard',
  summary:
    "List the dashboards of the scope plus the dashboards shared with the caller (into the X-Organization-Id organization, or into any of the caller's organizations without it)",
  tag: 'dashboards',
  auth: 'bearer',
  orgContext: true,
  status: 200,
  response: z.array(Dashboard),
  errors: [401, 403],
});
export const getDashboardRoute = defineRoute({
  method: 'get',
  path: '/v1/ui-dashboard/{id}',
  summary: 'Get a dashboard of the scope, or one shared with the caller',
  tag: 'dashboards',
  auth: 'bearer',
  orgContext: true,
  params: DashboardParams,
  status: 200,
  response: Dashboard,
  errors: [401, 403, 404],
});
export const deleteDashboardRoute = defineRoute({
  method: 'delete',
  path: '/v1/ui-dashboard/{id}',
  summary: 'Delete a dashboard (owner or organization admin)',
  tag: 'dashboards',
  auth: 'bearer',
  orgContext: true,
  params: DashboardParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404],
});
