import { EventEmitter } from 'node:events';
import type { Release } from './backlog.ts';

/**
 * How many edges may be asked for a snapshot (welcomed with `acked_seq: null`) whose snapshot is
 * not stored yet. The hub welcomes an edge that needs a snapshot only once it has a turn here, so
 * a first sync of 10,000 edges sends its snapshots as storing makes room instead of all at once:
 * on PostgreSQL ~580 MB of raw frames used to arrive before the backlog could pause their sockets
 * (a 100-entity home's ~65 KB frame comes in one or two reads; peak RSS 1,144 MB, #19).
 */
export const DEFAULT_SNAPSHOT_TURNS = 64;
/**
 * A turn comes back on its own after this long: an edge that was asked for a snapshot and sends
 * none (or one that takes minutes) does not hold up the others for good.
 */
export const DEFAULT_TURN_TIMEOUT_MS = 30_000;

interface Waiter {
  take: (release: Release) => void;
}

/**
 * A counting semaphore, first come first served, whose waits end when their signal aborts (the
 * tunnel closed). Emits 'wait' when an edge has to wait for its turn (tests and the bench).
 */
export class SnapshotTurns extends EventEmitter {
  readonly max: number;
  private readonly timeoutMs: number;
  /** turns taken and not given back */
  active = 0;
  /** edges that had to wait for a turn */
  waited = 0;
  private readonly waiters: Waiter[] = [];

  constructor(max = DEFAULT_SNAPSHOT_TURNS, timeoutMs = DEFAULT_TURN_TIMEOUT_MS) {
    super();
    this.max = Math.max(1, max);
    this.timeoutMs = timeoutMs;
  }

  /** Edges waiting for a turn. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Resolves with the turn's release once one is free, or null once `signal` aborts first. */
  take(signal: AbortSignal): Promise<Release | null> {
    if (signal.aborted) return Promise.resolve(null);
    if (this.waiters.length === 0 && this.active < this.max) return Promise.resolve(this.grant());
    this.waited += 1;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        take: (release) => {
          signal.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(null);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.emit('wait');
    });
  }

  private grant(): Release {
    this.active += 1;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      this.active -= 1;
      const next = this.waiters.shift();
      if (next) next.take(this.grant());
    };
    const timer = setTimeout(release, this.timeoutMs);
    timer.unref();
    return release;
  }
}
