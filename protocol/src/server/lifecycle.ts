/**
 * One way to start and stop a process's parts (the edge and the cloud): as each start step
 * succeeds, start() registers how to undo it; stop() undoes them in reverse order. A stop
 * that is under way is one promise: a second call (a second signal) gets the same one and
 * cannot cut it short.
 */

type Undo = () => unknown;

type Entry =
  | { kind: 'undo'; name: string; undo: Undo; background: boolean }
  /** stop() waits here for the background undos started since the last join */
  | { kind: 'join'; name: string };

export interface LifecycleOptions {
  /**
   * Told, as a log line ("stop: <step> failed", "stop after a failed start"), about each failed
   * undo but the one stop() rejects with (the stop goes on), and about a failed stop after a failed start.
   */
  onError?: (message: string, err: unknown) => void;
}

export class Lifecycle {
  private entries: Entry[] = [];
  private stopping: Promise<void> | null = null;
  private readonly onError: (message: string, err: unknown) => void;

  constructor(options: LifecycleOptions = {}) {
    this.onError = options.onError ?? (() => {});
  }

  /** Registers how to undo a step that has just succeeded; stop() runs it and waits for it. */
  defer(name: string, undo: Undo): void {
    this.push({ kind: 'undo', name, undo, background: false });
  }

  /**
   * Like defer, but stop() starts this undo and goes on without waiting for it until the next
   * join() (or the end): network peers get their time to leave while the rest stops.
   */
  deferInBackground(name: string, undo: Undo): void {
    this.push({ kind: 'undo', name, undo, background: true });
  }

  /** The point where stop() waits for the background undos registered after this one. */
  join(name: string): void {
    this.push({ kind: 'join', name });
  }

  /**
   * Runs start steps; when one fails, undoes what the steps registered so far (their
   * failures go to onError) and rejects with the start's error.
   */
  async start(steps: () => Promise<void>): Promise<void> {
    try {
      await steps();
    } catch (err) {
      await this.stop().catch((stopErr: unknown) => this.onError('stop after a failed start', stopErr));
      throw err;
    }
  }

  /**
   * Undoes every registered step, last first. Every undo runs even when an earlier one failed;
   * the stop then rejects with the first failure. The same promise until a step is registered again.
   */
  stop(): Promise<void> {
    this.stopping ??= this.unwind();
    return this.stopping;
  }

  private push(entry: Entry): void {
    // a new start after a finished stop: the next stop() unwinds it
    this.stopping = null;
    this.entries.push(entry);
  }

  private async unwind(): Promise<void> {
    const failures: { what: string; err: unknown }[] = [];
    const background: Promise<void>[] = [];
    const waitForBackground = async () => {
      await Promise.all(background.splice(0));
    };
    while (this.entries.length > 0) {
      const entry = this.entries.pop()!;
      if (entry.kind === 'join') {
        await waitForBackground();
        continue;
      }
      // called now, in order (a background undo too: what it closes stops taking input before the next step)
      let done: Promise<unknown>;
      try {
        done = Promise.resolve(entry.undo());
      } catch (err) {
        done = Promise.reject(err);
      }
      const settled = done.then(
        () => {},
        (err: unknown) => {
          failures.push({ what: entry.name, err });
        },
      );
      if (entry.background) background.push(settled);
      else await settled;
    }
    await waitForBackground();
    if (failures.length === 0) return;
    for (const { what, err } of failures.slice(1)) this.onError(`stop: ${what} failed`, err);
    throw failures[0].err;
  }
}
