import { BatchSchedule } from '../db/batch-schedule.ts';

/**
 * The recorder's write-behind: rows appended in order and handed to `write` as one batch at
 * most `delayMs` after the first, or on the next turn once `maxBatch` are queued. An array,
 * not the keyed WriteBehind of the states: recorder rows are never coalesced, so a key per
 * row and a Map entry were pure cost on the ingest path. A failed write keeps its rows in
 * front of newer ones and is retried after the delay (at least 1 s); flush() throws it.
 */
export class RowBatcher<T> extends BatchSchedule<T[]> {
  private rows: T[] = [];

  get pending(): number {
    return this.rows.length;
  }

  push(row: T): void {
    this.rows.push(row);
    this.queued();
  }

  /** Hands over what is queued (throws as flush) and stops. */
  override stop(): void {
    try {
      this.flush();
    } finally {
      this.halt();
    }
  }

  protected take(): T[] {
    const batch = this.rows;
    this.rows = [];
    return batch;
  }

  protected putBack(batch: T[]): void {
    this.rows = this.rows.length ? batch.concat(this.rows) : batch;
  }
}
