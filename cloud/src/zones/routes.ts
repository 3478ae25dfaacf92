import { routes } from '@smarthome/protocol';
import type { CloudRouter } from '../context.ts';
import type { CloudDatabase } from '../db/database.ts';
import { rowId, userOf } from '../http/route-inputs.ts';
import { resolveScope } from '../orgs/scope.ts';
import { ZoneService, toZone } from './service.ts';

export interface ZoneRoutesDeps {
  database: CloudDatabase;
}

export function mountZoneRoutes(router: CloudRouter, s: ZoneRoutesDeps): void {
  const zones = new ZoneService(() => s.database.db);
  const scopeOf = (c: Parameters<typeof resolveScope>[1], auth: Parameters<typeof userOf>[0]) =>
    resolveScope(s.database.db, c, userOf(auth));

  router.add(routes.createZoneRoute, async ({ c, auth, body }) => zones.create(await scopeOf(c, auth), body));
  router.add(routes.listZonesRoute, async ({ c, auth }) => zones.list(await scopeOf(c, auth)));
  router.add(routes.getZoneRoute, async ({ c, auth, params }) =>
    toZone(await zones.load(await scopeOf(c, auth), rowId(params.id), 'view')),
  );
  router.add(routes.patchZoneRoute, async ({ c, auth, params, body }) =>
    zones.patch(await scopeOf(c, auth), rowId(params.id), body),
  );
  router.add(routes.deleteZoneRoute, async ({ c, auth, params }) => {
    await zones.remove(await scopeOf(c, auth), rowId(params.id));
    return { message: 'zone deleted' };
  });
}
