import { drizzle, type SqliteRemoteDatabase } from 'drizzle-orm/sqlite-proxy';
import type { Dialect, Migration, Row, SqlDriver } from './driver.ts';
import { PostgresDriver } from './postgres-driver.ts';
import { SqliteDriver } from './sqlite-driver.ts';

export type { Migration, Row } from './driver.ts';
export { DatabaseUnavailable, UniqueViolation } from './driver.ts';

/**
 * Queries are written once with drizzle's SQLite query builder (async, "proxy" mode) and
 * run on whichever engine the cloud was started with: the embedded SQLite file, or
 * PostgreSQL for `--database-url postgres://…`. The builder's SQL is the subset both share;
 * the PostgreSQL driver renumbers its placeholders.
 */
export type Db = SqliteRemoteDatabase;

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

  constructor(location: string, migrations: Migration[]) {
    this.driver = isPostgresUrl(location) ? new PostgresDriver(location) : new SqliteDriver(location);
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
      if (method === 'run') return { rows: [], changes: await driver.execute(sql, params) };
      const rows = await driver.queryArrays(sql, params);
      return { rows: method === 'get' ? rows[0] as unknown as unknown[] : rows };
    });
  }

  get db(): Db {
    if (!this.drizzleDb) throw new Error('database not started');
    return this.drizzleDb;
  }

  /** Portable SQL with `?` placeholders; rows as objects. */
  query<T = Row>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.driver.query(sql, params) as Promise<T[]>;
  }

  async one<T = Row>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.driver.query(sql, params))[0] as T | undefined;
  }

  /** Runs a statement; resolves to the number of rows changed. */
  execute(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.driver.execute(sql, params);
  }

  /**
   * Runs fn in one transaction; fn should only await database calls. Transactions run one
   * at a time within the process, and one started inside another joins it.
   */
  transaction<T>(fn: () => Promise<T> | T): Promise<T> {
    return this.driver.transaction(async () => fn());
  }

  /**
   * All-or-nothing but concurrent with other work on PostgreSQL (READ COMMITTED; on SQLite the
   * same as transaction()): for writes the caller keeps in order itself.
   */
  atomic<T>(fn: () => Promise<T>): Promise<T> {
    return this.driver.atomic(fn);
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
