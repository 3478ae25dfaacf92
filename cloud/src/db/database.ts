import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';

export type Db = BetterSQLite3Database;

export interface Migration {
  /** unique, stable id: "<module>-<nnn>-<what>" */
  id: string;
  sql: string;
}

/**
 * The cloud's SQLite database: a file in the data dir, WAL, foreign keys on,
 * and migrations applied in order at start (each once, recorded in _migrations).
 */
export class CloudDatabase {
  private readonly file: string;
  private readonly migrations: Migration[];
  private sqlite: Database.Database | null = null;
  private drizzleDb: Db | null = null;
  private transactionTail: Promise<void> = Promise.resolve();
  private readonly inTransactionContext = new AsyncLocalStorage<boolean>();

  constructor(file: string, migrations: Migration[]) {
    this.file = file;
    this.migrations = migrations;
  }

  start(): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const sqlite = new Database(this.file);
    // busy_timeout first: with several replicas on one file, switching to WAL and migrating wait for each other.
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    cachePreparedStatements(sqlite);
    this.sqlite = sqlite;
    this.drizzleDb = drizzle(sqlite);
    this.migrate();
  }

  /**
   * Several processes may start together on one file (cloud replicas): the whole run holds
   * the write lock (BEGIN EXCLUSIVE, waiting up to busy_timeout for another migrator), and
   * the applied ids are read inside the lock, so each migration applies exactly once.
   */
  private migrate(): void {
    const sqlite = this.raw;
    sqlite.exec('BEGIN EXCLUSIVE');
    try {
      sqlite.exec('CREATE TABLE IF NOT EXISTS _migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
      const applied = new Set(sqlite.prepare('SELECT id FROM _migrations').pluck().all() as string[]);
      const record = sqlite.prepare('INSERT INTO _migrations (id, applied_at) VALUES (?, ?)');
      for (const m of this.migrations) {
        if (applied.has(m.id)) continue;
        sqlite.exec(m.sql);
        record.run(m.id, new Date().toISOString());
      }
      sqlite.exec('COMMIT');
    } catch (err) {
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
      throw err;
    }
  }

  get db(): Db {
    if (!this.drizzleDb) throw new Error('database not started');
    return this.drizzleDb;
  }

  get raw(): Database.Database {
    if (!this.sqlite) throw new Error('database not started');
    return this.sqlite;
  }

  /**
   * Runs fn in one transaction. fn may be async but should only await database calls.
   * Transactions run one at a time: the connection has a single transaction, and two
   * requests' transactions interleaving at their awaits would otherwise collide (a second
   * BEGIN fails). A transaction started inside another one joins it.
   */
  async transaction<T>(fn: () => Promise<T> | T): Promise<T> {
    if (this.inTransactionContext.getStore()) return fn();
    const run = this.transactionTail.then(() => this.inTransactionContext.run(true, () => this.runTransaction(fn)));
    this.transactionTail = run.then(() => undefined, () => undefined);
    return run;
  }

  private async runTransaction<T>(fn: () => Promise<T> | T): Promise<T> {
    const sqlite = this.raw;
    sqlite.exec('BEGIN IMMEDIATE');
    try {
      const out = await fn();
      sqlite.exec('COMMIT');
      return out;
    } catch (err) {
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
      throw err;
    }
  }


  stop(): void {
    if (this.sqlite) {
      this.sqlite.close();
      this.sqlite = null;
      this.drizzleDb = null;
    }
  }
}

/**
 * drizzle prepares (compiles) every statement on every query, which was the largest
 * per-request cost of the cloud. Statements are reusable, so keep them by SQL text.
 * drizzle switches a statement to raw (array) rows when it wants them and expects object
 * rows otherwise, so a statement handed out again starts in plain object mode (no raw,
 * pluck or expand left over from its last user).
 */
function cachePreparedStatements(sqlite: Database.Database, max = 1000): void {
  const cache = new Map<string, Database.Statement>();
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    let stmt = cache.get(source);
    if (stmt) {
      if (stmt.reader) stmt.pluck(false).expand(false).raw(false);
      return stmt;
    }
    stmt = prepare(source);
    // DDL and schema-dependent statements are not worth keeping (and go stale on schema changes).
    if (/^\s*(select|insert|update|delete|with)\b/i.test(source)) {
      if (cache.size >= max) cache.delete(cache.keys().next().value!);
      cache.set(source, stmt);
    }
    return stmt;
  }) as typeof sqlite.prepare;
}
