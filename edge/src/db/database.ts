import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteNativeBinding } from '../native/sqlite-binding.ts';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from './migrations.ts';
import { WAL_AUTOCHECKPOINT_PAGES } from './wal.ts';
import type { WriteGate } from './write-gate.ts';
import { schema } from './schema.ts';

export type Db = BetterSQLite3Database<typeof schema>;

export const DB_FILE = 'edge.db';

/** The edge's SQLite file in the data dir: WAL, migrated on open. Lifecycle: open() / close(). */
export class EdgeDatabase {
  readonly file: string;
  private sqliteHandle: Database.Database | null = null;
  private dbHandle: Db | null = null;
  private gateSource: (() => WriteGate | null) | null = null;
  constructor(dataDir: string) {
    this.file = path.join(dataDir, DB_FILE);
  }

  /** the gate the background writes take while the recorder's writer thread runs (write-gate.ts), else null */
  get writeGate(): WriteGate | null {
    return this.gateSource?.() ?? null;
  }

  /** The recorder names where its gate comes from: its writer may start a thread at any time. */
  useWriteGate(source: (() => WriteGate | null) | null): void {
    this.gateSource = source;
  }

  open(): void {
    if (this.sqliteHandle) return;
    mkdirSync(path.dirname(this.file), { recursive: true });
    // Inside the one-file executable the addon comes from the SEA assets (better-sqlite3 accepts the loaded module; its typings say string).
    const sqlite = new Database(this.file, {
      nativeBinding: sqliteNativeBinding(path.dirname(this.file)) as string | undefined,
    });
    try {
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma('synchronous = NORMAL');
      sqlite.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      sqlite.pragma('busy_timeout = 5000');
      sqlite.pragma('foreign_keys = ON');
      migrate(sqlite);
    } catch (err) {
      sqlite.close();
      throw err;
    }
    this.sqliteHandle = sqlite;
    this.dbHandle = drizzle(sqlite, { schema });
  }

  get db(): Db {
    if (!this.dbHandle) throw new Error('database is not open');
    return this.dbHandle;
  }

  get sqlite(): Database.Database {
    if (!this.sqliteHandle) throw new Error('database is not open');
    return this.sqliteHandle;
  }

  get isOpen(): boolean {
    return this.sqliteHandle !== null;
  }

  close(): void {
    const sqlite = this.sqliteHandle;
    this.sqliteHandle = null;
    this.dbHandle = null;
    if (sqlite?.open) sqlite.close();
  }
}
