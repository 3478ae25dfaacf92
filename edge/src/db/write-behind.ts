import { BatchSchedule } from './batch-schedule.ts';

/**
 * Write-behind keyed by a string: changes are coalesced per key (the last one wins; null
 * means "delete") and handed to `write` as one batch at most `delayMs` after the first pending
 * change, or at once when `maxBatch` keys are pending. A failed write keeps its rows (newer
 * changes that arrived meanwhile win) and is retried later; flush() and stop() write at once,
 * so what the caller acknowledged before SIGTERM is on disk when the process exits.
 */
export class WriteBehind<V> extends BatchSchedule<ReadonlyMap<string, V | null>> {
  private rows = new Map<string, V | null>();

  get pending(): number {
    return this.rows.size;
  }

  set(key: string, value: V | null): void {
    this.rows.set(key, value);
    this.queued();
  }

  protected take(): ReadonlyMap<string, V | null> {
    const batch = this.rows;
    this.rows = new Map();
    return batch;
  }

  protected putBack(batch: ReadonlyMap<string, V | null>): void {
    for (const [key, value] of batch) if (!this.rows.has(key)) this.rows.set(key, value);
  }
}
