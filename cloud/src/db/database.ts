import { AsyncLocalStorage } from 'node:async_hooks';
import { drizzle, type SqliteRemoteDatabase } from 'drizzle-orm/sqlite-proxy';
import type { Dialect, Migration, Row, SqlDriver, SqlStatement } from './driver.ts';
import { PostgresDriver } from './postgres-driver.ts';
import { SqliteDriver, type SqliteDriverOptions } from './sqlite-driver.ts';

export type { Migration, Row, SqlStatement } from './driver.ts';
export { DatabaseUnavailable, UniqueViolation } from './driver.ts';

/**
 * Queries are written once with drizzle's SQLite query builder (async, "proxy" mode) and
 * run on whichever engine the cloud was started with: the embedded SQLite file, or
 * PostgreSQL for `--database-url postgres://…`. The builder's SQL is the subset both share;
 * the PostgreSQL driver renumbers its placeholders.
 */
export type Db = SqliteRemoteDatabase;

/** INSERT/UPDATE/DELETE and the table they write, as drizzle (quoted, lowercase) and the cloud's own SQL spell them. */
const WRITE = /^\s*(?:insert\s+into|update|delete\s+from)\s+"?(\w+)"?/i;

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/**
 * The cloud's database. `location` is a SQLite file path or a postgres:// URL. Migrations
 * apply in order at start (each once, recorded in _migrations).
 */
export class CloudDatabase {
  readonly dialect: Dialect;
  private readonly driver: SqlDriver;
  private readonly migrations: Migration[];
  private drizzleDb: Db | null = null;
  private readonly writeListeners: ((table: string) => void)[] = [];
  /** tables written by the transaction of the current async context */
  private readonly transactionWrites = new AsyncLocalStorage<Set<string>>();
  /** set inside unnoticed(): writes that tell no write listener */
  private readonly quiet = new AsyncLocalStorage<true>();

  /** options.sqlite: for a SQLite file (when its thread starts: tests) */
  constructor(location: string, migrations: Migration[], options: { sqlite?: SqliteDriverOptions } = {}) {
    this.driver = isPostgresUrl(location) ? new PostgresDriver(location) : new SqliteDriver(location, options.sqlite);
    this.dialect = this.driver.dialect;
    this.migrations = migrations;
  }

  async start(): Promise<void> {
    await this.driver.open();
    try {
      await this.driver.migrate(this.migrations);
    } catch (err) {
      await this.driver.close().catch(() => {});
      throw err;
    }
    const driver = this.driver;
    this.drizzleDb = drizzle(async (sql, params, method) => {
      if (method === 'run') return { rows: [], changes: await this.wrote(sql, driver.execute(sql, params)) };
      const rows = await this.wrote(sql, driver.queryArrays(sql, params));
      return { rows: method === 'get' ? (rows[0] as unknown as unknown[]) : rows };
    });
  }

  /**
   * Calls `listener` with the table of every write that ran (for caches derived from tables):
   * once the statement has run, and again when the transaction it ran in has ended.
   */
  onWrite(listener: (table: string) => void): void {
    this.writeListeners.push(listener);
  }

  /**
   * Runs fn with its writes hidden from the write listeners: for writes known to change nothing
   * a listener derives (an edge's online/offline status: the access cache only reads whether it
   * is revoked). Without it every tunnel connect empties every replica's access cache.
   */
  unnoticed<T>(fn: () => Promise<T>): Promise<T> {
    return this.quiet.run(true, fn);
  }

  private async wrote<T>(sql: string, pending: Promise<T>): Promise<T> {
    const out = await pending;
    if (this.writeListeners.length && !this.quiet.getStore()) this.tell(sql);
    return out;
  }

  /** Tells the write listeners of the table `sql` writes, if it writes one. */
  private tell(sql: string): void {
    const c = sql.charCodeAt(sql.search(/\S/));
    // i, u, d (either case): only then is it worth the regex
    if (c === 105 || c === 73 || c === 117 || c === 85 || c === 100 || c === 68) {
      const table = WRITE.exec(sql)?.[1];
      if (table) {
        this.transactionWrites.getStore()?.add(table);
        for (const l of this.writeListeners) l(table);
      }
    }
  }

  get db(): Db {
    if (!this.drizzleDb) throw new Error('database not started');
    return this.drizzleDb;
  }

  /** Portable SQL with `?` placeholders; rows as objects. */
  query<T = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.wrote(sql, this.driver.query(sql, params)) as Promise<T[]>;
  }

  async one<T = Row>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.query<T>(sql, params))[0];
  }

  /** Runs a statement; resolves to the number of rows changed. */
  execute(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.wrote(sql, this.driver.execute(sql, params));
  }

  /**
   * Runs fn in one transaction; fn should only await database calls. Transactions run one
   * at a time within the process, and one started inside another joins it.
   */
  async transaction<T>(fn: () => Promise<T> | T): Promise<T> {
    if (this.transactionWrites.getStore()) return this.driver.transaction(async () => fn());
    const written = new Set<string>();
    try {
      return await this.transactionWrites.run(written, () => this.driver.transaction(async () => fn()));
    } finally {
      // committed (or rolled back) now: what a reader loaded meanwhile may be stale
      for (const table of written) for (const l of this.writeListeners) l(table);
    }
  }

  /**
   * All-or-nothing but concurrent with other work on PostgreSQL (READ COMMITTED; on SQLite the
   * same as transaction()): for writes the caller keeps in order itself.
   */
  atomic<T>(fn: () => Promise<T>): Promise<T> {
    return this.driver.atomic(fn);
  }

  /**
   * Write statements as one unit, off the event loop where the engine can (SqlDriver.batch: on
   * SQLite the file's own thread once it is busy); the write listeners hear of each table once
   * committed. Not inside a transaction.
   */
  async batch(statements: readonly SqlStatement[]): Promise<void> {
    await this.driver.batch(statements);
    if (this.writeListeners.length && !this.quiet.getStore()) for (const s of statements) this.tell(s.sql);
  }

  /**
   * Queries built once per started database (drizzle builds a query's SQL on every run
   * otherwise): for the ones every request makes. `build` prepares them with placeholders.
   */
  prepared<T>(build: (db: Db) => T): () => T {
    let made: { db: Db; queries: T } | null = null;
    return () => {
      const db = this.db;
      if (made?.db !== db) made = { db, queries: build(db) };
      return made.queries;
    };
  }

  /** For /healthz: rejects with DatabaseUnavailable when the engine does not answer. */
  ping(): Promise<void> {
    return this.driver.ping();
  }

  async stop(): Promise<void> {
    this.drizzleDb = null;
    await this.driver.close();
  }
}
