import type { EntityState } from '@smarthome/protocol';
import { HaCommandError } from '@smarthome/protocol/server/ha/index';
import type { EntityAccess } from '../devices/access.ts';
import type { MirrorStore } from '../mirror/store.ts';
import type { Scope } from './relay.ts';

/** The whole edges the caller reaches in its organization scope, and the viewable shares on other edges. */
export async function scopeOf(access: EntityAccess, userId: string, orgId: string | null): Promise<Scope> {
  const [edges, grants] = await Promise.all([access.edgeGrants(userId, orgId), access.entityGrants(userId, orgId)]);
  const whole = new Set(edges.map((e) => e.edgeId));
  return { edges, shared: grants.filter((g) => g.canView && !whole.has(g.edgeId)) };
}

/** Mirror states in scope (one per entity_id, from the lowest edge id), each with its edge. */
export async function statesInScope(mirror: MirrorStore, { edges, shared }: Scope): Promise<EntityState[]> {
  const all = await mirror.states(edges.map((e) => e.edgeId));
  for (const g of shared) {
    const st = await mirror.state([g.edgeId], g.entityId);
    if (st) all.push(st);
  }
  all.sort((a, b) => (a.edge_id ?? 0) - (b.edge_id ?? 0));
  const seen = new Map<string, EntityState>();
  for (const st of all) if (!seen.has(st.entity_id)) seen.set(st.entity_id, st);
  return [...seen.values()].sort((a, b) => a.entity_id.localeCompare(b.entity_id));
}

/** The edge holding an entity the caller may control: not_found when invisible, unauthorized when view-only. */
export async function controllableEdge(mirror: MirrorStore, scope: Scope, entityId: string): Promise<number> {
  const own = await mirror.state(
    scope.edges.map((e) => e.edgeId),
    entityId,
  );
  if (own?.edge_id !== undefined && own.edge_id !== null) return own.edge_id;
  const grant = scope.shared.filter((g) => g.entityId === entityId).sort((a, b) => a.edgeId - b.edgeId)[0];
  if (grant) {
    if (!grant.canControl) throw new HaCommandError('unauthorized', 'Not allowed to control this entity (view-only).');
    return grant.edgeId;
  }
  throw new HaCommandError('not_found', 'Entity not found.');
}
