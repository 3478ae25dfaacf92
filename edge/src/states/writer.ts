import type { Statement } from 'better-sqlite3';
import type { EdgeDatabase } from '../db/database.ts';
import { WriteBehind } from '../db/write-behind.ts';

export interface StoredState {
  entity_id: string;
  state: string | null;
  attributes: Record<string, unknown>;
  last_changed: string | null;
  last_updated: string | null;
}

/**
 * Write-behind for states (WriteBehind keyed by entity_id): changes are coalesced per entity
 * and written in one transaction at most `delayMs` after the first pending change, or at once
 * when `maxBatch` entities are pending. stop() writes everything still pending, so a state the
 * broker acknowledged before SIGTERM is on disk when the process exits.
 */
export class StateWriter {
  private readonly database: EdgeDatabase;
  private readonly rows: WriteBehind<StoredState>;
  private upsert: Statement | null = null;
  private del: Statement | null = null;

  constructor(database: EdgeDatabase, delayMs: number, maxBatch: number, onError?: (err: unknown) => void) {
    this.database = database;
    this.rows = new WriteBehind({
      delayMs,
      maxBatch,
      write: (batch) => this.write(batch),
      onError,
      gate: () => database.writeGate,
    });
  }

  loadAll(): StoredState[] {
    const rows = this.database.sqlite
      .prepare('SELECT entity_id, state, attributes, last_changed, last_updated FROM states')
      .all() as {
      entity_id: string;
      state: string | null;
      attributes: string;
      last_changed: string | null;
      last_updated: string | null;
    }[];
    return rows.map((r) => ({ ...r, attributes: safeParse(r.attributes) }));
  }

  start(): void {
    const sqlite = this.database.sqlite;
    this.upsert =
      sqlite.prepare(`INSERT INTO states (entity_id, state, attributes, last_changed, last_updated) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT(entity_id) DO UPDATE SET state = excluded.state, attributes = excluded.attributes,
      last_changed = excluded.last_changed, last_updated = excluded.last_updated`);
    this.del = sqlite.prepare('DELETE FROM states WHERE entity_id = ?');
    this.rows.start();
  }

  get pending(): number {
    return this.rows.pending;
  }

  /** The last background write error, if any (for diagnostics). */
  get lastError(): unknown {
    return this.rows.lastError;
  }

  put(row: StoredState): void {
    this.rows.set(row.entity_id, row);
  }

  delete(entityId: string): void {
    this.rows.set(entityId, null);
  }

  flush(): void {
    this.rows.flush();
  }

  stop(): void {
    this.rows.stop();
    this.upsert = null;
    this.del = null;
  }

  private write(batch: ReadonlyMap<string, StoredState | null>): void {
    const upsert = this.upsert;
    const del = this.del;
    if (!upsert || !del) throw new Error('state writer not started');
    this.database.sqlite.transaction(() => {
      for (const [entityId, row] of batch) {
        if (row) upsert.run(entityId, row.state, JSON.stringify(row.attributes), row.last_changed, row.last_updated);
        else del.run(entityId);
      }
    })();
  }
}

function safeParse(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}
