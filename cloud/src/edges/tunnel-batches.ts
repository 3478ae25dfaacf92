import type { Dialect } from '../db/driver.ts';
import { TickBatch } from '../db/tick-batch.ts';
import type { MirrorStore } from '../mirror/store.ts';
import type { EdgeRegistry } from './registry.ts';

type Mark = { edgeId: number; online: boolean };

/** a failed offline mark is tried this many times in all, waiting retryMs, then 4×, 16× … between */
const OFFLINE_ATTEMPTS = 4;

/**
 * What every tunnel connect and disconnect asks of the database, batched across edges per turn of
 * the loop (TickBatch): the edge-token lookups of one tick's upgrades are one query, the hellos'
 * lastSeq one query, their online and offline marks one transaction. A reconnect storm of 10,000
 * edges was 40,000 statements and 20,000 commits, one per edge, each its own piece of work on the
 * loop (the SQLite ones block it). The tunnel hub awaits each call before the edge's next, so an
 * edge's marks keep their order.
 */
export class TunnelBatches {
  private readonly tokens: TickBatch<string, number | null>;
  private readonly seqs: TickBatch<number, number | null>;
  private readonly marks: TickBatch<Mark, void>;
  private readonly retryMs: number;

  constructor(deps: {
    edges: Pick<EdgeRegistry, 'edgeIdsByTokens' | 'markTunnels'>;
    mirror: Pick<MirrorStore, 'lastSeqs'>;
    dialect: Dialect;
    /** first wait before an offline mark is retried (default 250 ms: 250, 1,000, 4,000) */
    retryMs?: number;
  }) {
    this.retryMs = deps.retryMs ?? 250;
    // 100 per run: what follows a run (each upgrade's handshake, each hello's welcome) happens in
    // the same turn of the loop, ~0.1 ms apiece; the rest waits a turn, after the health checks.
    // PostgreSQL's round trips do not block the loop: a few batches may overlap.
    const options = { max: 100, maxInFlight: deps.dialect === 'postgres' ? 4 : 1 };
    this.tokens = new TickBatch((tokens) => deps.edges.edgeIdsByTokens(tokens), options);
    this.seqs = new TickBatch(async (ids) => {
      const seqs = await deps.mirror.lastSeqs(ids);
      return ids.map((id) => seqs.get(id) ?? null);
    }, options);
    this.marks = new TickBatch<Mark, void>(async (marks) => {
      await deps.edges.markTunnels(
        marks.filter((m) => m.online).map((m) => m.edgeId),
        marks.filter((m) => !m.online).map((m) => m.edgeId),
      );
      return marks.map(() => undefined);
    }, options);
  }

  /** The edge behind an edge token, or null (unknown, malformed or revoked). */
  async authenticate(token: string): Promise<{ id: number } | null> {
    const id = await this.tokens.call(token);
    return id === null ? null : { id };
  }

  /** The last sequence applied to the edge's mirror, or null. */
  lastSeq(edgeId: number): Promise<number | null> {
    return this.seqs.call(edgeId);
  }

  /** Connected → 'online' (paired_at set on the first connection); a revoked edge stays revoked. */
  markOnline(edgeId: number): Promise<void> {
    return this.marks.call({ edgeId, online: true });
  }

  /**
   * Disconnected → 'offline'; a revoked edge stays revoked. A failed write is retried a few times
   * (~5 s in all): no later event would correct it, and the edge would stay 'online' until it
   * reconnects. The hub awaits this before the edge's next connection is marked, so a retry
   * cannot overwrite a newer 'online'.
   */
  async markOffline(edgeId: number): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.marks.call({ edgeId, online: false });
      } catch (err) {
        if (attempt >= OFFLINE_ATTEMPTS) throw err;
        await new Promise((resolve) => setTimeout(resolve, this.retryMs * 4 ** (attempt - 1)));
      }
    }
  }

  /** Statements and transactions run so far (tests: the batching is observable). */
  get runs(): { tokens: number; seqs: number; marks: number } {
    return { tokens: this.tokens.runs, seqs: this.seqs.runs, marks: this.marks.runs };
  }
}
