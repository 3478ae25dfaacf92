import type { Statement } from 'better-sqlite3';
import type { EdgeDatabase } from '../db/database.ts';

export interface StoredState {
  entity_id: string;
  state: string | null;
  attributes: Record<string, unknown>;
  last_changed: string | null;
  last_updated: string | null;
}

/**
 * Write-behind for states: changes are coalesced per entity and written in one
 * transaction at most `delayMs` after the first pending change, or at once when
 * `maxBatch` entities are pending. stop() writes everything still pending, so a
 * state the broker acknowledged before SIGTERM is on disk when the process exits.
 */
export class StateWriter {
  private readonly database: EdgeDatabase;
  private readonly delayMs: number;
  private readonly maxBatch: number;
  private pendingRows = new Map<string, StoredState | null>();
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private upsert: Statement | null = null;
  private del: Statement | null = null;
  private running = false;

  constructor(database: EdgeDatabase, delayMs: number, maxBatch: number) {
    this.database = database;
    this.delayMs = delayMs;
    this.maxBatch = maxBatch;
  }

  loadAll(): StoredState[] {
    const rows = this.database.sqlite.prepare('SELECT entity_id, state, attributes, last_changed, last_updated FROM states').all() as
      { entity_id: string; state: string | null; attributes: string; last_changed: string | null; last_updated: string | null }[];
    return rows.map((r) => ({ ...r, attributes: safeParse(r.attributes) }));
  }

  start(): void {
    const sqlite = this.database.sqlite;
    this.upsert = sqlite.prepare(`INSERT INTO states (entity_id, state, attributes, last_changed, last_updated) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT(entity_id) DO UPDATE SET state = excluded.state, attributes = excluded.attributes,
      last_changed = excluded.last_changed, last_updated = excluded.last_updated`);
    this.del = sqlite.prepare('DELETE FROM states WHERE entity_id = ?');
    this.running = true;
  }

  get pending(): number {
    return this.pendingRows.size;
  }

  put(row: StoredState): void {
    this.pendingRows.set(row.entity_id, row);
    this.schedule();
  }

  delete(entityId: string): void {
    this.pendingRows.set(entityId, null);
    this.schedule();
  }

  private schedule(): void {
    if (!this.running) return;
    if (this.pendingRows.size >= this.maxBatch) {
      this.immediate ??= setImmediate(() => { this.immediate = null; this.flushInBackground(); });
      return;
    }
    this.timer ??= setTimeout(() => { this.timer = null; this.flushInBackground(); }, this.delayMs);
  }

  /** A failed background write (disk full, locked) keeps its rows and retries after the delay. */
  private flushInBackground(): void {
    try {
      this.flush();
    } catch (err) {
      this.lastError = err;
      this.timer ??= setTimeout(() => { this.timer = null; this.flushInBackground(); }, Math.max(this.delayMs, 1000));
    }
  }

  /** The last background write error, if any (for diagnostics). */
  lastError: unknown = null;

  flush(): void {
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    if (this.immediate) { clearImmediate(this.immediate); this.immediate = null; }
    if (this.pendingRows.size === 0 || !this.upsert || !this.del) return;
    const batch = this.pendingRows;
    this.pendingRows = new Map();
    const upsert = this.upsert;
    const del = this.del;
    try {
      this.database.sqlite.transaction(() => {
        for (const [entityId, row] of batch) {
          if (row) upsert.run(entityId, row.state, JSON.stringify(row.attributes), row.last_changed, row.last_updated);
          else del.run(entityId);
        }
      })();
    } catch (err) {
      // keep what was not written; newer changes that arrived meanwhile win
      for (const [entityId, row] of batch) if (!this.pendingRows.has(entityId)) this.pendingRows.set(entityId, row);
      throw err;
    }
  }

  stop(): void {
    this.flush();
    this.running = false;
    this.upsert = null;
    this.del = null;
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
