import { routes, type Edge } from '@smarthome/protocol';
import { forbidden, notFound, unauthorized } from '@smarthome/protocol/server';
import type { Caller, CloudRouter } from '../context.ts';
import type { CloudDatabase } from '../db/database.ts';
import type { MirrorStore } from '../mirror/store.ts';
import { userOf } from '../http/route-inputs.ts';
import { can, type Action } from '../authz/can.ts';
import { resolveScope, type Scope } from '../orgs/scope.ts';
import { edgeResource, type EdgeRegistry } from './registry.ts';

export interface EdgeRoutesDeps {
  database: CloudDatabase;
  edges: EdgeRegistry;
  mirror: MirrorStore;
}

/**
 * Loads an edge for the caller: 404 when it does not exist, is outside the organization named
 * by X-Organization-Id, or is not visible to the caller (so ids cannot be probed); 403 when
 * the caller may view it but not do `action`.
 */
export async function loadEdgeFor(
  s: Pick<EdgeRoutesDeps, 'database' | 'edges'>,
  scope: Scope,
  id: number,
  action: Action,
): Promise<Edge> {
  const edge = await s.edges.get(id);
  if (!edge) throw notFound('edge not found');
  if (scope.kind === 'org' && edge.org_id !== scope.orgId) throw notFound('edge not found');
  const resource = edgeResource(edge);
  if (!(await can(s.database.db, scope.userId, 'view', resource))) throw notFound('edge not found');
  if (action !== 'view' && !(await can(s.database.db, scope.userId, action, resource))) throw forbidden();
  return edge;
}

function edgeIdOf(auth: Caller): number {
  if (auth.via !== 'edge') throw unauthorized();
  return auth.edgeId;
}

export function mountEdgeRoutes(router: CloudRouter, s: EdgeRoutesDeps): void {
  router.add(routes.createEdgeRoute, async ({ auth, c, body }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    return s.edges.create(scope, body);
  });

  router.add(routes.listEdgesRoute, async ({ auth, c }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    return s.edges.list(scope);
  });

  // Before /v1/edges/{id}: the shared fleet is readable by every signed-in user.
  router.add(routes.cloudFleetRoute, async ({ auth }) => {
    userOf(auth);
    return s.edges.cloudFleet();
  });

  router.add(routes.getEdgeRoute, async ({ auth, c, params }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    return loadEdgeFor(s, scope, Number(params.id), 'view');
  });

  router.add(routes.deleteEdgeRoute, async ({ auth, c, params }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const edge = await loadEdgeFor(s, scope, Number(params.id), 'manage');
    // revoke() emits 'revoked' (the tunnel drops the connection); the mirror goes with the edge.
    await s.edges.revoke(edge.id);
    await s.mirror.clear(edge.id);
    return { message: 'edge revoked' };
  });

  router.add(routes.registerCloudRoute, async ({ body }) => s.edges.registerCloud(body));

  router.add(routes.edgeHeartbeatRoute, async ({ auth }) => {
    const edge = await s.edges.touch(edgeIdOf(auth));
    if (!edge) throw unauthorized();
    return edge;
  });
}
