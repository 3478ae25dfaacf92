import { Hono } from 'hono';
import { routes, type RouteSpec } from '@smarthome/protocol';
import { mountHaRest } from '@smarthome/protocol/server/ha/index';
import { HttpError, SpecRouter, installErrorHandling, unauthorized } from '@smarthome/protocol/server';
import { portalFallback } from '@smarthome/web/serve';
import type { Caller, CloudRouter } from './context.ts';
import type { CloudParts } from './parts.ts';
import type { CloudHaBackend } from './ha-api/backend.ts';
import { safeEqual } from './auth/secrets.ts';
import { TrustedProxies, clientAddressMiddleware } from './http/client-address.ts';
import { mountDocs } from './docs/routes.ts';
import { mountAuthRoutes } from './auth/routes.ts';
import { mountOrgRoutes } from './orgs/routes.ts';
import { mountZoneRoutes } from './zones/routes.ts';
import { mountDashboardRoutes } from './dashboards/routes.ts';
import { mountTransferRoutes } from './transfers/routes.ts';
import { transferResourceHandlers } from './modules.ts';
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
  mountTransferRoutes(router, parts, transferResourceHandlers);
  mountVoipRoutes(router, parts);
  mountEdgeRoutes(router, parts);
  mountBillingRoutes(router, parts);
  mountSmartHomeRoutes(router, parts);
  mountDeviceRoutes(router, parts);
  mountStoreIapRoutes(router, parts);
  mountAutomationRoutes(router, parts);
}

const ANONYMOUS: Caller = { userId: '', via: 'anonymous' };

function bearerOf(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/** The caller a route's spec asks for: none, the fleet token, an edge token, or a user's credential. */
async function authenticate(parts: CloudParts, header: string | undefined, spec: RouteSpec): Promise<Caller> {
  if (spec.auth === 'none') return ANONYMOUS;
  const token = bearerOf(header);
  if (!token) throw unauthorized();
  if (spec.auth === 'fleet') {
    const fleetToken = parts.config.fleetToken;
    if (!fleetToken || !safeEqual(token, fleetToken)) throw unauthorized();
    return { userId: '', via: 'fleet' };
  }
  if (spec.auth === 'edge') {
    const edge = await parts.edges.authenticateEdgeToken(token);
    if (!edge) throw unauthorized();
    return { userId: '', via: 'edge', edgeId: edge.id };
  }
  const principal = await parts.auth.authenticate(token);
  if (!principal) throw unauthorized();
  return principal;
}

/**
 * The cloud's HTTP API as a Hono app (no server): the client address, every capability's
 * routes, /healthz, the docs, Home Assistant's REST API and the portal.
 * redisHealthy: false while a replica has lost Redis (null: a single process).
 */
export function createCloudApi(
  parts: CloudParts,
  opts: { haBackend: CloudHaBackend; redisHealthy: (() => boolean) | null },
): { app: Hono; routes: () => RouteSpec[] } {
  const app = new Hono();
  // Before every route: who the client is (throttling, the origin relayed to edges).
  app.use('*', clientAddressMiddleware(new TrustedProxies(parts.config.trustProxy)));
  const router = new SpecRouter<Caller>(app, {
    authenticate: (c, spec) => authenticate(parts, c.req.header('authorization'), spec),
    bodyLimit: parts.config.bodyLimitBytes,
  });
  installErrorHandling(app, parts.log);
  const { redisHealthy } = opts;
  router.add(routes.healthRoute, async () => {
    // A replica cut off from Redis would answer for edges it cannot reach: take it out of the load balancer.
    if (redisHealthy && !redisHealthy()) throw new HttpError(503, 'redis_unavailable');
    await parts.database.ping();
    return { status: 'ok' as const };
  });
  const allRoutes = () => [...router.routes, ...haRoutes];
  mountDocs(app, allRoutes);
  mountCapabilityRoutes(router, parts);
  // Home Assistant's REST API (/api/*): its own bearer check, documented in /openapi.json
  const haRoutes = mountHaRest(app, opts.haBackend);
  // the web portal at / (GET outside the API paths only: unknown API paths keep their JSON 404)
  app.use('*', portalFallback('cloud'));
  return { app, routes: allRoutes };
}
