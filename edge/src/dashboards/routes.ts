import { edgeListDashboardsRoute, edgePutDashboardRoute } from '@smarthome/protocol/routes/edge-dashboards';
import type { SpecRouter } from '@smarthome/protocol/server';
import type { Caller } from '../api/app.ts';
import type { DashboardStore } from './store.ts';

/** GET/PUT /v1/ui-dashboard on the local API: any local account or token (the dashboards are the home's). */
export function mountDashboardRoutes(router: SpecRouter<Caller>, dashboards: DashboardStore): void {
  router.add(edgeListDashboardsRoute, () => dashboards.list());
  router.add(edgePutDashboardRoute, ({ body }) => dashboards.put(body));
}
