import { routes } from '@smarthome/protocol';
import type { CloudRouter } from '../context.ts';
import type { CloudDatabase } from '../db/database.ts';
import { rowId, userOf } from '../http/route-inputs.ts';
import { resolveScope } from '../orgs/scope.ts';
import { DashboardService, toDashboard } from './service.ts';

export interface DashboardRoutesDeps {
  database: CloudDatabase;
}

export function mountDashboardRoutes(router: CloudRouter, s: DashboardRoutesDeps): void {
  const dashboards = new DashboardService(s.database);
  const scopeOf = (c: Parameters<typeof resolveScope>[1], auth: Parameters<typeof userOf>[0]) =>
    resolveScope(s.database.db, c, userOf(auth));

  // 200 for create, replace and update alike: PUT is an idempotent upsert (see the route summary).
  router.add(routes.putDashboardRoute, async ({ c, auth, body }) => dashboards.put(await scopeOf(c, auth), body));
  router.add(routes.listDashboardsRoute, async ({ c, auth }) => dashboards.list(await scopeOf(c, auth)));
  router.add(routes.getDashboardRoute, async ({ c, auth, params }) =>
    toDashboard(await dashboards.load(await scopeOf(c, auth), rowId(params.id), 'view')),
  );
  router.add(routes.deleteDashboardRoute, async ({ c, auth, params }) => {
    await dashboards.remove(await scopeOf(c, auth), rowId(params.id));
    return { message: 'dashboard deleted' };
  });
}
