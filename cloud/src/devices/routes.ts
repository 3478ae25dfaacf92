import { MEDIA_SOURCE_ROOT, mediaRoot, routes, type Edge } from '@smarthome/protocol';
import { badRequest, forbidden, notFound } from '@smarthome/protocol/server';
import type { CloudRouter } from '../context.ts';
import type { CloudConfig } from '../config.ts';
import type { CloudDatabase } from '../db/database.ts';
import type { MirrorStore } from '../mirror/store.ts';
import { clientAddress } from '../http/client-address.ts';
import { userOf } from '../http/route-inputs.ts';
import { can } from '../authz/can.ts';
import { edgeResource, type EdgeRegistry } from '../edges/registry.ts';
import { resolveScope, type Scope } from '../orgs/scope.ts';
import { assertWithinLimit } from '../billing/plans.ts';
import { passThrough, type EntityAccess } from './access.ts';
import { edgeOwners, withOwner } from './owners.ts';
import { FlowDirectory } from './flows.ts';
import { VoiceExposure } from './voice.ts';

export interface DeviceRoutesDeps {
  config: Pick<CloudConfig, 'publicUrl'>;
  database: CloudDatabase;
  edges: EdgeRegistry;
  mirror: MirrorStore;
  access: EntityAccess;
}

type EdgeLookup = Pick<DeviceRoutesDeps, 'database' | 'edges'>;

/** Loads an edge the caller may act on: 404 when invisible, 403 when the action is not allowed. */
async function loadEdge(s: EdgeLookup, userId: string, id: number, action: 'view' | 'edit'): Promise<Edge> {
  const edge = await s.edges.get(id);
  if (!edge || edge.status === 'revoked' || !(await can(s.database.db, userId, 'view', edgeResource(edge))))
    throw notFound('edge not found');
  if (action === 'edit' && !(await can(s.database.db, userId, 'edit', edgeResource(edge)))) throw forbidden();
  return edge;
}

/** The edge a scoped call is about: the given edge_id, or the scope's only edge; null when the scope has none. */
async function findEdge(
  s: EdgeLookup,
  scope: Scope,
  edgeId: number | undefined,
  action: 'view' | 'edit',
): Promise<Edge | null> {
  if (edgeId !== undefined) {
    const edge = await loadEdge(s, scope.userId, edgeId, action);
    if (scope.orgId && edge.org_id !== scope.orgId) throw notFound('edge not found');
    return edge;
  }
  const candidates = (await s.edges.list(scope)).filter((e) => e.status !== 'revoked' && e.location === 'home');
  if (candidates.length === 0) return null;
  if (candidates.length > 1) throw badRequest('edge_id: required when the scope has several edges');
  return loadEdge(s, scope.userId, candidates[0].id, action);
}

/** findEdge, for calls that need an edge: 404 when the scope has none. */
async function pickEdge(
  s: EdgeLookup,
  scope: Scope,
  edgeId: number | undefined,
  action: 'view' | 'edit',
): Promise<Edge> {
  const edge = await findEdge(s, scope, edgeId, action);
  if (!edge) throw notFound('no edge in scope');
  return edge;
}

