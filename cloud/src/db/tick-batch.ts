import { AsyncLocalStorage } from 'node:async_hooks';

interface Call<I, O> {
  input: I;
  resolve: (out: O) => void;
  reject: (err: unknown) => void;
}

export interface TickBatchOptions {
  /** inputs one run takes at most (bounds one statement's or transaction's length); the rest go in the next */
  max?: number;
  /** runs at once (one on SQLite, whose statements block the loop anyway; a few on PostgreSQL) */
  maxInFlight?: number;
}

/**
 * Calls made during one turn of the event loop, run together: `run` gets their inputs and answers
 * one output per input, in order (one statement or one transaction for all, instead of one each).
 * Calls arriving while the runs allowed are in flight wait for the next. A failed run fails each of
 * its calls with its error. For work where each caller keeps its own order (it awaits its call
 * before making the next).
 */
export class TickBatch<I, O> {
  private readonly run: (inputs: I[]) => Promise<O[]>;
  private readonly max: number;
  private readonly maxInFlight: number;
  private queue: Call<I, O>[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** runs started (tests and the bench: the batching is observable) */
  runs = 0;
  /**
   * The async context the batch was made in (the process's, at start): a run serves many callers,
   * so it must not inherit the first one's (a caller inside a transaction would make the run's own
   * transaction look nested, and its statements skip the wait for the open one).
   */
  private readonly context = AsyncLocalStorage.snapshot();

  constructor(run: (inputs: I[]) => Promise<O[]>, options: TickBatchOptions = {}) {
    this.run = run;
    this.max = options.max ?? 500;
    this.maxInFlight = options.maxInFlight ?? 1;
  }

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // the other callers of this turn (every tunnel's message read in one poll) join the same run
    setImmediate(() =>
      this.context(() => {
        this.scheduled = false;
        void this.flush();
      }),
    );
  }

  private async flush(): Promise<void> {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    const taken = this.queue.splice(0, this.max);
    this.inFlight += 1;
    this.runs += 1;
    // the rest (over `max`) runs in the next turn, after what the loop has waiting (health checks)
    this.schedule();
    try {
      const outs = await this.run(taken.map((c) => c.input));
      taken.forEach((c, i) => c.resolve(outs[i]!));
    } catch (err) {
      for (const c of taken) c.reject(err);
    } finally {
      this.inFlight -= 1;
      this.schedule();
    }
  }
}
