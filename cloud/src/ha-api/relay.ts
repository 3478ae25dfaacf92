import type { EntityState } from '@smarthome/protocol';
import {
  HaRelayResult,
  type HaEvent,
  type HaRelayBody,
  type HaLogbookEntry,
  type HaState,
} from '@smarthome/protocol/ha/index';
import {
  HaCommandError,
  HaRawJson,
  type HaHistoryQuery,
  type HaLogbookQuery,
} from '@smarthome/protocol/server/ha/index';
import type { RpcResult } from '../tunnel/connection.ts';
import type { EdgeGrant, EntityGrant } from '../devices/access.ts';
import { assertShallow, checkEdgeAnswer, toHaError } from './errors.ts';

/** What the caller reaches: whole edges (with its role there) and entities shared with it on other edges. */
export interface Scope {
  edges: EdgeGrant[];
  shared: EntityGrant[];
}

/** What the relay needs of the cloud, passed in (kept local to ha-api). */
export interface HaRelayDeps<P extends { userId: string }> {
  /** a call into an edge's local API through the tunnel (EntityAccess.relay) */
  relay(
    edgeId: number,
    method: 'POST',
    path: string,
    body: unknown,
    origin: { userId: string | null; remoteAddr: string | null },
  ): Promise<RpcResult>;
  scope(p: P): Promise<Scope>;
  /** the mirror states the caller may view, one per entity_id, each with its edge */
  visibleStates(p: P, scope: Scope): Promise<EntityState[]>;
  /** the edge of an entity the caller may control (not_found / unauthorized otherwise) */
  controllable(p: P, scope: Scope, entityId: string): Promise<number>;
}

const ENTITY_ID = /^[a-z0-9_]+\.[a-z0-9_]+$/;
const isAdmin = (g: EdgeGrant) => g.role === 'owner' || g.role === 'admin';
const whenSeconds = (e: HaLogbookEntry) => (typeof e.when === 'number' ? e.when : Date.parse(e.when) / 1000);

/**
 * The HA commands only an edge can answer (its recorder, its automation engine, its state
 * machine), relayed through the tunnel to `POST /v1/ha/relay` after the cloud checked the
 * caller: reads go to every edge in scope for the entities the caller may view and are merged
 * (an offline edge's part is missing; only when no edge answered is it an error), writes and
 * scripts to the one edge they concern.
 */
export class HaRelay<P extends { userId: string }> {
  private readonly deps: HaRelayDeps<P>;

  constructor(deps: HaRelayDeps<P>) {
    this.deps = deps;
  }

  /** One relayed operation; the edge's HA error comes back as the same HaCommandError. */
  async call(p: P, edgeId: number, body: HaRelayBody): Promise<unknown> {
    let res: RpcResult;
    try {
      res = await this.deps.relay(edgeId, 'POST', '/v1/ha/relay', body, { userId: p.userId, remoteAddr: null });
      checkEdgeAnswer(res);
    } catch (err) {
      throw toHaError(err, edgeId);
    }
    const out = HaRelayResult.safeParse(res.body);
    if (!out.success) throw new HaCommandError('home_assistant_error', `Edge ${edgeId} gave an invalid answer.`);
    if (!out.data.success) throw new HaCommandError(out.data.error.code, out.data.error.message);
    return out.data.result;
  }

  /**
   * Asks every edge of `byEdge` at once: the answers that came, or the first error when none did
   * (an edge that is offline or slow only loses its own part).
   */
  private async gather(p: P, byEdge: Map<number, HaRelayBody>): Promise<unknown[]> {
    const settled = await Promise.allSettled([...byEdge].map(([edgeId, body]) => this.call(p, edgeId, body)));
    const answered = settled.filter((r) => r.status === 'fulfilled').map((r) => r.value);
    if (answered.length === 0 && settled.length > 0) throw (settled[0] as PromiseRejectedResult).reason;
    return answered;
  }

  /** The visible entities (filtered by `wanted`), grouped by the edge that shows them. */
  private async entitiesByEdge(p: P, scope: Scope, wanted: string[] | undefined): Promise<Map<number, string[]>> {
    const filter = wanted ? new Set(wanted) : null;
    const out = new Map<number, string[]>();
    for (const s of await this.deps.visibleStates(p, scope)) {
      if (filter && !filter.has(s.entity_id)) continue;
      const edgeId = s.edge_id ?? 0;
      out.set(edgeId, [...(out.get(edgeId) ?? []), s.entity_id]);
    }
    return out;
  }

