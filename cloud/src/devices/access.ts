import { ServiceName, type EntityState } from '@smarthome/protocol';
import { badRequest, edgeOffline, forbidden, gatewayTimeout, HttpError, notFound } from '@smarthome/protocol/server';
import type { AccessCache } from '../authz/access-cache.ts';
import type { CloudDatabase } from '../db/database.ts';
import type { MirrorStore } from '../mirror/store.ts';
import type { TunnelHub } from '../tunnel/hub.ts';
import { EdgeBusyError, EdgeOfflineError, EdgeTimeoutError, type RpcResult } from '../tunnel/connection.ts';
import type { Visibility } from '../websocket/app-socket.ts';
import { StatesCache, type RenderedStates } from '../mirror/states-cache.ts';
import { grantQueries, type GrantQueries } from './grant-queries.ts';

export interface EdgeGrant {
  edgeId: number;
  orgId: string | null;
  ownerId: string;
  role: 'owner' | 'admin' | 'member';
}
export interface EntityGrant {
  edgeId: number;
  entityId: string;
  canView: boolean;
  canControl: boolean;
  canEdit: boolean;
}

export interface EntityAccessDeps {
  database: CloudDatabase;
  mirror: MirrorStore;
  /** users' grants, emptied by writes to the tables they come from */
  accessCache: AccessCache;
}

const key = (edgeId: number, entityId: string) => `${edgeId}:${entityId}`;

/**
 * Who may see and operate which edge-owned things, in one place:
 * - an edge's owner and the admins of its organization: everything on it;
 * - members of its organization: view and control (can());
 * - an entity shared into an organization (shares, resource_type "entity", resource_id the
 *   entity_id) applies to that entity on the organization's edges and on the sharing admin's
 *   own edges, with the share's flags.
 */
export class EntityAccess {
  private readonly s: EntityAccessDeps;
  private readonly hub: TunnelHub;
  private readonly statesCache: StatesCache;
  private readonly prepared: () => GrantQueries;
  constructor(services: EntityAccessDeps, hub: TunnelHub) {
    this.s = services;
    this.hub = hub;
    this.statesCache = new StatesCache(services.mirror);
    this.prepared = services.database.prepared(grantQueries);
  }
  private get db() {
    return this.s.database.db;
  }

  private get queries(): GrantQueries {
    return this.prepared();
  }

  /** Edges the user reaches whole (not revoked); with orgId, only that organization's. */
  edgeGrants(userId: string, orgId: string | null = null): Promise<EdgeGrant[]> {
    return this.s.accessCache.get(`edges:${userId}:${orgId ?? ''}`, () => this.loadEdgeGrants(userId, orgId));
  }

  private async loadEdgeGrants(userId: string, orgId: string | null): Promise<EdgeGrant[]> {
    const q = this.queries;
    const rows = orgId ? await q.orgEdges.all({ orgId, userId }) : await q.reachableEdges.all({ userId });
    return rows.map((e) => ({
      edgeId: e.id,
      orgId: e.orgId,
      ownerId: e.userId,
      role: e.userId === userId ? 'owner' : e.orgId && e.role === 'admin' ? 'admin' : 'member',
    }));
  }

  /** Entities shared with the user, resolved to the edges they live on. */
  entityGrants(userId: string, orgId: string | null = null): Promise<EntityGrant[]> {
    return this.s.accessCache.get(`shares:${userId}:${orgId ?? ''}`, () => this.loadEntityGrants(userId, orgId));
  }

  private async loadEntityGrants(userId: string, orgId: string | null): Promise<EntityGrant[]> {
    const q = this.queries;
    const rows = orgId ? await q.sharesInOrg.all({ userId, orgId }) : await q.sharesInUserOrgs.all({ userId });
    if (!rows.length) return [];
    const out = new Map<string, EntityGrant>();
    for (const share of rows) {
      const owning = await q.shareEdges.all({ orgId: share.orgId, createdBy: share.createdBy });
      for (const { id } of owning) {
        const k = key(id, share.resourceId);
        const prev = out.get(k) ?? {
          edgeId: id,
          entityId: share.resourceId,
          canView: false,
          canControl: false,
          canEdit: false,
        };
        out.set(k, {
          ...prev,
          canView: prev.canView || share.canView || share.canControl || share.canEdit,
          canControl: prev.canControl || share.canControl,
          canEdit: prev.canEdit || share.canEdit,
        });
      }
    }
    return [...out.values()];
  }

  async visibility(userId: string): Promise<Visibility> {
    const [edgeList, shared] = await Promise.all([this.edgeGrants(userId), this.entityGrants(userId)]);
    return {
      edges: new Set(edgeList.map((e) => e.edgeId)),
      entities: new Set(shared.filter((g) => g.canView).map((g) => key(g.edgeId, g.entityId))),
    };
  }

  /**
   * What states() returns, as the JSON body and an ETag (for GET /v1/entities/states), from the
   * per-edge cache: the same content, without re-serializing unchanged edges.
   */
  async statesBody(userId: string, orgId: string | null = null): Promise<RenderedStates> {
    const { wholeEdges, shared } = await this.viewable(userId, orgId);
    return this.statesCache.render(wholeEdges, shared, () => this.sharedStates(shared));
  }

  /** Current states the user may view, from the mirror (answers while edges are offline). */
  async states(userId: string, orgId: string | null = null): Promise<EntityState[]> {
    const { wholeEdges, shared } = await this.viewable(userId, orgId);
    const out = (await this.s.mirror.states(wholeEdges)).map((s) => ({ ...s }));
    out.push(...(await this.sharedStates(shared)));
    return out;
  }

