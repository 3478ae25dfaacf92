/**
 * Heavy CPU work of all tunnels (parsing large frames, validating snapshots) in slices, one after
 * the other, at most `budgetMs` of them per turn of the event loop: health checks, timers and the
 * other sockets run between turns. Each task yielding on its own (setImmediate) would not do: the
 * loop runs every pending immediate in one turn, so a hundred edges' slices would again be one stall.
 */
export class LoopSlices {
  private readonly budgetMs: number;
  private readonly queue: { slice: () => unknown; resolve: (v: any) => void; reject: (e: unknown) => void }[] = [];
  private scheduled = false;

  constructor(budgetMs = 8) {
    this.budgetMs = budgetMs;
  }

  /** Runs `slice` (synchronous) in a later turn, after the slices asked for before it. */
  run<T>(slice: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ slice, resolve, reject });
      this.schedule();
    });
  }

  /** Slices waiting (a test's and the bench's view of the backlog). */
  get pending(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.scheduled = false;
    const started = performance.now();
    while (this.queue.length > 0) {
      const { slice, resolve, reject } = this.queue.shift()!;
      try {
        resolve(slice());
      } catch (err) {
        reject(err);
      }
      if (performance.now() - started >= this.budgetMs) break;
    }
    if (this.queue.length > 0) this.schedule();
  }
}