  async history(p: P, query: HaHistoryQuery): Promise<HaRawJson> {
    const scope = await this.deps.scope(p);
    const byEdge = new Map<number, HaRelayBody>();
    for (const [edgeId, ids] of await this.entitiesByEdge(p, scope, query.entity_ids))
      byEdge.set(edgeId, { op: 'history', query: { ...query, entity_ids: ids } });
    const parts = await this.gather(p, byEdge);
    // serialised once here, sent as is (as the edge does)
    if (query.format === 'rest') return new HaRawJson(JSON.stringify((parts as unknown[][][]).flat()));
    return new HaRawJson(JSON.stringify(Object.assign({}, ...(parts as Record<string, unknown[]>[]))));
  }

  /**
   * Whole edges without an entity filter are asked for everything (their own events too); edges
   * the caller sees through shares only for the shared entities.
   */
  async logbook(p: P, query: HaLogbookQuery): Promise<HaLogbookEntry[]> {
    const scope = await this.deps.scope(p);
    const byEdge = new Map<number, HaRelayBody>();
    const whole = new Set(scope.edges.map((e) => e.edgeId));
    if (!query.entity_ids) for (const edgeId of whole) byEdge.set(edgeId, { op: 'logbook', query });
    for (const [edgeId, ids] of await this.entitiesByEdge(p, scope, query.entity_ids))
      if (query.entity_ids || !whole.has(edgeId))
        byEdge.set(edgeId, { op: 'logbook', query: { ...query, entity_ids: ids } });
    const parts = (await this.gather(p, byEdge)) as HaLogbookEntry[][];
    return parts.flat().sort((a, b) => whenSeconds(a) - whenSeconds(b));
  }

  /**
   * execute_script runs on one edge the caller owns or administers (HA lets only admins run
   * scripts: a script may publish MQTT, fire events or call URLs, more than control): the edge
   * of the entities the sequence names, or the only such edge when it names none.
   */
  async executeScript(p: P, sequence: unknown, variables: Record<string, unknown>): Promise<unknown> {
    if (sequence === undefined)
      throw new HaCommandError('invalid_format', "required key not provided @ data['sequence']");
    assertShallow({ sequence, variables });
    const edgeId = await this.adminEdgeFor(p, entityIdsIn(sequence), 'Running scripts');
    return this.call(p, edgeId, { op: 'execute_script', sequence, variables });
  }

  /** The edge a script or trigger concerns: one the caller administers, holding every entity it names. */
  async adminEdgeFor(p: P, entityIds: string[], what: string): Promise<number> {
    const scope = await this.deps.scope(p);
    const admin = scope.edges.filter(isAdmin).map((e) => e.edgeId);
    const edges = new Set<number>();
    for (const id of entityIds) {
      const edgeId = await this.deps.controllable(p, scope, id);
      if (!admin.includes(edgeId))
        throw new HaCommandError(
          'unauthorized',
          `${what} needs an edge you own or administer (${id} is on edge ${edgeId}).`,
        );
      edges.add(edgeId);
    }
    if (edges.size === 1) return [...edges][0];
    if (edges.size > 1)
      throw new HaCommandError(
        'invalid_format',
        `The entities are on several edges (${[...edges].join(', ')}): send one per edge.`,
      );
    if (admin.length === 1) return admin[0];
    if (admin.length === 0) throw new HaCommandError('unauthorized', `${what} needs an edge you own or administer.`);
    throw new HaCommandError(
      'invalid_format',
      `No entity named: cannot tell which of your edges (${admin.join(', ')}) to use; name an entity, or use organization_id.`,
    );
  }

  /** validate_config checks shapes only: any edge in scope that answers will do. */
  async validateConfig(p: P, kind: 'trigger' | 'condition' | 'action', config: unknown): Promise<string | null> {
    assertShallow({ config });
    const scope = await this.deps.scope(p);
    const edgeIds = [...new Set([...scope.edges.map((e) => e.edgeId), ...scope.shared.map((g) => g.edgeId)])];
    if (!edgeIds.length) throw new HaCommandError('home_assistant_error', 'No edge in scope to validate with.');
    let last: unknown;
    for (const edgeId of edgeIds) {
      try {
        return (await this.call(p, edgeId, { op: 'validate_config', kind, config })) as string | null;
      } catch (err) {
        if (!(err instanceof HaCommandError) || err.code !== 'home_assistant_error') throw err;
        last = err;
      }
    }
    throw last;
  }

