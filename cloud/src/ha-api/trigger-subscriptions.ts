import { randomUUID } from 'node:crypto';
import type { EntityState } from '@smarthome/protocol';
import type { HaRelayBody, HaTriggerEvent } from '@smarthome/protocol/ha/index';
import { HaCommandError, type Unsubscribe } from '@smarthome/protocol/server/ha/index';
import type { Logger } from '../log.ts';
import type { TriggerFired } from '../tunnel/hub.ts';
import { assertShallow } from './errors.ts';
import { entityIdsIn, type Scope } from './relay.ts';

export interface TriggerSubscriptionDeps<P> {
  /** one relayed operation on an edge (HaRelay.call): HA's error comes back as HaCommandError */
  call(p: P, edgeId: number, body: HaRelayBody): Promise<unknown>;
  scope(p: P): Promise<Scope>;
  /** the mirror states the caller may view, one per entity_id, each with its edge */
  visibleStates(p: P, scope: Scope): Promise<EntityState[]>;
  log: Pick<Logger, 'warn'>;
}

interface Subscription<P> {
  principal: P;
  trigger: unknown;
  variables: Record<string, unknown>;
  /** the edges it is (or, while one is offline, will again be) armed on */
  edges: Set<number>;
  listener: (event: HaTriggerEvent) => void;
}

const key = (edgeId: number, entityId: string) => `${edgeId}:${entityId}`;

/**
 * subscribe_trigger on the cloud: the trigger is armed on the edges it concerns through the
 * relay (op subscribe_trigger, under an id unique across replicas), and each fire comes back as a
 * tunnel `trigger` message (on whichever replica holds the tunnel: the cluster forwards it here).
 *
 * - Which edges: a trigger naming entities goes to the edges showing those entities to the
 *   caller (not_found for one it may not view); one naming none (time, time_pattern, event, mqtt)
 *   to every whole edge in scope, never to an edge the caller reaches only through shares (an
 *   event or MQTT trigger would expose that edge's other traffic).
 * - Each fire is checked again against the caller's scope now: a fire about an entity must be
 *   about one the caller views on that edge; one about no entity needs the whole edge.
 * - An edge offline at subscribe time, or going offline later, drops nothing here: the edge
 *   forgets the cloud's subscriptions when its tunnel closes and they are made again when it says
 *   hello (fires in between are lost, as HA's are while it restarts). Only when no edge could arm
 *   the trigger is the subscription refused ("Edge N is offline.").
 */
export class CloudTriggerSubscriptions<P extends { userId: string }> {
  private readonly deps: TriggerSubscriptionDeps<P>;
  private readonly subs = new Map<string, Subscription<P>>();
  /** subscription ids by edge: an edge's hello (thousands in a reconnect storm) visits its own, not all */
  private readonly byEdge = new Map<number, Set<string>>();

  constructor(deps: TriggerSubscriptionDeps<P>) {
    this.deps = deps;
  }

  async subscribe(
    p: P,
    trigger: unknown,
    variables: Record<string, unknown>,
    listener: (event: HaTriggerEvent) => void,
  ): Promise<Unsubscribe> {
    assertShallow({ trigger, variables });
    const edges = await this.targetEdges(p, trigger);
    const id = `${randomUUID()}`;
    const sub: Subscription<P> = { principal: p, trigger, variables, edges, listener };
    // registered first: a fire may come back before the last edge answered
    this.subs.set(id, sub);
    for (const edgeId of edges) this.index(edgeId, id, true);
    const settled = await Promise.allSettled(
      [...edges].map((edgeId) =>
        this.deps.call(p, edgeId, { op: 'subscribe_trigger', subscription: id, trigger, variables }),
      ),
    );
    const failures: unknown[] = [];
    [...edges].forEach((edgeId, i) => {
      const r = settled[i];
      if (r.status === 'fulfilled') return;
      // an edge from before subscribe_trigger relays refuses the op itself (its body check, a 400):
      // it is left out, not re-armed after a reconnect
      if (r.reason instanceof HaCommandError && r.reason.code === 'service_validation_error') {
        edges.delete(edgeId);
        this.index(edgeId, id, false);
        this.deps.log.warn('edge cannot arm triggers for the cloud (update it)', { edgeId });
        failures.push(new HaCommandError('home_assistant_error', `Edge ${edgeId} cannot arm triggers: update it.`));
      } else failures.push(r.reason);
    });
    // an edge that refused the trigger (invalid_format…) speaks for all: they run the same engine
    const refused = failures.find((err) => !(err instanceof HaCommandError) || err.code !== 'home_assistant_error');
    if (refused || failures.length === settled.length) {
      this.end(id);
      throw refused ?? failures[0];
    }
    return () => this.end(id);
  }