  /** The edges the user sees whole, and the entities shared with it from other edges. */
  private async viewable(
    userId: string,
    orgId: string | null,
  ): Promise<{ wholeEdges: number[]; shared: EntityGrant[] }> {
    const [edgeList, grants] = await Promise.all([this.edgeGrants(userId, orgId), this.entityGrants(userId, orgId)]);
    const wholeEdges = edgeList.map((e) => e.edgeId);
    const whole = new Set(wholeEdges);
    return { wholeEdges, shared: grants.filter((g) => g.canView && !whole.has(g.edgeId)) };
  }

  private async sharedStates(shared: EntityGrant[]): Promise<EntityState[]> {
    const out: EntityState[] = [];
    for (const g of shared) {
      const st = await this.s.mirror.state([g.edgeId], g.entityId);
      if (st) out.push(st);
    }
    return out;
  }

  /** Finds the entity the user may act on: 404 when invisible, 403 when visible but not allowed. */
  async resolveEntity(
    userId: string,
    entityId: string,
    action: 'view' | 'control',
  ): Promise<{ edgeId: number; state: EntityState }> {
    // One lookup over all of the user's edges (the lowest edge id wins when several hold the entity).
    const own = await this.s.mirror.state(
      (await this.edgeGrants(userId)).map((e) => e.edgeId),
      entityId,
    );
    if (own) return { edgeId: own.edge_id!, state: { ...own } };
    for (const g of await this.entityGrants(userId)) {
      if (g.entityId !== entityId || !g.canView) continue;
      const st = await this.s.mirror.state([g.edgeId], entityId);
      if (!st) continue;
      if (action === 'control' && !g.canControl) throw forbidden();
      return { edgeId: g.edgeId, state: { ...st, edge_id: g.edgeId } };
    }
    throw notFound('entity not found');
  }

  /**
   * The edge to call for an entity the user may control: resolveEntity's answer, but the
   * mirror's lookup of the user's own edges (a round trip on PostgreSQL) is answered from the
   * mirror's in-memory index when it knows (EntityIndex: present entities only, the user's grants
   * checked as always).
   */
  private async edgeFor(userId: string, entityId: string): Promise<number> {
    const own = await this.s.mirror.index.first(
      (await this.edgeGrants(userId)).map((e) => e.edgeId),
      entityId,
    );
    return own ?? (await this.resolveEntity(userId, entityId, 'control')).edgeId;
  }

  /** Calls a service on entities, each relayed to its edge (control permission per entity). */
  async callService(
    userId: string,
    domain: string,
    service: string,
    body: { entity_id: string | string[]; [k: string]: unknown },
    remoteAddr: string | null,
  ): Promise<{ changed_states: EntityState[] }> {
    // The app WebSocket passes domain and service unchecked: they become a path on the edge.
    if (!ServiceName.safeParse(domain).success) throw badRequest('domain: invalid service domain');
    if (!ServiceName.safeParse(service).success) throw badRequest('service: invalid service name');
    const ids = Array.isArray(body.entity_id) ? body.entity_id : [body.entity_id];
    const byEdge = new Map<number, string[]>();
    for (const id of ids) {
      const edgeId = await this.edgeFor(userId, id);
      byEdge.set(edgeId, [...(byEdge.get(edgeId) ?? []), id]);
    }
    const changed: EntityState[] = [];
    for (const [edgeId, entityIds] of byEdge) {
      const res = await this.relay(
        edgeId,
        'POST',
        `/v1/services/${encodeURIComponent(domain)}/${encodeURIComponent(service)}`,
        { ...body, entity_id: entityIds.length === 1 ? entityIds[0] : entityIds },
        { userId, remoteAddr },
      );
      const out = passThrough(res) as { changed_states?: EntityState[] };
      changed.push(...(out?.changed_states ?? []).map((st) => ({ ...st, edge_id: edgeId })));
    }
    return { changed_states: changed };
  }

  /**
   * Relays a call into an edge's local API; tunnel failures become 503/504. The edge trusts the
   * tunnel fully, so a path the edge would resolve to another route (dot segments, a fragment,
   * backslashes) is refused here: callers must encode what they put into it.
   */
  async relay(
    edgeId: number,
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body: unknown,
    origin: { userId: string | null; remoteAddr: string | null },
    headers?: Record<string, string>,
  ): Promise<RpcResult> {
    assertPlainPath(path);
    try {
      return await this.hub.request(edgeId, {
        method,
        path,
        body,
        headers,
        origin: { via: 'cloud', user_id: origin.userId, remote_addr: origin.remoteAddr },
      });
    } catch (err) {
      if (err instanceof EdgeOfflineError) throw edgeOffline();
      if (err instanceof EdgeTimeoutError) throw gatewayTimeout();
      if (err instanceof EdgeBusyError) throw new HttpError(503, 'edge_busy', { headers: { 'Retry-After': '1' } });
      throw err;
    }
  }
}

/** 400 unless the edge would route `path` exactly as written (same pathname, no fragment). */
export function assertPlainPath(path: string): void {
  const q = path.indexOf('?');
  const pathname = q === -1 ? path : path.slice(0, q);
  if (
    !pathname.startsWith('/') ||
    path.includes('#') ||
    /[\\\s]/.test(pathname) ||
    new URL(pathname, 'http://edge.internal').pathname !== pathname
  ) {
    throw badRequest('invalid path');
  }
}

/** Turns an edge's answer into the cloud's: success passes through, errors keep their status and body. */
export function passThrough(res: RpcResult): unknown {
  if (res.status >= 400) {
    const body = (res.body ?? {}) as Record<string, unknown>;
    const text =
      typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : 'edge error';
    throw new HttpError(res.status >= 500 && res.status !== 503 && res.status !== 504 ? 502 : res.status, text);
  }
  return res.body;
}
