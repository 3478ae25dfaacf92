import { HttpError } from '@smarthome/protocol/server';

/**
 * What the cloud needs from a SQL engine. The cloud writes its SQL once (drizzle's SQLite
 * query builder, or portable SQL with `?` placeholders); a driver runs it on its engine.
 */
export type Row = Record<string, unknown>;
export type Dialect = 'sqlite' | 'postgres';

export interface SqlDriver {
  readonly dialect: Dialect;
  open(): Promise<void>;
  /** Rows as objects keyed by column name. */
  query(sql: string, params: readonly unknown[]): Promise<Row[]>;
  /** Rows as arrays, in select order (what drizzle maps from). */
  queryArrays(sql: string, params: readonly unknown[]): Promise<unknown[][]>;
  /** Runs a statement; resolves to the number of rows it changed. */
  execute(sql: string, params: readonly unknown[]): Promise<number>;
  /**
   * Runs fn in one transaction. Every query fn issues (directly or through callees: the
   * context follows async calls) goes to the transaction; a nested call joins it.
   */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * All-or-nothing, without transaction()'s isolation: may run alongside other work. For
   * writes whose order the caller already guarantees (the mirror: one edge's changes in order).
   */
  atomic<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Runs write statements as one unit (all or nothing, like atomic()), off the event loop where
   * the engine has a way to (SQLite's file thread once the file is busy): for a large share of
   * the writes whose only answer is done or failed (the mirror's state changes). Not inside a
   * transaction: it would not join it.
   */
  batch(statements: readonly SqlStatement[]): Promise<void>;
  /** Applies the migrations not yet recorded, under a lock other processes wait on. */
  migrate(migrations: readonly Migration[]): Promise<void>;
  /** Resolves when the engine answers a trivial query; rejects (DatabaseUnavailable) otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** One statement of a batch: portable SQL with `?` placeholders. */
export interface SqlStatement {
  sql: string;
  params: readonly unknown[];
}

/** Booleans are stored as 0/1 integers on both engines (drizzle maps its boolean columns already; raw SQL may pass true/false). */
export function bindParams(params: readonly unknown[]): unknown[] {
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

export interface Migration {
  /** unique, stable id: "<module>-<nnn>-<what>" */
  id: string;
  /** SQLite DDL; PostgreSQL runs it through toPostgresDdl. */
  sql: string;
}

/**
 * A value PostgreSQL cannot compare with its column (an integer beyond 64 bits, NaN for an
 * id): on SQLite such a value simply matches no row, so on both engines it names nothing
 * that exists.
 */
export class NoSuchValue extends HttpError {
  constructor(options: { cause?: unknown }) {
    super(404, 'not found', options);
    this.name = 'NoSuchValue';
  }
}

/**
 * The database server cannot be reached or dropped the connection (PostgreSQL restarting, a
 * network cut): a 503 the client may retry, not a 500. The pool reconnects by itself.
 */
export class DatabaseUnavailable extends HttpError {
  constructor(options: { cause?: unknown } = {}) {
    super(503, 'database_unavailable', { ...options, headers: { 'Retry-After': '1' } });
    this.name = 'DatabaseUnavailable';
  }
}

/**
 * The engine's "row is already there" error, translated at the driver boundary. Handlers check
 * before they insert; one that still escapes lost a race (two replicas, or two processes on
 * one SQLite file, creating the same thing at once): 409, as if the check had seen it.
 */
export class UniqueViolation extends HttpError {
  /** the engine's message (logs only; not exposed) */
  readonly detail: string;
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(409, 'already exists', options);
    this.name = 'UniqueViolation';
    this.detail = message;
  }
}
