import { EventEmitter } from 'node:events';
import type { EntityState, tunnel } from '@smarthome/protocol';
import type { CloudDatabase } from '../db/database.ts';
import { DatabaseUnavailable } from '../db/driver.ts';
import { STATE_CHUNK, atOnce, readStateChunk, stateKeys, writeStatesAtOnce } from './state-batch.ts';
import type { MirrorStore } from './store.ts';

type Result = { oldState: EntityState | null }[];

interface Item {
  edgeId: number;
  deltas: readonly tunnel.Delta[];
  lastSeq: number | null;
  resolve: (out: Result) => void;
  reject: (err: unknown) => void;
  /** told the old states once known; null once told */
  applied: ((out: Result) => void) | null;
  /** what `applied` was told before the commit (the caller resolves with the same) */
  early: Result | null;
  /** the states held in the mirror's pending overlay until the commit */
  held: EntityState[];
}

export interface MirrorWriterOptions {
  /** time one transaction may spend taking work before it commits (the rest waits a tick) */
  budgetMs?: number;
  /** deltas one transaction takes at most */
  maxDeltas?: number;
  /**
   * deltas written by one applyBatches call (a few statements for all): the budget is checked
   * between groups, so on SQLite this bounds the stall past the budget
   */
  groupDeltas?: number;
  /** transactions open at once (default: 1 on SQLite, which runs them one after the other anyway; 4 on PostgreSQL) */
  maxInFlight?: number;
}

/**
 * Group commit of the edges' deltas: the batches handed in by every edge during one turn of the
 * event loop are written in one transaction (on PostgreSQL, state changes only: one statement,
 * `writeStatesAtOnce`), and each caller's promise resolves only after that commit (the tunnel
 * acknowledges then: acknowledged means durable). Few transactions are in flight
 * at a time (one on SQLite), so work arriving meanwhile joins the next one; a transaction stops taking work after
 * `budgetMs` (SQLite runs it without yielding: its length is an event-loop stall). An edge hands in
 * its next batch only after the last one resolved (the tunnel queues per edge), so per-edge order
 * holds. Holds nothing but queued work, which its callers await. Emits 'commit' (the edge ids of
 * the batches committed, in order) after each commit, before any caller's promise resolves.
 *
 * On PostgreSQL a batch of state changes is announced before its commit (`applied`, for the
 * apps' events): its old states are read first (one statement per tick's chunk, no WAL flush),
 * its new states held in the mirror's pending overlay (reads on this replica see them), then it
 * joins the writes. An app reading right after an event sees its state here; on another replica
 * (which reads the database) the old one until the commit, a few ms later. If the commit fails,
 * the event was sent for a change the mirror has not stored: the tunnel closes and the edge sends
 * the change again (its event again too).
 */