  /** The edges a trigger goes to, for this caller. */
  private async targetEdges(p: P, trigger: unknown): Promise<Set<number>> {
    const scope = await this.deps.scope(p);
    const items = Array.isArray(trigger) ? trigger : [trigger];
    const out = new Set<number>();
    let visible: Map<string, number> | null = null;
    for (const item of items) {
      const ids = entityIdsIn(item);
      if (!ids.length) {
        for (const e of scope.edges) out.add(e.edgeId);
        continue;
      }
      visible ??= new Map((await this.deps.visibleStates(p, scope)).map((s) => [s.entity_id, s.edge_id ?? 0]));
      for (const entityId of ids) {
        const edgeId = visible.get(entityId);
        if (edgeId === undefined) throw new HaCommandError('not_found', `Entity ${entityId} not found.`);
        out.add(edgeId);
      }
    }
    if (!out.size) throw new HaCommandError('home_assistant_error', 'No edge in scope to subscribe on.');
    return out;
  }

  private end(id: string): void {
    const sub = this.subs.get(id);
    if (!sub) return;
    this.subs.delete(id);
    for (const edgeId of sub.edges) this.index(edgeId, id, false);
    for (const edgeId of sub.edges)
      // an offline edge has dropped it already (its tunnel closed)
      this.deps
        .call(sub.principal, edgeId, { op: 'unsubscribe_trigger', subscription: id })
        .catch((err: Error) => this.deps.log.warn('unsubscribing a trigger failed', { edgeId, err: err.message }));
  }

  /** A fire from an edge's tunnel (this replica's, or another's through the cluster). */
  async fired(e: TriggerFired): Promise<void> {
    const sub = this.subs.get(e.subscription);
    if (!sub || !sub.edges.has(e.edgeId)) return;
    const scope = await this.deps.scope(sub.principal);
    const whole = scope.edges.some((g) => g.edgeId === e.edgeId);
    const trigger = e.variables.trigger as { entity_id?: unknown } | undefined;
    const entityId = typeof trigger?.entity_id === 'string' ? trigger.entity_id : null;
    const allowed =
      whole || (entityId !== null && scope.shared.some((g) => key(g.edgeId, g.entityId) === key(e.edgeId, entityId)));
    if (!allowed || !this.subs.has(e.subscription)) return;
    sub.listener({ variables: e.variables, context: e.context });
  }

  /** An edge said hello (here or on another replica): it lost the cloud's subscriptions, make them again. */
  async edgeOnline(edgeId: number): Promise<void> {
    const ids = this.byEdge.get(edgeId);
    if (!ids) return;
    await Promise.all(
      [...ids].map(async (id) => {
        const sub = this.subs.get(id)!;
        try {
          await this.deps.call(sub.principal, edgeId, {
            op: 'subscribe_trigger',
            subscription: id,
            trigger: sub.trigger,
            variables: sub.variables,
          });
          // ended while this was on its way: its unsubscribe may have reached the edge first
          if (!this.subs.has(id))
            await this.deps.call(sub.principal, edgeId, { op: 'unsubscribe_trigger', subscription: id });
        } catch (err) {
          this.deps.log.warn('re-arming a trigger failed', { edgeId, err: (err as Error).message });
        }
      }),
    );
  }

  private index(edgeId: number, id: string, add: boolean): void {
    let ids = this.byEdge.get(edgeId);
    if (add) {
      if (!ids) this.byEdge.set(edgeId, (ids = new Set()));
      ids.add(id);
      return;
    }
    ids?.delete(id);
    if (ids?.size === 0) this.byEdge.delete(edgeId);
  }

  /** How many subscriptions this replica holds (tests). */
  get size(): number {
    return this.subs.size;
  }
}
