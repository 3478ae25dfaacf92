/**
 * Write-behind keyed by a string: changes are coalesced per key (the last one wins; null
 * means "delete") and handed to `write` as one batch at most `delayMs` after the first pending
 * change, or at once when `maxBatch` keys are pending. A failed write keeps its rows (newer
 * changes that arrived meanwhile win) and is retried later; flush() and stop() write at once,
 * so what the caller acknowledged before SIGTERM is on disk when the process exits.
 */
export class WriteBehind<V> {
  private readonly delayMs: number;
  private readonly maxBatch: number;
  private readonly write: (batch: ReadonlyMap<string, V | null>) => void;
  private readonly onError: (err: unknown) => void;
  private rows = new Map<string, V | null>();
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private running = false;
  /** The last background write error, if any (for diagnostics). */
  lastError: unknown = null;

  /** onError: told of each failed background write (the rows are kept and retried) */
  constructor(options: {
    delayMs: number;
    maxBatch: number;
    write: (batch: ReadonlyMap<string, V | null>) => void;
    onError?: (err: unknown) => void;
  }) {
    this.delayMs = options.delayMs;
    this.maxBatch = options.maxBatch;
    this.write = options.write;
    this.onError = options.onError ?? (() => {});
  }

  start(): void {
    this.running = true;
  }

  get pending(): number {
    return this.rows.size;
  }

  set(key: string, value: V | null): void {
    this.rows.set(key, value);
    if (!this.running) return;
    if (this.rows.size >= this.maxBatch) {
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

  /** A failed background write (disk full, locked) keeps its rows and retries after the delay. */
  private flushInBackground(): void {
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
    }
  }

  /** Writes what is pending now; throws what `write` throws, keeping the rows. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.immediate) {
      clearImmediate(this.immediate);
      this.immediate = null;
    }
    if (this.rows.size === 0 || !this.running) return;
    const batch = this.rows;
    this.rows = new Map();
    try {
      this.write(batch);
    } catch (err) {
      for (const [key, value] of batch) if (!this.rows.has(key)) this.rows.set(key, value);
      throw err;
    }
  }

  stop(): void {
    this.flush();
    this.running = false;
  }
}
