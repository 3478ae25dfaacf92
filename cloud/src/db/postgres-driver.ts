import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import {
  DatabaseUnavailable,
  NoSuchValue,
  UniqueViolation,
  bindParams,
  type Migration,
  type Row,
  type SqlDriver,
  type SqlStatement,
} from './driver.ts';
import { FILL_ID_FUNCTION, toPostgresDdl } from './postgres-sql.ts';
import { PostgresStatements } from './postgres-statements.ts';

/** type oids of BIGINT and NUMERIC */
const INT8 = 20;
const NUMERIC = 1700;
/** a SERIALIZABLE transaction runs at most this often after serialization failures */
const MAX_ATTEMPTS = 10;
const PING_TIMEOUT_MS = 2000;

/**
 * PostgreSQL through a pg pool. Transactions take a client of their own (queries in their
 * async context go to it). `transaction` gives what SQLite gives: within the process they run
 * one after the other, and SERIALIZABLE makes that hold across replicas too (PostgreSQL
 * aborts one that raced another replica's, and it runs again from the start: bodies only do
 * database work). `atomic` is all-or-nothing at READ COMMITTED and runs concurrently: the
 * mirror's writes, ordered per edge by the tunnel, which would otherwise queue behind each other.
 */
export class PostgresDriver implements SqlDriver {
  readonly dialect = 'postgres' as const;
  private readonly url: string;
  private pool: pg.Pool | null = null;
  private readonly transactionClient = new AsyncLocalStorage<pg.PoolClient>();
  private readonly running = new Set<Promise<unknown>>();
  private transactionTail: Promise<void> = Promise.resolve();
  private readonly statements = new PostgresStatements();

  constructor(url: string) {
    this.url = url;
  }

