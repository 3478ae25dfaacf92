import type { WriteGate } from './write-gate.ts';

/** How soon a background write that found the recorder's thread writing is tried again (ms). */
const GATE_RETRY_MS = 5;

/**
 * When a write-behind hands its queue to `write`: at most `delayMs` after the first queued
 * change, or on the next turn once `maxBatch` are queued; a failed background write keeps
 * its rows (the subclass puts them back in front) and is retried after the delay (at least
 * 1 s); flush() writes at once and throws what `write` throws. Subclasses own the queue.
 */
export abstract class BatchSchedule<B> {
  private readonly delayMs: number;
  private readonly maxBatch: number | (() => number);
  private readonly write: (batch: B) => void;
  private readonly onError: (err: unknown) => void;
  private readonly gate: () => WriteGate | null;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private running = false;
  /** The last background write error, if any (for diagnostics). */
  lastError: unknown = null;

  /** onError: told of each failed background write (the rows are kept and retried) */
  /** maxBatch: a function when it changes while running (the recorder's, once its writer thread starts) */
  constructor(options: {
    delayMs: number;
    maxBatch: number | (() => number);
    write: (batch: B) => void;
    onError?: (err: unknown) => void;
    /** the database's write gate (write-gate.ts), taken by background writes; absent: none */
    gate?: () => WriteGate | null;
  }) {
    this.delayMs = options.delayMs;
    this.maxBatch = options.maxBatch;
    this.write = options.write;
    this.onError = options.onError ?? (() => {});
    this.gate = options.gate ?? (() => null);
  }

  abstract get pending(): number;
  /** The queue as one batch, leaving it empty. */
  protected abstract take(): B;
  /** A batch whose write failed, back in front of what was queued meanwhile. */
  protected abstract putBack(batch: B): void;

  start(): void {
    this.running = true;
  }

  /** Writes what is queued now; throws what `write` throws, keeping the rows. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.immediate) {
      clearImmediate(this.immediate);
      this.immediate = null;
    }
    if (this.pending === 0 || !this.running) return;
    const batch = this.take();
    try {
      this.write(batch);
    } catch (err) {
      this.putBack(batch);
      throw err;
    }
  }

  stop(): void {
    this.flush();
    this.running = false;
  }

  /** Stops even when the last flush throws. */
  protected halt(): void {
    this.running = false;
  }

  /** Called by the subclass after it queued something. */
  protected queued(): void {
    if (!this.running) return;
    if (this.pending >= (typeof this.maxBatch === 'number' ? this.maxBatch : this.maxBatch())) {
      this.immediate ??= setImmediate(() => {
        this.immediate = null;
        this.flushInBackground();
      });
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.flushInBackground();
    }, this.delayMs);
  }

  private flushInBackground(): void {
    const gate = this.gate();
    if (gate && !gate.tryEnter()) {
      // another connection is writing: again shortly, instead of in SQLite's busy handler
      this.timer ??= setTimeout(() => {
        this.timer = null;
        this.flushInBackground();
      }, GATE_RETRY_MS);
      return;
    }
    try {
      this.flush();
    } catch (err) {
      this.lastError = err;
      this.onError(err);
      this.timer ??= setTimeout(
        () => {
          this.timer = null;
          this.flushInBackground();
        },
        Math.max(this.delayMs, 1000),
      );
    } finally {
      gate?.leave();
    }
  }
}
