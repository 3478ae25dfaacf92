import type { EdgeDatabase } from '../db/database.ts';
import { RecorderStore, type PendingRow } from './store.ts';
import type { RowWriter } from './writer.ts';

/**
 * The recorder's rows written on the calling thread, with the edge's own connection: what the
 * recorder did before its writer thread (`RECORDER_WRITER=inline`), kept as the benchmark's
 * same-run baseline and for hosts where a second thread is unwanted.
 */
export class InlineWriter implements RowWriter {
  private readonly database: EdgeDatabase;
  private readonly store: RecorderStore;
  batches = 0;
  readonly pendingRows = 0;
  /** one connection: nothing to share */
  readonly gate = null;

  constructor(database: EdgeDatabase) {
    this.database = database;
    this.store = new RecorderStore(database);
  }

  start(): void {
    this.store.open();
  }

  write(rows: PendingRow[]): void {
    this.store.write(rows);
    this.batches++;
  }

  flush(): void {}

  renameEntity(oldId: string, newId: string): boolean {
    return this.store.renameEntity(oldId, newId);
  }

  async keepSets(metadataId: number, cutoff: number): Promise<number> {
    return this.store.keepSets(metadataId, cutoff);
  }

  async deleteOrphans(metadataId: number, candidates: readonly number[]): Promise<number> {
    return this.store.deleteOrphans(metadataId, candidates);
  }

  async stop(): Promise<void> {
    this.store.close();
  }
}
