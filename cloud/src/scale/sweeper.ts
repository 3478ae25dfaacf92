import type { Logger } from '../log.ts';
import type { Cluster } from './cluster.ts';

export interface SweeperDeps {
  cluster: Cluster;
  log: Logger;
  /** ids of the edges the database says are online */
  listOnline(): Promise<number[]>;
  markOffline(edgeId: number): Promise<unknown>;
  markOnline(edgeId: number): Promise<unknown>;
  /** how often to look (default 15 s, the ownership TTL) */
  intervalMs?: number;
}

/**
 * Marks offline the edges whose replica died without doing so (SIGKILL, crash, lost host):
 * the database says 'online' but no live replica holds their tunnel, i.e. their ownership
 * key is missing or names a replica that no longer listens on Redis (a killed replica's
 * subscription ends with its connection, long before its keys expire).
 *
 * While running, an edge is marked offline only when it was unowned on two sweeps in a row
 * (a moving edge is without a key for milliseconds only). At start, a replica sweeps once
 * and marks every unowned edge at once: after a crash of every replica nothing else would
 * for a while, and the edges that are alive come back through their own reconnect.
 * After marking, the key is checked again: if a live replica claimed the edge meanwhile, it
 * is marked online again. Every replica sweeps; the writes are idempotent.
 */
export class StaleEdgeSweeper {
  private readonly deps: SweeperDeps;
  private readonly intervalMs: number;
  private suspects = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(deps: SweeperDeps) {
    this.deps = deps;
    this.intervalMs = deps.intervalMs ?? 15_000;
  }

  /** Sweeps once at once (see above; errors are logged, not thrown), then every intervalMs. */
  async start(): Promise<void> {
    try {
      const stale = await this.sweep({ atStart: true });
      if (stale.length)
        this.deps.log.info('edges marked offline at start: no live replica holds them', { edgeIds: stale });
    } catch (err) {
      this.deps.log.warn('stale edge sweep at start failed', { err: (err as Error).message });
    }
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweep()
        .then(
          () => undefined,
          (err: Error) => this.deps.log.warn('stale edge sweep failed', { err: err.message }),
        )
        .finally(() => {
          this.running = null;
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Of these edges, those no live replica holds. */
  private async unowned(edgeIds: number[]): Promise<number[]> {
    const { cluster } = this.deps;
    const out: number[] = [];
    for (let i = 0; i < edgeIds.length; i += 500) {
      const batch = edgeIds.slice(i, i + 500);
      const owners = await cluster.redis.mget(...batch.map((id) => cluster.key('edge', id)));
      const alive = await cluster.liveReplicas(owners.filter((o): o is string => o !== null));
      batch.forEach((id, j) => {
        if (!owners[j] || !alive.has(owners[j])) out.push(id);
      });
    }
    return out;
  }

  /** One pass; returns the edges it left offline (exposed for tests). */
  async sweep(opts: { atStart?: boolean } = {}): Promise<number[]> {
    const unowned = await this.unowned(await this.deps.listOnline());
    const stale = opts.atStart ? unowned : unowned.filter((id) => this.suspects.has(id));
    this.suspects = opts.atStart ? new Set() : new Set(unowned.filter((id) => !this.suspects.has(id)));
    const marked: number[] = [];
    for (const id of stale) {
      await this.deps.markOffline(id);
      // Claimed between our look and our write: the claimant's markOnline may have come first.
      if ((await this.unowned([id])).length === 0) {
        await this.deps.markOnline(id);
        continue;
      }
      marked.push(id);
      if (!opts.atStart) this.deps.log.info('edge marked offline: its replica is gone', { edgeId: id });
    }
    return marked;
  }
}
