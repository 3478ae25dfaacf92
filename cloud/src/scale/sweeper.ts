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
 * the database says 'online' but no replica's ownership key exists for them. An edge is
 * marked offline only when its key was missing on two sweeps in a row (a moving edge is
 * without a key for milliseconds only), and its key is checked again afterwards: if a replica
 * claimed it meanwhile, it is marked online again. Every replica sweeps; the writes are idempotent.
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

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.sweep().then(
        () => undefined,
        (err: Error) => this.deps.log.warn('stale edge sweep failed', { err: err.message }),
      ).finally(() => { this.running = null; });
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass (exposed for tests). */
  async sweep(): Promise<number[]> {
    const { cluster } = this.deps;
    const online = await this.deps.listOnline();
    const missing = new Set<number>();
    for (let i = 0; i < online.length; i += 500) {
      const batch = online.slice(i, i + 500);
      const owners = await cluster.redis.mget(...batch.map((id) => cluster.key('edge', id)));
      batch.forEach((id, j) => { if (!owners[j]) missing.add(id); });
    }
    const stale = [...missing].filter((id) => this.suspects.has(id));
    this.suspects = new Set([...missing].filter((id) => !this.suspects.has(id)));
    for (const id of stale) {
      await this.deps.markOffline(id);
      // Claimed between our look and our write: the claimant's markOnline may have come first.
      if (await cluster.redis.exists(cluster.key('edge', id))) await this.deps.markOnline(id);
      else this.deps.log.info('edge marked offline: its replica is gone', { edgeId: id });
    }
    return stale;
  }
}
