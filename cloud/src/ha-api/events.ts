import type { HaEvent } from '@smarthome/protocol/ha/index';
import { newContextId, toHaState, type Unsubscribe } from '@smarthome/protocol/server/ha/index';
import type { Logger } from '../log.ts';
import type { EdgeEvent, StateChanged } from '../tunnel/hub.ts';
import { Audience, type Viewer } from '../websocket/audience.ts';
import type { Visibility } from '../websocket/interest.ts';
import type { Scope } from './relay.ts';

type Listener = { eventType: string | undefined; fn: (event: HaEvent) => void };

/** One caller's listeners (an HA session's, or a REST call's), with what it may see as the Audience keeps it. */
interface HaViewer<P> extends Viewer {
  principal: P;
  listeners: Set<Listener>;
}

const key = (edgeId: number, entityId: string) => `${edgeId}:${entityId}`;

/** A scope as the Audience indexes it: whole edges, and "edge:entity" for the shares on other edges. */
export const visibilityOf = ({ edges, shared }: Scope): Visibility => ({
  edges: new Set(edges.map((g) => g.edgeId)),
  entities: new Set(shared.map((g) => key(g.edgeId, g.entityId))),
});

/**
 * subscribe_events (and what is built on it: subscribe_entities, templates, logbook streams) for
 * cloud callers. The listeners are grouped by principal (one per HA session) and indexed by what
 * it may see (the app socket's Audience), so an edge event visits only the callers concerned.
 * A caller's scope loads once; forget() (a grant-change notice) drops it at once, and the next
 * event goes by the reloaded scope.
 */
export class HaEventListeners<P extends { userId: string }> {
  private readonly since: string;
  private readonly viewers = new Map<P, HaViewer<P>>();
  private readonly audience: Audience<HaViewer<P>, Set<Listener>>;

  /** since: the last_changed of states that carry none; ttlMs: the background reload of a scope no notice reported */
  constructor(deps: { scope: (p: P) => Promise<Scope>; since: string; log: Logger; ttlMs?: number }) {
    this.since = deps.since;
    this.audience = new Audience({
      visibility: async (viewer) => visibilityOf(await deps.scope(viewer.principal)),
      log: deps.log,
      ttlMs: deps.ttlMs ?? 5000,
    });
  }

  start(): void {
    this.audience.start();
  }

  stop(): void {
    this.audience.stop();
  }

  subscribe(principal: P, eventType: string | undefined, fn: (event: HaEvent) => void): Unsubscribe {
    let viewer = this.viewers.get(principal);
    if (!viewer) {
      viewer = {
        principal,
        listeners: new Set(),
        userId: principal.userId,
        ended: false,
        visibility: null,
        loadedAt: 0,
        loading: null,
        visibilityGeneration: 0,
      };
      this.viewers.set(principal, viewer);
      this.audience.join(viewer, viewer.listeners);
    }
    const listener: Listener = { eventType, fn };
    viewer.listeners.add(listener);
    const joined = viewer;
    return () => {
      joined.listeners.delete(listener);
      if (joined.listeners.size > 0 || this.viewers.get(principal) !== joined) return;
      joined.ended = true;
      this.viewers.delete(principal);
      this.audience.leave(joined);
    };
  }

  /** Grants changed (SessionRegistry.accessChanged): the caller's scope is reloaded before its next event. */
  forget(principal: P): void {
    const viewer = this.viewers.get(principal);
    if (viewer) this.audience.forget(viewer);
  }

  /** A state change of an edge (this replica's tunnels, and the others' through Redis): to whoever may view it. */
  async fanOut(e: StateChanged): Promise<void> {
    const wants = (l: Listener) => l.eventType === undefined || l.eventType === 'state_changed';
    let event: HaEvent | null = null;
    const deliver = (listeners: Set<Listener>) => {
      for (const l of [...listeners]) {
        // a listener may end while an earlier one runs
        if (!wants(l) || !listeners.has(l)) continue;
        l.fn((event ??= this.stateEvent(e)));
      }
    };
    for (const [, listeners] of this.audience.entity(e.edgeId, e.entity_id)) deliver(listeners);
    this.audience.forUnknown(
      (viewer) => [...viewer.listeners].some(wants),
      (vis) => vis.edges.has(e.edgeId) || vis.entities.has(key(e.edgeId, e.entity_id)),
      deliver,
    );
  }

  /** An edge's other bus events: to subscribers of the type (or of all) who see the whole edge, as the app socket does. */
  async fanOutEvent(e: EdgeEvent): Promise<void> {
    const wants = (l: Listener) => l.eventType === undefined || l.eventType === e.event.event_type;
    const event = {
      ...e.event,
      data: e.event.data ?? {},
      origin: e.event.origin === 'REMOTE' ? 'REMOTE' : 'LOCAL',
    } as HaEvent;
    const deliver = (listeners: Set<Listener>) => {
      for (const l of [...listeners]) if (wants(l) && listeners.has(l)) l.fn(event);
    };
    for (const [, listeners] of this.audience.wholeEdge(e.edgeId)) deliver(listeners);
    this.audience.forUnknown(
      (viewer) => [...viewer.listeners].some(wants),
      (vis) => vis.edges.has(e.edgeId),
      deliver,
    );
  }

  /** GET /api/events: the user's own subscriptions on this replica, per event type ("*" = all types) */
  counts(userId: string): { event: string; listener_count: number }[] {
    const counts = new Map<string, number>();
    for (const viewer of this.viewers.values()) {
      if (viewer.principal.userId !== userId) continue;
      for (const l of viewer.listeners) counts.set(l.eventType ?? '*', (counts.get(l.eventType ?? '*') ?? 0) + 1);
    }
    return [...counts].map(([event, listener_count]) => ({ event, listener_count }));
  }

  private stateEvent(e: StateChanged): HaEvent {
    const oldState = e.old_state && toHaState(e.old_state, this.since);
    const newState = e.new_state && toHaState(e.new_state, this.since);
    return {
      event_type: 'state_changed',
      data: { entity_id: e.entity_id, old_state: oldState, new_state: newState },
      origin: 'LOCAL',
      time_fired: new Date().toISOString(),
      context: newState?.context ?? { id: newContextId(), parent_id: null, user_id: null },
    };
  }
}
