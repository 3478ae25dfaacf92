import { EventEmitter } from 'node:events';
import type { EntityState, tunnel } from '@smarthome/protocol';
import type { CloudDatabase } from '../db/database.ts';
import { DatabaseUnavailable } from '../db/driver.ts';
import { STATE_CHUNK, atOnce, writeStatesAtOnce, writeStatesInBatch } from './state-batch.ts';
import type { MirrorStore } from './store.ts';

type Result = { oldState: EntityState | null }[];

interface Item {
  edgeId: number;
  deltas: readonly tunnel.Delta[];
  lastSeq: number | null;
  oldStates: boolean;
  resolve: (out: Result) => void;
  reject: (err: unknown) => void;
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
 * `writeStatesAtOnce`; on SQLite, state changes announced on arrival: a batch that the file's own
 * thread writes once the file is busy, `writeStatesInBatch`), and each caller's promise resolves only after that commit (the tunnel
 * acknowledges then: acknowledged means durable). Few transactions are in flight
 * at a time (one on SQLite), so work arriving meanwhile joins the next one; a transaction stops taking work after
 * `budgetMs` (SQLite runs it without yielding: its length is an event-loop stall). An edge hands in
 * its next batch only after the last one resolved (the tunnel queues per edge), so per-edge order
 * holds. Holds nothing but queued work, which its callers await. Emits 'commit' (the edge ids of
 * the batches committed, in order) after each commit, before any caller hears of it.
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

  /** Like MirrorStore.applyDeltas, but committed with the other edges' work of the same tick. */
  applyDeltas(
    edgeId: number,
    deltas: readonly tunnel.Delta[],
    lastSeq: number | null = null,
    oldStates = true,
  ): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ edgeId, deltas, lastSeq, oldStates, resolve, reject });
      this.schedule();
    });
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
      } else if (this.database.dialect === 'sqlite' && atOnce(taken) && !taken.some((item) => item.oldStates)) {
        // the common case on SQLite: state changes announced on arrival, written off the event loop
        // once the file is busy (CloudDatabase.batch); one group, since the loop is not held
        outs = await writeStatesInBatch(this.database, taken);
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
      taken.forEach((item, i) => {
        this.registryWritten(item);
        item.resolve(outs[i]!);
      });
    } catch (err) {
      // The transaction could not begin (nothing written): fail what it took and what waits rather than spin.
      if (isUnavailable(err)) for (const item of [...taken, ...this.queue.splice(0)]) item.reject(err);
      // One edge's bad batch must not fail the others': each is retried alone.
      else if (taken.length === 1) taken[0]!.reject(err);
      else await this.alone(taken);
    } finally {
      this.inFlight -= 1;
      this.schedule();
    }
  }

  private async alone(items: Item[]): Promise<void> {
    for (const item of items) {
      try {
        const out = await this.mirror.applyDeltas(item.edgeId, item.deltas, item.lastSeq, item.oldStates);
        this.commits += 1;
        this.emit('commit', [item.edgeId]);
        this.registryWritten(item);
        item.resolve(out);
      } catch (err) {
        item.reject(err);
      }
    }
  }

  /** A registry change may have removed or disabled entities: the service calls' index reloads the edge. */
  private registryWritten(item: Item): void {
    if (item.deltas.some((d) => d.kind !== 'state')) this.mirror.index.changed(item.edgeId);
  }
}

const isUnavailable = (err: unknown) => err instanceof DatabaseUnavailable;
