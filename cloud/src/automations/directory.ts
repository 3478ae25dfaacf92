import { and, eq, ne } from 'drizzle-orm';
import type { Automation, Edge, tunnel } from '@smarthome/protocol';
import { badRequest, forbidden, notFound } from '@smarthome/protocol/server';
import type { CloudDatabase } from '../db/database.ts';
import type { MirrorStore } from '../mirror/store.ts';
import type { TunnelHub } from '../tunnel/hub.ts';
import { can } from '../authz/can.ts';
import { edgeResource, type EdgeRegistry } from '../edges/registry.ts';
import { edges } from '../edges/tables.ts';
import { mirrorAutomations } from '../mirror/tables.ts';
import type { Scope } from '../orgs/scope.ts';
import type { EdgeGrant, EntityAccess } from '../devices/access.ts';

export type MirroredAutomation = Awaited<ReturnType<MirrorStore['automations']>>[number];

export interface AutomationDirectoryDeps {
  database: CloudDatabase;
  edges: EdgeRegistry;
  mirror: MirrorStore;
  tunnel: Pick<TunnelHub, 'isOnline'>;
  access: Pick<EntityAccess, 'edgeGrants'>;
}

/** The caller's way to one automation: the edge it lives on and what the caller may do there. */
export interface Located {
  summary: MirroredAutomation;
  grant: EdgeGrant;
}

/**
 * Where automations live, for the cloud: every definition is stored on an edge; the cloud
 * knows them through the mirror's summaries ({id, edge_id, alias, enabled, mode, webhook_id}).
 * Visibility follows the edges (EntityAccess.edgeGrants): owners and organization admins
 * may edit, organization members may view.
 */
export class AutomationDirectory {
  private readonly s: AutomationDirectoryDeps;
  constructor(services: AutomationDirectoryDeps) {
    this.s = services;
  }

  /** The caller's edges: with an organization scope only that organization's. */
  grants(scope: Scope): Promise<EdgeGrant[]> {
    return this.s.access.edgeGrants(scope.userId, scope.orgId);
  }

  /** Summaries of the automations on the given edges (the mirror: answers while they are offline). */
  summaries(edgeIds: number[]): Promise<MirroredAutomation[]> {
    return this.s.mirror.automations(edgeIds);
  }

  /** Finds an automation on an edge the caller can see: 404 otherwise; 403 when `edit` is asked of a mere member. */
  async locate(scope: Scope, id: string, action: 'view' | 'edit'): Promise<Located> {
    const grants = await this.grants(scope);
    const summary = (await this.summaries(grants.map((g) => g.edgeId))).find((a) => a.id === id);
    const grant = summary && grants.find((g) => g.edgeId === summary.edge_id);
    if (!summary || !grant) throw notFound('automation not found');
    if (action === 'edit' && grant.role === 'member') throw forbidden();
    return { summary, grant };
  }

  /**
   * The edge a new automation goes to: the given edge_id (404 when the caller cannot see it or
   * it is outside the organization in scope, 403 without edit rights), or the scope's only
   * home edge (404 when there is none, 400 when there are several). Same rule as the device routes.
   */
  async pickEdge(scope: Scope, edgeId: number | undefined): Promise<Edge> {
    if (edgeId !== undefined) {
      const edge = await this.loadEdge(scope.userId, edgeId);
      if (scope.orgId && edge.org_id !== scope.orgId) throw notFound('edge not found');
      return edge;
    }
    const candidates = (await this.s.edges.list(scope)).filter((e) => e.status !== 'revoked' && e.location === 'home');
    if (candidates.length === 0) throw notFound('no edge in scope');
    if (candidates.length > 1) throw badRequest('edge_id: required when the scope has several edges');
    return this.loadEdge(scope.userId, candidates[0].id);
  }

  private async loadEdge(userId: string, id: number): Promise<Edge> {
    const db = this.s.database.db;
    const edge = await this.s.edges.get(id);
    if (!edge || edge.status === 'revoked' || !(await can(db, userId, 'view', edgeResource(edge))))
      throw notFound('edge not found');
    if (!(await can(db, userId, 'edit', edgeResource(edge)))) throw forbidden();
    return edge;
  }

  /** The billing scope an edge's automations count in: its organization, or its owner's personal scope. */
  static billingScope(edge: Edge, caller: Scope): Scope {
    if (edge.org_id)
      return caller.kind === 'org' && caller.orgId === edge.org_id
        ? caller
        : { kind: 'org', userId: caller.userId, orgId: edge.org_id, role: 'member' };
    return { kind: 'personal', userId: edge.user_id, orgId: null };
  }

  /**
   * The automation that owns a webhook_id, on an edge that is not revoked, or null. Deleting
   * the automation removes it from the mirror, so a revoked webhook_id is unknown here.
   * Indexed by mirror_automations_webhook (mirror-002).
   */
  async findWebhook(
    webhookId: string,
  ): Promise<{ edgeId: number; automationId: string; enabled: boolean; edgeStatus: Edge['status'] } | null> {
    const row = await this.s.database.db
      .select({
        edgeId: mirrorAutomations.edgeId,
        automationId: mirrorAutomations.id,
        enabled: mirrorAutomations.enabled,
        edgeStatus: edges.status,
      })
      .from(mirrorAutomations)
      .innerJoin(edges, eq(edges.id, mirrorAutomations.edgeId))
      .where(and(eq(mirrorAutomations.webhookId, webhookId), ne(edges.status, 'revoked')))
      .limit(1)
      .get();
    return row ?? null;
  }

  /**
   * Whether the edge can be asked now: its tunnel is here, or the registry (shared by every
   * cloud replica) says it is connected somewhere. A stale 'online' only costs a relay that
   * answers 503 anyway.
   */
  reachable(edgeId: number, status: Edge['status']): boolean {
    return status === 'online' || this.s.tunnel.isOnline(edgeId);
  }

  /** Keeps the mirror in step with a write the edge just confirmed (its own delta may still be in flight). */
  async remember(edgeId: number, a: Automation): Promise<void> {
    const summary: tunnel.Snapshot['automations'][number] = {
      id: a.id,
      edge_id: edgeId,
      alias: a.alias,
      enabled: a.enabled,
      mode: a.mode,
      webhook_id: a.webhook_id,
    };
    await this.s.mirror.applyDelta(edgeId, { kind: 'automation_upsert', automation: summary });
  }

  async forget(edgeId: number, id: string): Promise<void> {
    await this.s.mirror.applyDelta(edgeId, { kind: 'automation_remove', id });
  }
}
