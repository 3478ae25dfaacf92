import type { Logger } from '../log.ts';
import { InterestIndex, sameVisibility, type Visibility } from './interest.ts';

/** the safety refresh's ticks per TTL (see Audience.start) */
const REFRESH_TICKS = 50;

/** What the audience keeps on each authenticated session. */
export interface Viewer {
  userId: string | null;
  /** its credential expired or was revoked: the socket is closing, nothing more is served */
  ended: boolean;
  /** what it may see, as indexed (null: not loaded since the last grant change) */
  visibility: Visibility | null;
  /** when `visibility` was loaded (for the safety refresh) */
  loadedAt: number;
  /** the load in flight for the current generation, shared by the events waiting for it */
  loading: Promise<Visibility> | null;
  /** bumped when grants change: a visibility loaded across a bump is not kept */
  visibilityGeneration: number;
}

/** An event waiting for a session's visibility: whether it concerns that visibility, and how to send it. */
interface Check<V, S> {
  sees: (vis: Visibility) => boolean;
  deliver: (socket: S, viewer: V) => void;
}

/**
 * The authenticated sessions of a socket server, by what they may see (InterestIndex), so
 * that an event visits only the sessions concerned. A session's visibility loads once and is
 * kept until a grant-change notice (forget), which drops it from the index at once; until it
 * is loaded again the session is checked per event. A slow background reload (ttlMs) covers a
 * notice that never arrives.
 */
export class Audience<V extends Viewer, S> {
  private readonly load: (viewer: V) => Promise<Visibility>;
  private readonly log: Logger;
  private readonly ttlMs: number;
  private readonly interest = new InterestIndex<V>();
  /** sessions whose visibility is not loaded (grants changed): checked per event until it is */
  private readonly unknown = new Map<V, S>();
  private readonly sockets = new Map<V, S>();
  /** unknown sessions whose load is in flight: the events waiting for it, in arrival order */
  private readonly waiting = new Map<V, Check<V, S>[]>();
  private refreshTimer: NodeJS.Timeout | null = null;

  /** deps.visibility: what a viewer may see now (per viewer: an HA session's scope is its user and organization) */
  constructor(deps: { visibility: (viewer: V) => Promise<Visibility>; log: Logger; ttlMs: number }) {
    this.load = deps.visibility;
    this.log = deps.log;
    this.ttlMs = deps.ttlMs;
  }

  start(): void {
    // One timer for all sessions; each is reloaded once its visibility is older than the TTL. It
    // ticks often and reloads a bounded share per tick (refreshOld): sessions loaded together (a
    // thousand app sockets opened in a few seconds, all of them after a grant change) would
    // otherwise reload together, every TTL, in one piece of work on the loop.
    this.refreshTimer = setInterval(() => this.refreshOld(), Math.max(10, Math.floor(this.ttlMs / REFRESH_TICKS)));
    this.refreshTimer.unref();
  }

  stop(): void {
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    this.refreshTimer = null;
  }

  /** An authenticated session joins; its visibility loads with the first event that may concern it. */
  join(viewer: V, socket: S): void {
    this.sockets.set(viewer, socket);
    this.unknown.set(viewer, socket);
  }

  leave(viewer: V): void {
    this.interest.remove(viewer);
    this.unknown.delete(viewer);
    this.sockets.delete(viewer);
    this.waiting.delete(viewer);
  }

  /** The loaded sessions that see the entity (its whole edge or a share of it). */
  *entity(edgeId: number, entityId: string): Iterable<[V, S]> {
    for (const viewer of this.interest.entity(edgeId, entityId)) {
      const socket = this.sockets.get(viewer);
      if (socket) yield [viewer, socket];
    }
  }

  /** The loaded sessions that see the whole edge. */
  *wholeEdge(edgeId: number): Iterable<[V, S]> {
    for (const viewer of this.interest.wholeEdge(edgeId)) {
      const socket = this.sockets.get(viewer);
      if (socket) yield [viewer, socket];
    }
  }