export class MirrorWriter extends EventEmitter {
  private readonly database: CloudDatabase;
  private readonly mirror: MirrorStore;
  private readonly budgetMs: number;
  private readonly maxDeltas: number;
  private readonly maxInFlight: number;
  private readonly groupDeltas: number;
  private queue: Item[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** batches whose old states are read before their write (PostgreSQL, state changes only) */
  private reading: Item[] = [];
  private readScheduled = false;
  private readsInFlight = 0;
  /** transactions committed (for tests and the bench: batching is observable) */
  commits = 0;

  constructor(database: CloudDatabase, mirror: MirrorStore, options: MirrorWriterOptions = {}) {
    super();
    this.database = database;
    this.mirror = mirror;
    // SQLite's transaction is a stall of the loop; PostgreSQL's only holds row locks longer
    this.budgetMs = options.budgetMs ?? (database.dialect === 'postgres' ? 50 : 15);
    this.maxDeltas = options.maxDeltas ?? 2000;
    this.groupDeltas = options.groupDeltas ?? STATE_CHUNK;
    // PostgreSQL's statements do not block the loop: a few transactions overlap their round trips
    this.maxInFlight = options.maxInFlight ?? (database.dialect === 'postgres' ? 4 : 1);
  }

  /**
   * Like MirrorStore.applyDeltas, but committed with the other edges' work of the same tick.
   * `applied` is told the old states once they are known, before the promise resolves: on
   * PostgreSQL, for state changes only, before the commit (the old states are read first, and the
   * new ones answer the mirror's reads from its pending overlay until committed); otherwise right
   * after the commit. The promise still resolves only after the commit (acknowledged = durable).
   */
  applyDeltas(
    edgeId: number,
    deltas: readonly tunnel.Delta[],
    lastSeq: number | null = null,
    applied: ((out: Result) => void) | null = null,
  ): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const item: Item = { edgeId, deltas, lastSeq, resolve, reject, applied, early: null, held: [] };
      if (applied && this.database.dialect === 'postgres' && deltas.length > 0 && stateKeys(item)) {
        this.reading.push(item);
        this.scheduleRead();
      } else {
        this.queue.push(item);
        this.schedule();
      }
    });
  }

  private scheduleRead(): void {
    if (this.readScheduled || this.readsInFlight >= this.maxInFlight || this.reading.length === 0) return;
    this.readScheduled = true;
    setImmediate(() => {
      this.readScheduled = false;
      this.readsInFlight += 1;
      void this.read();
    });
  }

  /**
   * Reads the old states of what waits (one statement per chunk), holds the new ones in the
   * mirror's overlay and tells the callers, then hands the batches to the writes. An event thus
   * waits for one read, not for a commit (a round trip and a WAL flush, behind up to 4 others).
   */
  private async read(): Promise<void> {
    const taken: Item[] = [];
    let n = 0;
    while (this.reading.length > 0 && (taken.length === 0 || n + this.reading[0]!.deltas.length <= STATE_CHUNK)) {
      const item = this.reading.shift()!;
      taken.push(item);
      n += item.deltas.length;
    }
    try {
      const { results, after } = await readStateChunk(this.database, taken);
      const byEdge = new Map<number, EntityState[]>();
      for (const s of after) byEdge.set(s.edge_id!, [...(byEdge.get(s.edge_id!) ?? []), s]);
      this.mirror.pending.hold(after);
      taken.forEach((item, i) => {
        item.held = byEdge.get(item.edgeId) ?? [];
        item.early = results[i]!;
        const told = item.applied!;
        item.applied = null;
        told(item.early);
      });
    } catch {
      // nothing announced: these batches' callers hear after the commit, as on SQLite
    } finally {
      this.queue.push(...taken);
      this.schedule();
      this.readsInFlight -= 1;
      this.scheduleRead();
    }
  }

  /** After the commit: the caller is told (if not yet) and resolved; the overlay drops its states. */
  private settle(item: Item, out: Result): void {
    this.mirror.pending.release(item.held);
    // a registry change may have removed or disabled entities: the service calls' index reloads the edge
    if (item.deltas.some((d) => d.kind !== 'state')) this.mirror.index.changed(item.edgeId);
    const told = item.applied;
    item.applied = null;
    told?.(out);
    item.resolve(item.early ?? out);
  }

  private fail(item: Item, err: unknown): void {
    this.mirror.pending.release(item.held);
    if (item.deltas.some((d) => d.kind !== 'state')) this.mirror.index.changed(item.edgeId);
    item.reject(err);
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // the other edges' messages read in this turn of the loop join the same transaction
    setImmediate(() => {
      this.scheduled = false;
      this.inFlight += 1;
      void this.flush();
    });
  }

  /** Takes what waits, up to `groupDeltas` (and what is left of `maxDeltas` after `deltas`). */
  private takeGroup(deltas: number): Item[] {
    const group: Item[] = [];
    let n = 0;
    const room = Math.min(this.groupDeltas, this.maxDeltas - deltas);
    while (this.queue.length > 0 && (group.length === 0 || (n < room && n + this.queue[0]!.deltas.length <= room))) {
      const item = this.queue.shift()!;
      group.push(item);
      n += item.deltas.length;
    }
    return group;
  }

  private async flush(): Promise<void> {
    const taken: Item[] = this.takeGroup(0);
    try {
      if (taken.length === 0) return; // another transaction took the work first
      let outs: Result[];
      if (this.database.dialect === 'postgres' && atOnce(taken)) {
        // the common case: state changes only, one statement, no transaction (one round trip, not five)
        outs = await writeStatesAtOnce(this.database, taken);
      } else {
        outs = await this.database.atomic(async () => {
          const started = performance.now();
          const results: Result[] = [...(await this.mirror.applyBatches(taken))];
          let deltas = taken.reduce((n, item) => n + item.deltas.length, 0);
          // what waits is written together (a few statements for all: applyBatches), a group at a time
          while (this.queue.length > 0 && deltas < this.maxDeltas && performance.now() - started < this.budgetMs) {
            const group = this.takeGroup(deltas);
            taken.push(...group);
            deltas += group.reduce((n, item) => n + item.deltas.length, 0);
            results.push(...(await this.mirror.applyBatches(group)));
          }
          return results;
        });
      }
      this.commits += 1;
      this.emit(
        'commit',
        taken.map((item) => item.edgeId),
      );
      taken.forEach((item, i) => this.settle(item, outs[i]!));
    } catch (err) {
      // The transaction could not begin (nothing written): fail what it took and what waits rather than spin.
      if (isUnavailable(err)) for (const item of [...taken, ...this.queue.splice(0)]) this.fail(item, err);
      // One edge's bad batch must not fail the others': each is retried alone.
      else if (taken.length === 1) this.fail(taken[0]!, err);
      else await this.alone(taken);
    } finally {
      this.inFlight -= 1;
      this.schedule();
    }
  }

  private async alone(items: Item[]): Promise<void> {
    for (const item of items) {
      try {
        const out = await this.mirror.applyDeltas(item.edgeId, item.deltas, item.lastSeq);
        this.commits += 1;
        this.emit('commit', [item.edgeId]);
        this.settle(item, out);
      } catch (err) {
        this.fail(item, err);
      }
    }
  }
}

const isUnavailable = (err: unknown) => err instanceof DatabaseUnavailable;
