import type { CloudRouter } from './context.ts';
import type { CloudParts } from './parts.ts';
import { mountAuthRoutes } from './auth/routes.ts';
import { mountOrgRoutes } from './orgs/routes.ts';
import { mountZoneRoutes } from './zones/routes.ts';
import { mountDashboardRoutes } from './dashboards/routes.ts';
import { mountTransferRoutes } from './transfers/routes.ts';
import { mountVoipRoutes } from './voip/routes.ts';
import { mountEdgeRoutes } from './edges/routes.ts';
import { mountBillingRoutes } from './billing/routes.ts';
import { mountSmartHomeRoutes } from './smarthomes/routes.ts';
import { mountDeviceRoutes } from './devices/routes.ts';
import { mountStoreIapRoutes } from './store-iap/routes.ts';
import { mountAutomationRoutes } from './automations/routes.ts';

/** Every capability's routes, one line per module; each takes the parts its *Deps names. */
export function mountCapabilityRoutes(router: CloudRouter, parts: CloudParts): void {
  mountAuthRoutes(router, parts);
  mountOrgRoutes(router, parts);
  mountZoneRoutes(router, parts);
  mountDashboardRoutes(router, parts);
  mountTransferRoutes(router, parts);
  mountVoipRoutes(router, parts);
  mountEdgeRoutes(router, parts);
  mountBillingRoutes(router, parts);
  mountSmartHomeRoutes(router, parts);
  mountDeviceRoutes(router, parts);
  mountStoreIapRoutes(router, parts);
  mountAutomationRoutes(router, parts);
}
