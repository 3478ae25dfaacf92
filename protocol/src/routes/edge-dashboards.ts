import { z } from 'zod';
import { Dashboard, PutDashboardBody } from '../dashboards.ts';
import { defineRoute } from '../route.ts';

/**
 * The edge's own dashboards (edge/src/dashboards): the cloud's `/v1/ui-dashboard` shapes, stored
 * in the edge's SQLite file, so the edge portal edits its dashboard with the internet unplugged.
 * They belong to the home (every local account and token), not to a cloud user or organization.
 */
const TAG = 'Edge dashboards';

export const edgeListDashboardsRoute = defineRoute({
  method: 'get',
  path: '/v1/ui-dashboard',
  summary: "This home's dashboards stored on the edge, oldest first",
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: z.array(Dashboard),
  errors: [401],
});
export const edgePutDashboardRoute = defineRoute({
  method: 'put',
  path: '/v1/ui-dashboard',
  summary:
    'Create or update a dashboard stored on the edge: with id, update that dashboard (404 if none); without id, create or replace the one of that name',
  tag: TAG,
  auth: 'bearer',
  body: PutDashboardBody,
  status: 200,
  response: Dashboard,
  errors: [400, 401, 404, 409],
});