  async open(): Promise<void> {
    const pool = new pg.Pool({
      connectionString: this.url,
      max: 10,
      // A dead server must not leave requests waiting for a connection forever.
      connectionTimeoutMillis: 5000,
      // ids, counts and epoch milliseconds are BIGINT; the cloud treats them as numbers, like SQLite's INTEGER.
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === INT8 || oid === NUMERIC
            ? (v: string) => Number(v)
            : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // An idle client losing its server must not take the process down; the next query reconnects.
    pool.on('error', () => {});
    try {
      await pool.query('SELECT 1');
    } catch (err) {
      await pool.end().catch(() => {});
      throw new Error(`cannot reach PostgreSQL at ${redact(this.url)}: ${(err as Error).message}`, { cause: err });
    }
    this.pool = pool;
  }

  private get client(): pg.Pool | pg.PoolClient {
    const inTransaction = this.transactionClient.getStore();
    if (inTransaction) return inTransaction;
    if (!this.pool) throw new Error('database not started');
    return this.pool;
  }

  /** Runs one statement, under its name once it repeats (PostgresStatements); again unnamed if the name cannot serve. */
  private async run(sql: string, params: readonly unknown[], rowMode?: 'array'): Promise<pg.QueryResult> {
    const client = this.client;
    const { text, name } = this.statements.get(sql);
    const send = (named: string | undefined) =>
      client.query({ name: named, text, values: bindParams(params), ...(rowMode && { rowMode }) } as pg.QueryConfig);
    try {
      return await send(name);
    } catch (err) {
      // inside a transaction the error has aborted it: the caller's transaction fails as a whole
      if (name !== undefined && !this.transactionClient.getStore() && this.statements.refused(sql, err))
        return translate(send(undefined));
      throw translateError(err);
    }
  }

  async query(sql: string, params: readonly unknown[]): Promise<Row[]> {
    return (await this.run(sql, params)).rows as Row[];
  }

  async queryArrays(sql: string, params: readonly unknown[]): Promise<unknown[][]> {
    return (await this.run(sql, params, 'array')).rows as unknown[][];
  }

  async execute(sql: string, params: readonly unknown[]): Promise<number> {
    return (await this.run(sql, params)).rowCount ?? 0;
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.transactionClient.getStore()) return fn();
    const run = this.transactionTail.then(() => this.runWithRetries(fn));
    this.transactionTail = run.then(
      () => undefined,
      () => undefined,
    );
    return this.track(run);
  }

  async atomic<T>(fn: () => Promise<T>): Promise<T> {
    if (this.transactionClient.getStore()) return fn();
    return this.track(this.runTransaction(fn, 'BEGIN'));
  }

  /** Its statements are round trips that do not hold the event loop: atomic() on a pool client. */
  async batch(statements: readonly SqlStatement[]): Promise<void> {
    await this.atomic(async () => {
      for (const s of statements) await this.execute(s.sql, s.params);
    });
  }

  private async track<T>(run: Promise<T>): Promise<T> {
    this.running.add(run);
    try {
      return await run;
    } catch (err) {
      // BEGIN, COMMIT or taking a client failed on the connection itself
      if (isConnectionError(err)) throw new DatabaseUnavailable({ cause: err });
      throw err;
    } finally {
      this.running.delete(run);
    }
  }

  private async runWithRetries<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.runTransaction(fn, 'BEGIN ISOLATION LEVEL SERIALIZABLE');
      } catch (err) {
        const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
        // serialization_failure, deadlock_detected: nothing was committed; run it again.
        if ((code !== '40001' && code !== '40P01') || attempt >= MAX_ATTEMPTS) throw err;
        await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
      }
    }
  }

  private async runTransaction<T>(fn: () => Promise<T>, begin: string): Promise<T> {
    if (!this.pool) throw new Error('database not started');
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query(begin);
      try {
        const out = await this.transactionClient.run(client, fn);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw err;
      }
    } finally {
      client.release(broken);
    }
  }

  /**
   * Replicas may start together: an advisory lock (per schema) makes the others wait, and
   * the applied ids are read under it, so each migration applies exactly once.
   */
  async migrate(migrations: readonly Migration[]): Promise<void> {
    if (!this.pool) throw new Error('database not started');
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const schema = (await client.query('SELECT current_schema() AS s')).rows[0]?.s as string | null;
      if (!schema) throw new Error('the search_path names no existing schema; create it first');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`smarthome-migrate:${schema}`]);
      await client.query('CREATE TABLE IF NOT EXISTS _migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
      await client.query(FILL_ID_FUNCTION);
      const applied = new Set((await client.query('SELECT id FROM _migrations')).rows.map((r) => r.id as string));
      for (const m of migrations) {
        if (applied.has(m.id)) continue;
        await client.query(toPostgresDdl(m.sql));
        await client.query('INSERT INTO _migrations (id, applied_at) VALUES ($1, $2)', [
          m.id,
          new Date().toISOString(),
        ]);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async ping(): Promise<void> {
    if (!this.pool) throw new DatabaseUnavailable();
    await translate(withTimeout(this.pool.query('SELECT 1'), PING_TIMEOUT_MS));
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.running]);
    const pool = this.pool;
    this.pool = null;
    await pool?.end();
  }
}

async function translate<T>(pending: Promise<T>): Promise<T> {
  try {
    return await pending;
  } catch (err) {
    throw translateError(err);
  }
}

/** pg's errors as the driver's family (driver.ts); others as they are. */
function translateError(err: unknown): unknown {
  const code = (err as { code?: string }).code;
  if (code === '23505') return new UniqueViolation((err as Error).message, { cause: err });
  // numeric_value_out_of_range, invalid_text_representation (e.g. NaN where an integer is compared)
  if (code === '22003' || code === '22P02') return new NoSuchValue({ cause: err });
  if (isConnectionError(err)) return new DatabaseUnavailable({ cause: err });
  return err;
}

/** Network errors, connection-class SQLSTATEs (08…), server shutting down or starting (57P01-57P03), pg's own. */
function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  if (/^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN)$/.test(code))
    return true;
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03') return true;
  const message = (err as Error).message ?? '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|ping timed out/.test(
    message,
  );
}

function withTimeout<T>(pending: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    pending,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('ping timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}