  /**
   * POST /api/states: an entity the caller sees needs control, on its edge; a new entity id is
   * created on the edge the caller administers (only when there is exactly one).
   */
  async setState(
    p: P,
    entityId: string,
    state: string,
    attributes: Record<string, unknown>,
    forceUpdate: boolean,
  ): Promise<{ state: HaState; created: boolean }> {
    if (!ENTITY_ID.test(entityId) || state.length > 255)
      throw new HaCommandError('invalid_format', 'Invalid entity ID specified.');
    assertShallow(attributes);
    const scope = await this.deps.scope(p);
    const visible = (await this.deps.visibleStates(p, scope)).some((s) => s.entity_id === entityId);
    const edgeId = visible
      ? await this.deps.controllable(p, scope, entityId)
      : await this.adminEdgeFor(p, [], 'Creating an entity');
    return (await this.call(p, edgeId, {
      op: 'set_state',
      entity_id: entityId,
      state,
      attributes,
      force_update: forceUpdate,
    })) as { state: HaState; created: boolean };
  }

  /** DELETE /api/states: false (404) for an entity the caller does not see; control needed otherwise. */
  async removeState(p: P, entityId: string): Promise<boolean> {
    const scope = await this.deps.scope(p);
    if (!(await this.deps.visibleStates(p, scope)).some((s) => s.entity_id === entityId)) return false;
    const edgeId = await this.deps.controllable(p, scope, entityId);
    return (await this.call(p, edgeId, { op: 'remove_state', entity_id: entityId })) === true;
  }
}

/** The literal entity ids a sequence names (`entity_id` keys at any depth; templates are not resolved). */
export function entityIdsIn(value: unknown): string[] {
  const out = new Set<string>();
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== 'object') continue;
    for (const [k, child] of Object.entries(v)) {
      if (k === 'entity_id')
        for (const id of Array.isArray(child) ? child : [child])
          if (typeof id === 'string' && ENTITY_ID.test(id.trim().toLowerCase())) out.add(id.trim().toLowerCase());
      if (child && typeof child === 'object') stack.push(child);
    }
  }
  return [...out];
}

/**
 * logbook/event_stream on the cloud: the period's entries from the edges, then (when the period
 * reaches now) each state change the caller may view, filtered as the edge's stream filters them
 * (state changes only, not attribute updates or sensors with a unit).
 */
export async function streamLogbook<P extends { userId: string }>(
  relay: HaRelay<P>,
  subscribeStates: (p: P, listener: (event: HaEvent) => void) => () => void,
  p: P,
  query: Omit<HaLogbookQuery, 'format'>,
  listener: (update: { events: HaLogbookEntry[]; start_time?: number; end_time?: number }) => void,
): Promise<() => void> {
  const nowS = Date.now() / 1000;
  const end = Math.min(query.end ?? nowS, nowS);
  const live = query.end === undefined || query.end > nowS;
  const wanted = query.entity_ids ? new Set(query.entity_ids) : null;
  // listen before reading the past, so nothing falls between the two; held until the past is sent
  let held: HaLogbookEntry[] | null = [];
  const unsubscribe = live
    ? subscribeStates(p, (event) => {
        const {
          entity_id: id,
          old_state: before,
          new_state: s,
        } = event.data as {
          entity_id: string;
          old_state: HaState | null;
          new_state: HaState | null;
        };
        if (!s || (wanted && !wanted.has(id)) || before?.state === s.state) return;
        if (id.startsWith('sensor.') && ('unit_of_measurement' in s.attributes || 'state_class' in s.attributes))
          return;
        const when = Date.parse(s.last_updated) / 1000;
        if (query.end !== undefined && when >= query.end) return;
        const entry: HaLogbookEntry = { when, state: s.state, entity_id: id };
        if (typeof s.attributes.icon === 'string') entry.icon = s.attributes.icon;
        if (held) held.push(entry);
        else listener({ events: [entry] });
      })
    : () => {};
  try {
    listener({
      events: await relay.logbook(p, { ...query, format: 'websocket', end }),
      start_time: query.start,
      end_time: end,
    });
  } catch (err) {
    unsubscribe();
    throw err;
  }
  for (const entry of held) listener({ events: [entry] });
  held = null;
  return unsubscribe;
}