  /**
   * The sessions with no loaded visibility that want the event: load it (once per generation),
   * then decide. Events arriving while a session's load is in flight wait in its queue, in order:
   * one shared entry per event, not a pending task per event and session (a thousand sessions
   * opened together and a thousand changes a second would otherwise hold a million tasks, #19).
   */
  forUnknown(
    wants: (viewer: V) => boolean,
    sees: (vis: Visibility) => boolean,
    deliver: (socket: S, viewer: V) => void,
  ): void {
    if (this.unknown.size === 0) return;
    let check: Check<V, S> | null = null;
    for (const [viewer, socket] of this.unknown) {
      if (!wants(viewer)) continue;
      check ??= { sees, deliver };
      const queue = this.waiting.get(viewer);
      if (queue) queue.push(check);
      else this.waitFor(viewer, socket, [check]);
    }
  }

  /** Loads the viewer's visibility, then decides the queued events (and those joining meanwhile). */
  private waitFor(viewer: V, socket: S, queue: Check<V, S>[]): void {
    this.waiting.set(viewer, queue);
    this.visibilityOf(viewer).then(
      (vis) => {
        if (this.waiting.get(viewer) === queue) this.waiting.delete(viewer);
        if (viewer.ended || !this.sockets.has(viewer)) return;
        for (const check of queue) if (check.sees(vis)) check.deliver(socket, viewer);
      },
      (err: unknown) => {
        // its events are lost (as when a send fails); the next event tries the load again
        if (this.waiting.get(viewer) === queue) this.waiting.delete(viewer);
        this.log.warn('session visibility load failed', { err: (err as Error).message, dropped: queue.length });
      },
    );
  }

  /** Grants changed: nothing derived from the old ones is used again (events wait for a reload). */
  forget(viewer: V): void {
    viewer.visibility = null;
    viewer.loading = null;
    viewer.visibilityGeneration++;
    this.interest.remove(viewer);
    // events from now on wait for a new load; those queued before it use the old answer once
    this.waiting.delete(viewer);
    const socket = this.sockets.get(viewer);
    if (socket && !viewer.ended) this.unknown.set(viewer, socket);
  }

  /** Its visibility; one load per generation, shared by every event waiting (they resume in arrival order). */
  private visibilityOf(viewer: V): Promise<Visibility> {
    if (viewer.visibility) return Promise.resolve(viewer.visibility);
    if (viewer.loading) return viewer.loading;
    const generation = viewer.visibilityGeneration;
    const loading: Promise<Visibility> = this.load(viewer)
      .then((value) => {
        // Grants changed while loading: the waiting events use the answer this once, nothing is kept.
        if (generation === viewer.visibilityGeneration && !viewer.ended) this.know(viewer, value);
        return value;
      })
      .finally(() => {
        if (viewer.loading === loading) viewer.loading = null;
      });
    viewer.loading = loading;
    return loading;
  }

  private know(viewer: V, value: Visibility): void {
    viewer.visibility = value;
    viewer.loadedAt = Date.now();
    this.unknown.delete(viewer);
    this.interest.set(viewer, value);
  }

  /**
   * The safety refresh: sessions whose visibility is older than the TTL reload it in the
   * background (still indexed meanwhile: no notice said it changed).
   */
  private refreshOld(): void {
    const old = Date.now() - this.ttlMs;
    // a 25th of the sessions per tick at most: each is reloaded within half a TTL of being due
    let budget = Math.ceil(this.sockets.size / (REFRESH_TICKS / 2));
    for (const viewer of this.sockets.keys()) {
      if (!viewer.visibility || viewer.loading || viewer.loadedAt > old) continue;
      if (budget-- <= 0) break;
      const generation = viewer.visibilityGeneration;
      const loading = this.load(viewer);
      viewer.loading = loading;
      loading
        .then((value) => {
          if (generation !== viewer.visibilityGeneration || viewer.ended || !viewer.visibility) return;
          if (sameVisibility(value, viewer.visibility)) viewer.loadedAt = Date.now();
          else this.know(viewer, value);
        })
        .catch((err) => this.log.warn('session visibility refresh failed', { err: (err as Error).message }))
        .finally(() => {
          if (viewer.loading === loading) viewer.loading = null;
        });
    }
  }
}
