import type { WriteGate } from '../db/write-gate.ts';
import type { Logger } from '../log.ts';
import type { PendingRow } from './store.ts';
import type { RowWriter } from './writer.ts';

export interface AdaptiveWriterOptions {
  /** one batch of this many rows starts the thread (default: none does) */
  batchRows?: number;
  /** a window of `windowMs` with this many rows is busy (default 200 in 1,000 ms) */
  windowRows?: number;
  windowMs?: number;
  /** this many busy windows in a row start the thread (default 3) */
  sustainWindows?: number;
  /** the clock (ms), for tests */
  now?: () => number;
}

/**
 * The recorder's default writer: rows are written on the main thread (InlineWriter) until
 * they come faster than a home's sensors send them, then the writer thread (RecorderWriter)
 * is started and takes every later op for good. The thread is a second Node environment of
 * ~12 MB RSS (#19, measured at 1,000 entities); a home whose sensors change a few dozen
 * times a second costs the main thread a few ms a second to write inline, which the thread
 * would not save. Only a rate that lasts (200 rows a second through three windows of a
 * second in a row: an ingest benchmark, a busy installation) starts it: a one-off burst (every
 * sensor reporting once after a restart or a broker reconnect: 1,000 rows within a second)
 * is written inline in batches of 1,000, and the thread's ~12 MB are not kept for good
 * for it (edge-start: RSS after a change per entity). Counted in rows, not in milliseconds: the first batches of each
 * kind are slow once (statements prepared, code compiled: 26 ms seen for 3 rows on a loaded
 * machine), which says nothing about the load to come. Rows written inline are committed
 * before the thread opens its connection, so order and flush() are as with either writer alone.
 */
export class AdaptiveWriter implements RowWriter {
  private readonly inline: RowWriter;
  private readonly makeThread: () => RowWriter;
  private readonly log: Logger;
  private readonly batchRows: number;
  private readonly windowRows: number;
  private readonly windowMs: number;
  private readonly sustainWindows: number;
  private readonly now: () => number;
  private thread: RowWriter | null = null;
  private windowStart = -Infinity;
  private rowsInWindow = 0;
  /** busy windows in a row before the current one */
  private busyWindows = 0;

  constructor(inline: RowWriter, makeThread: () => RowWriter, log: Logger, options: AdaptiveWriterOptions = {}) {
    this.inline = inline;
    this.makeThread = makeThread;
    this.log = log;
    this.batchRows = options.batchRows ?? Infinity;
    this.windowRows = options.windowRows ?? 200;
    this.windowMs = options.windowMs ?? 1000;
    this.sustainWindows = options.sustainWindows ?? 3;
    this.now = options.now ?? (() => performance.now());
  }

  /** true once the writer thread took over */
  get threaded(): boolean {
    return this.thread !== null;
  }

  /** the thread's gate once it runs; inline writes share the main thread's connection and need none */
  get gate(): WriteGate | null {
    return this.thread?.gate ?? null;
  }

  private get active(): RowWriter {
    return this.thread ?? this.inline;
  }

  start(): void {
    this.inline.start();
  }

  write(rows: PendingRow[]): void {
    if (this.thread) return this.thread.write(rows);
    const now = this.now();
    const elapsed = now - this.windowStart;
    if (elapsed > this.windowMs) {
      // the window that ended counts when it was busy and this one follows it directly
      const followed = this.rowsInWindow >= this.windowRows && elapsed <= 2 * this.windowMs;
      this.busyWindows = followed ? this.busyWindows + 1 : 0;
      this.windowStart = now;
      this.rowsInWindow = 0;
    }
    this.rowsInWindow += rows.length;
    // this batch still goes inline (it is in hand); the thread takes the next ones
    this.inline.write(rows);
    const sustained = this.rowsInWindow >= this.windowRows && this.busyWindows + 1 >= this.sustainWindows;
    if (rows.length >= this.batchRows || sustained) this.startThread(rows.length);
  }

  private startThread(batch: number): void {
    const thread = this.makeThread();
    thread.start();
    this.thread = thread;
    this.log.info(
      `recorder: writing on a thread from now on (${this.rowsInWindow} rows within ${this.windowMs} ms after ${this.busyWindows} such windows in a row, the last batch ${batch})`,
    );
  }

  flush(): void {
    this.active.flush();
  }

  get pendingRows(): number {
    return this.active.pendingRows;
  }

  get batches(): number {
    return this.inline.batches + (this.thread?.batches ?? 0);
  }

  renameEntity(oldId: string, newId: string): boolean {
    return this.active.renameEntity(oldId, newId);
  }

  keepSets(metadataId: number, cutoff: number): Promise<number> {
    return this.active.keepSets(metadataId, cutoff);
  }

  deleteOrphans(metadataId: number, candidates: number[]): Promise<number> {
    return this.active.deleteOrphans(metadataId, candidates);
  }

  async stop(): Promise<void> {
    await this.thread?.stop();
    this.thread = null;
    await this.inline.stop();
  }
}