export function mountDeviceRoutes(router: CloudRouter, s: DeviceRoutesDeps): void {
  const access = s.access;
  const flows = new FlowDirectory(s.database);
  const voice = new VoiceExposure(s.database);
  const origin = (userId: string, c: Parameters<typeof clientAddress>[0]) => ({ userId, remoteAddr: clientAddress(c) });

  router.add(routes.listDevicesRoute, async ({ auth, c, query }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    let grants = await access.edgeGrants(scope.userId, scope.orgId);
    if (query.edge_id) grants = grants.filter((g) => g.edgeId === Number(query.edge_id));
    const owners = await edgeOwners(s.database.db, grants);
    return (await s.mirror.devices(grants.map((g) => g.edgeId))).map((d) => withOwner(d, owners));
  });

  router.add(routes.getDeviceRoute, async ({ auth, params, query }) => {
    let grants = await access.edgeGrants(userOf(auth));
    if (query.edge_id) grants = grants.filter((g) => g.edgeId === Number(query.edge_id));
    const found = await s.mirror.findDevice(
      grants.map((g) => g.edgeId),
      Number(params.id),
    );
    if (!found) throw notFound('device not found');
    const owners = await edgeOwners(
      s.database.db,
      grants.filter((g) => g.edgeId === found.device.edge_id),
    );
    return { ...found, device: withOwner(found.device, owners) };
  });

  // Served from the per-edge serialized cache (already in the response schema's shape), with an
  // ETag: a client that sends If-None-Match gets 304 while nothing it may see has changed. A
  // listing can be megabytes: gzip for clients that accept it (compressed once per content).
  router.add(routes.listStatesRoute, async ({ auth, c }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const rendered = await access.statesBody(scope.userId, scope.orgId);
    const headers = { etag: rendered.etag, 'cache-control': 'private, no-cache', vary: 'Accept-Encoding' };
    if (ifNoneMatch(c.req.header('if-none-match'), rendered.etag)) return c.body(null, 304, headers);
    if (rendered.body.length >= GZIP_MIN_BYTES && acceptsGzip(c.req.header('accept-encoding'))) {
      return c.body(await rendered.gzipped(), 200, {
        ...headers,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      });
    }
    return c.body(rendered.body, 200, { ...headers, 'content-type': 'application/json' });
  });

  router.add(
    routes.getStateRoute,
    async ({ auth, params }) => (await access.resolveEntity(userOf(auth), params.entity_id, 'view')).state,
  );

  router.add(routes.callServiceRoute, async ({ auth, params, body, c }) =>
    access.callService(userOf(auth), params.domain, params.service, body, clientAddress(c)),
  );

  router.add(routes.edgeMqttCredentialsRoute, async ({ auth, params, c }) => {
    const userId = userOf(auth);
    if (!/^[0-9]+$/.test(params.id)) throw notFound('edge not found');
    const edge = await loadEdge(s, userId, Number(params.id), 'edit');
    return passThrough(
      await access.relay(edge.id, 'POST', '/v1/mqtt/credentials', { role: 'device' }, origin(userId, c)),
    ) as never;
  });

  router.add(routes.voiceEndpointsRoute, async ({ auth, c }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    return voice.list(scope.userId, await access.states(scope.userId, scope.orgId));
  });
  router.add(routes.putVoiceEndpointRoute, async ({ auth, params, body }) => {
    const userId = userOf(auth);
    const { state } = await access.resolveEntity(userId, params.entity_id, 'view');
    await voice.set(userId, params.entity_id, body.exposed);
    return (await voice.list(userId, [state]))[0];
  });

  // Config flows run on an edge; the cloud remembers which edge each flow lives on.
  router.add(routes.flowHandlersRoute, async ({ auth, c, query }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const edge = await findEdge(s, scope, query.edge_id ? Number(query.edge_id) : undefined, 'view');
    // The cloud has no integrations of its own: with no edge, there is nothing to set up.
    if (!edge) return [];
    return passThrough(
      await access.relay(edge.id, 'GET', '/v1/config_flow/handlers', undefined, origin(scope.userId, c)),
    ) as never;
  });
  router.add(routes.startFlowRoute, async ({ auth, c, body }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const edge = await pickEdge(s, scope, body.edge_id, 'edit');
    await assertWithinLimit(s, scope, 'config_entries');
    const out = passThrough(
      await access.relay(edge.id, 'POST', '/v1/config_flow', { handler: body.handler }, origin(scope.userId, c)),
    ) as { flowId?: string };
    if (out?.flowId) await flows.remember(out.flowId, edge.id, scope.userId);
    return out as never;
  });
  /** A flow of the caller's, on an edge the caller may still edit (access can be lost mid-flow). */
  const ownFlow = async (flowId: string, userId: string): Promise<{ edgeId: number }> => {
    const flow = await flows.get(flowId, userId);
    if (!flow || !(await access.edgeGrants(userId)).some((g) => g.edgeId === flow.edgeId && g.role !== 'member'))
      throw notFound('flow not found');
    return flow;
  };
  router.add(routes.advanceFlowRoute, async ({ auth, c, params, body }) => {
    const userId = userOf(auth);
    const flow = await ownFlow(params.flowId, userId);
    const out = passThrough(
      await access.relay(
        flow.edgeId,
        'POST',
        `/v1/config_flow/${encodeURIComponent(params.flowId)}/advance`,
        body,
        origin(userId, c),
      ),
    ) as { type?: string };
    if (out?.type === 'create_entry' || out?.type === 'abort') await flows.forget(params.flowId);
    return out as never;
  });
  router.add(routes.deleteFlowRoute, async ({ auth, c, params }) => {
    const userId = userOf(auth);
    const flow = await ownFlow(params.flowId, userId);
    await flows.forget(params.flowId);
    return passThrough(
      await access.relay(
        flow.edgeId,
        'DELETE',
        `/v1/config_flow/${encodeURIComponent(params.flowId)}`,
        undefined,
        origin(userId, c),
      ),
    ) as never;
  });
  router.add(routes.listEntriesRoute, async ({ auth, c, query }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    let ids = (await access.edgeGrants(scope.userId, scope.orgId)).map((g) => g.edgeId);
    if (query.edge_id) ids = ids.filter((id) => id === Number(query.edge_id));
    return s.mirror.configEntries(ids);
  });
  router.add(routes.deleteEntryRoute, async ({ auth, c, params, query }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    let grants = await access.edgeGrants(scope.userId, scope.orgId);
    if (query.edge_id) grants = grants.filter((g) => g.edgeId === Number(query.edge_id));
    const holding = new Set(
      (await s.mirror.configEntries(grants.map((g) => g.edgeId)))
        .filter((e) => e.id === Number(params.id))
        .map((e) => e.edge_id),
    );
    const owner = grants.find((g) => holding.has(g.edgeId));
    if (!owner) throw notFound('config entry not found');
    if (owner.role === 'member') throw forbidden();
    return passThrough(
      await access.relay(owner.edgeId, 'DELETE', `/v1/config_entries/${params.id}`, undefined, origin(scope.userId, c)),
    ) as never;
  });

  router.add(routes.browseMediaRoute, async ({ auth, c, query }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const edge = await findEdge(s, scope, query.edge_id ? Number(query.edge_id) : undefined, 'view');
    if (!edge) {
      // Nothing in scope provides media: the root lists no providers, and no node below it exists.
      if (query.uri === undefined || query.uri === MEDIA_SOURCE_ROOT) return mediaRoot([]);
      throw notFound('no edge in scope');
    }
    const qs = new URLSearchParams();
    if (query.uri) qs.set('uri', query.uri);
    if (query.target_media_player) qs.set('target_media_player', query.target_media_player);
    return passThrough(
      await access.relay(
        edge.id,
        'GET',
        `/v1/media-source/browse${qs.size ? `?${qs}` : ''}`,
        undefined,
        origin(scope.userId, c),
      ),
    ) as never;
  });
  router.add(routes.resolveMediaRoute, async ({ auth, c, body }) => {
    const scope = await resolveScope(s.database.db, c, userOf(auth));
    const edge = await pickEdge(s, scope, body.edge_id, 'view');
    const out = passThrough(
      await access.relay(
        edge.id,
        'POST',
        '/v1/media-source/resolve',
        { uri: body.uri, target_media_player: body.target_media_player },
        origin(scope.userId, c),
      ),
    ) as { url: string; mime_type: string; extra: Record<string, unknown> };
    // Edge URLs are only reachable on the LAN; hand out the cloud's proxy for the same signed path.
    const edgePath = new URL(out.url, 'http://edge').pathname;
    const base = s.config.publicUrl ?? new URL(c.req.url).origin;
    return {
      ...out,
      url: `${base}/v1/edges/${edge.id}/media${edgePath.replace(/^\/v1\/media/, '')}`,
      extra: { ...out.extra, edge_url: out.url },
    };
  });

  // Media bytes come through the tunnel in bounded ranges: the edge's signature is the only authorization.
  router.add(routes.edgeMediaRoute, async ({ params, c }) => {
    const range = c.req.header('range') ?? 'bytes=0-';
    const res = await access.relay(
      Number(params.id),
      'GET',
      `/v1/media/${encodeURIComponent(params.token)}/${encodeURIComponent(params.filename)}`,
      undefined,
      { userId: null, remoteAddr: clientAddress(c) },
      { range },
    );
    // JSON comes back only as an error: anything else is not media and is not handed out.
    if (res.encoding !== 'base64') {
      if (res.status < 400) return c.json({ error: 'edge_error' }, 502);
      return c.json((res.body ?? { error: 'edge_error' }) as object, res.status as 400);
    }
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers ?? {})) if (k !== 'content-length') headers.set(k, v);
    return new Response(Buffer.from(String(res.body), 'base64'), { status: res.status, headers });
  });
}

/** RFC 9110: If-None-Match is a list of entity tags (weak comparison) or `*`. */
function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (t: string) => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => t.trim() === '*' || bare(t) === bare(etag));
}

/** Below this, compressing costs more than it saves. */
const GZIP_MIN_BYTES = 1024;

/** Accept-Encoding names gzip (or `*`) with a non-zero quality. */
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (name !== 'gzip' && name !== 'x-gzip' && name !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}
