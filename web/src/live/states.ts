import { useEffect, useState } from 'preact/hooks';
import { createConnection, subscribeEntities, type Connection, type HassEntities } from 'home-assistant-js-websocket';
import { portalSocket, type PortalAuth } from './socket.ts';

/**
 * Live entity states through home-assistant-js-websocket on `/api/websocket` (the cloud's and the
 * edge's speak the same Home Assistant protocol): `subscribe_entities`' compressed diffs, the
 * library's reconnect (back-off up to 5 s, subscriptions renewed), our auth phase (socket.ts).
 * Changes are delivered at most once per animation frame, so a burst of updates costs one render,
 * and only the ids that changed are named: the library keeps an entity's object until it changes,
 * so one identity comparison per entity and frame finds them.
 */

export interface LiveState {
  entity_id: string;
  state: string | null;
  attributes: Record<string, unknown>;
  name?: string;
  last_changed?: string | null;
  last_updated?: string | null;
}

export type LiveStatus = 'connecting' | 'live' | 'offline';

export class LiveStates {
  readonly states = new Map<string, LiveState>();
  status: LiveStatus = 'connecting';
  /** bumped when an entity appears or goes: lists re-render on that, not on every state change */
  idsVersion = 0;
  private readonly auth: PortalAuth;
  private readonly listeners = new Set<(changed: ReadonlySet<string> | null) => void>();
  /** entity ids changed since the last delivery; null: everything may have (a new listing, the status) */
  private pending: Set<string> | null = new Set();
  private scheduled = false;
  private conn: Connection | null = null;
  private unsubscribe: (() => void) | null = null;
  /** which start() the connection being made belongs to: a stop() meanwhile closes it when it comes */
  private generation = 0;
  /** the library's latest entities, and the ones states was last synced from */
  private latest: HassEntities | null = null;
  private synced: HassEntities = {};

  constructor(auth: PortalAuth) {
    this.auth = auth;
  }

  start(): void {
    const generation = ++this.generation;
    this.setStatus('connecting');
    // a stop() ends this connection's retries too: no token for it from then on
    const auth: PortalAuth = {
      ...this.auth,
      accessToken: () => (generation === this.generation ? this.auth.accessToken() : null),
    };
    // setupRetry -1: the first connection is retried every second, as the library does
    createConnection({ createSocket: portalSocket(auth), setupRetry: -1 }).then(
      (conn) => {
        if (generation !== this.generation) return conn.close();
        this.conn = conn;
        conn.addEventListener('disconnected', () => this.setStatus('offline'));
        // refused for good (revoked, signed out elsewhere): the library stops reconnecting
        conn.addEventListener('reconnect-error', () => this.setStatus('offline'));
        this.unsubscribe = subscribeEntities(conn, (entities) => {
          this.latest = entities;
          // the first listing after a (re)connect
          if (this.status !== 'live') this.setStatus('live');
          else this.changed('');
        });
      },
      () => {
        if (generation === this.generation) this.setStatus('offline');
      },
    );
  }

  /** Closes the socket (sign-out, a new scope): no reconnect. */
  stop(): void {
    this.generation++;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.conn?.close();
    this.conn = null;
  }

  /** fn gets the ids changed since the last call, or null when anything may have changed. */
  subscribe(fn: (changed: ReadonlySet<string> | null) => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  /** States a service call answered with: shown at once, before the event arrives. */
  apply(states: LiveState[]): void {
    // a service call's answer can arrive after the socket's newer change of the same entity
    // (a bulb answering the command before the HTTP response is read): never step back
    for (const s of states) if (!this.isOlder(s)) this.set(s.entity_id, s);
    this.changed('');
  }

  private isOlder(next: LiveState): boolean {
    const held = this.states.get(next.entity_id)?.last_updated;
    const at = next.last_updated;
    return !!held && !!at && Date.parse(at) < Date.parse(held);
  }

  private setStatus(status: LiveStatus): void {
    this.status = status;
    this.changed();
  }

  private set(id: string, next: LiveState | null): void {
    const had = this.states.has(id);
    if (next) this.states.set(id, next);
    else this.states.delete(id);
    if (had !== !!next) this.idsVersion++;
    this.pending?.add(id);
  }

  /** The library's entities since the last frame, into states: what appeared, changed or went. */
  private sync(): void {
    const latest = this.latest;
    if (!latest || latest === this.synced) return;
    const before = this.synced;
    this.synced = latest;
    for (const id in latest) if (latest[id] !== before[id]) this.set(id, latest[id]);
    for (const id in before) if (!(id in latest)) this.set(id, null);
  }

  /** id: '' for "the library has news" (sync names the ids), undefined for "anything may have changed" */
  private changed(id?: string): void {
    if (id === undefined) this.pending = null;
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.sync();
      const changed = this.pending;
      this.pending = new Set();
      for (const l of this.listeners) l(changed);
    });
  }
}

/**
 * Re-renders the caller only when one of these entities changes (or everything may have): with
 * 500 entities at 100 changes/s a frame re-renders the few that changed, not all of them.
 */
export function useLiveEntities(live: LiveStates, ids: readonly string[]): LiveStates {
  const [, setTick] = useState(0);
  const key = ids.join('\n');
  useEffect(
    () =>
      live.subscribe((changed) => {
        if (!changed || ids.some((id) => changed.has(id))) setTick((t) => t + 1);
      }),
    // key stands for ids: a new array with the same ids keeps the subscription
    [live, key],
  );
  return live;
}

/** Re-renders the caller when the connection status changes or entities appear or go. */
export function useLiveShape(live: LiveStates): LiveStates {
  const [, setTick] = useState(0);
  useEffect(() => {
    let seen = `${live.status} ${live.idsVersion}`;
    return live.subscribe(() => {
      const now = `${live.status} ${live.idsVersion}`;
      if (now !== seen) {
        seen = now;
        setTick((t) => t + 1);
      }
    });
  }, [live]);
  return live;
}

/** Re-renders the caller whenever the live states change. */
export function useLive(live: LiveStates): LiveStates {
  const [, setTick] = useState(0);
  useEffect(() => live.subscribe(() => setTick((t) => t + 1)), [live]);
  return live;
}

export function displayName(s: LiveState): string {
  const friendly = s.attributes.friendly_name;
  return typeof friendly === 'string' && friendly ? friendly : s.name || s.entity_id;
}

export const domainOf = (entityId: string) => entityId.split('.')[0] ?? '';
