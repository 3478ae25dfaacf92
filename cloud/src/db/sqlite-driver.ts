import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { UniqueViolation, bindParams, type Migration, type Row, type SqlDriver, type SqlStatement } from './driver.ts';
import { SqliteThread } from './sqlite-thread.ts';

export interface SqliteDriverOptions {
  /**
   * WAL file size from which checkpoints and batches (SqlDriver.batch) move to a thread of their
   * own (SqliteThread): a database written this much is busy enough for the main connection's
   * automatic checkpoints and writes to stall its event loop, while an idle or test cloud never
   * starts the thread (default 4 MiB, SQLite's own 1,000-page checkpoint threshold; 0: at open)
   */
  checkpointThreadFromBytes?: number;
  /** how often the WAL file's size is looked at until then */
  walProbeMs?: number;
  /** the thread's checkpoint interval */
  checkpointEveryMs?: number;
}

/**
 * The embedded engine: one better-sqlite3 connection on a file in the data dir, WAL, foreign
 * keys on. A connection has one transaction, so transactions run one after the other, and a
 * query from outside an open transaction waits for it to end (it would otherwise land inside
 * it and be rolled back with it). Once the file is busy, its WAL is checkpointed by a thread of
 * its own (SqliteThread) instead of by the commits on the event loop, and batches run there too:
 * each takes its turn among the transactions, and a write of the main connection from outside a
 * transaction waits for the batch in flight (both connections writing at once would leave the
 * loser sleeping in SQLite's busy handler, on the event loop). Reads never wait for it (WAL).
 */
export class SqliteDriver implements SqlDriver {
  readonly dialect = 'sqlite' as const;
  private readonly file: string;
  private sqlite: Database.Database | null = null;
  private statements = new Map<string, Database.Statement>();
  private transactionTail: Promise<void> = Promise.resolve();
  /** set while a transaction is open; resolves when it ends */
  private openTransaction: Promise<void> | null = null;
  /** set while a batch runs on the thread; resolves when it has ended */
  private threadBatch: Promise<void> | null = null;
  private readonly inTransaction = new AsyncLocalStorage<true>();
  private readonly options: Required<SqliteDriverOptions>;
  private thread: SqliteThread | null = null;
  private walProbe: NodeJS.Timeout | null = null;

  constructor(file: string, options: SqliteDriverOptions = {}) {
    this.file = file;
    this.options = {
      checkpointThreadFromBytes: options.checkpointThreadFromBytes ?? 4 * 1024 * 1024,
      walProbeMs: options.walProbeMs ?? 1000,
      checkpointEveryMs: options.checkpointEveryMs ?? 200,
    };
  }

  /** whether the WAL is checkpointed, and batches written, by the file's own thread (for tests) */
  get checkpointThread(): boolean {
    return this.thread?.running ?? false;
  }

  async open(): Promise<void> {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const sqlite = new Database(this.file);
    try {
      // busy_timeout first: with several replicas on one file, switching to WAL and migrating wait for each other.
      sqlite.pragma('busy_timeout = 5000');
      // SQLite does not always wait (busy_timeout) while another process switches the file to WAL.
      await whileBusy(() => sqlite.pragma('journal_mode = WAL'));
      sqlite.pragma('synchronous = NORMAL');
      sqlite.pragma('foreign_keys = ON');
    } catch (err) {
      sqlite.close();
      throw err;
    }
    this.sqlite = sqlite;
    this.statements = new Map();
    if (this.options.checkpointThreadFromBytes === 0) this.checkpointOnThread();
    else this.probeWal();
  }

  /** Looks at the WAL's size now and then until the file is busy enough for the checkpoint thread. */
  private probeWal(): void {
    this.walProbe = setInterval(() => {
      // a stat of a local file once a second: cheaper than an async round trip through libuv's pool
      const size = fs.statSync(`${this.file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
      if (size >= this.options.checkpointThreadFromBytes) this.checkpointOnThread();
    }, this.options.walProbeMs);
    this.walProbe.unref();
  }

  private stopProbe(): void {
    if (this.walProbe) clearInterval(this.walProbe);
    this.walProbe = null;
  }

  private checkpointOnThread(): void {
    this.stopProbe();
    const thread = new SqliteThread(
      this.file,
      (err) => {
        // the thread is gone: the commits checkpoint again, as SQLite does by default
        this.sqlite?.pragma('wal_autocheckpoint = 1000');
        process.emitWarning(`SQLite thread failed, checkpoints and batches back on the main thread: ${err.message}`);
      },
      this.options.checkpointEveryMs,
    );
    thread.start();
    this.thread = thread;
    this.raw.pragma('wal_autocheckpoint = 0');
  }

  private get raw(): Database.Database {
    if (!this.sqlite) throw new Error('database not started');
    return this.sqlite;
  }

  /**
   * Compiling a statement was the largest per-request cost of the cloud; statements are
   * reusable, so they are kept by SQL text. A statement handed out again starts in plain
   * object mode (no raw or pluck left over from its last user).
   */
  private statement(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (stmt) {
      if (stmt.reader) stmt.pluck(false).expand(false).raw(false);
      return stmt;
    }
    stmt = this.raw.prepare(sql);
    if (this.statements.size >= 1000) this.statements.delete(this.statements.keys().next().value!);
    this.statements.set(sql, stmt);
    return stmt;
  }

  private async ready(): Promise<void> {
    while (this.openTransaction && !this.inTransaction.getStore()) await this.openTransaction;
  }

  /**
   * The statement for `sql` once it may run: after the transaction open elsewhere (ready()) and,
   * for one that writes, once no batch is in flight on the thread (see the class). Callers come
   * here only when either is set, so the common case takes statement() without waiting.
   */
  private async waitedStatement(sql: string): Promise<Database.Statement> {
    if (this.openTransaction) await this.ready();
    let stmt = this.statement(sql);
    if (this.threadBatch && !stmt.readonly) {
      while (this.threadBatch !== null) await this.threadBatch;
      stmt = this.statement(sql);
    }
    return stmt;
  }

  async query(sql: string, params: readonly unknown[]): Promise<Row[]> {
    const stmt = this.openTransaction || this.threadBatch ? await this.waitedStatement(sql) : this.statement(sql);
    return translate(() =>
      stmt.reader ? (stmt.all(...bindParams(params)) as Row[]) : (stmt.run(...bindParams(params)), []),
    );
  }

  async queryArrays(sql: string, params: readonly unknown[]): Promise<unknown[][]> {
    const stmt = this.openTransaction || this.threadBatch ? await this.waitedStatement(sql) : this.statement(sql);
    return translate(() =>
      stmt.reader ? (stmt.raw(true).all(...bindParams(params)) as unknown[][]) : (stmt.run(...bindParams(params)), []),
    );
  }

  async execute(sql: string, params: readonly unknown[]): Promise<number> {
    const stmt = this.openTransaction || this.threadBatch ? await this.waitedStatement(sql) : this.statement(sql);
    return translate(() => stmt.run(...bindParams(params)).changes);
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction.getStore()) return fn();
    const run = this.transactionTail.then(() => this.runTransaction(fn));
    this.transactionTail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * On the file's own thread once it runs (off the event loop), in its turn among the
   * transactions; on the main connection as transaction() before that, or when the thread failed.
   */
  async batch(statements: readonly SqlStatement[]): Promise<void> {
    if (this.inTransaction.getStore()) throw new Error('batch() inside a transaction: it would not join it');
    const run = this.transactionTail.then(() => this.onThread(statements));
    this.transactionTail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async onThread(statements: readonly SqlStatement[]): Promise<void> {
    const thread = this.thread;
    // (this is the batch's turn among the transactions: runTransaction, not transaction())
    if (!thread?.running)
      return this.runTransaction(async () => {
        for (const s of statements) await this.execute(s.sql, s.params);
      });
    let end!: () => void;
    this.threadBatch = new Promise((resolve) => {
      end = resolve;
    });
    try {
      await thread.run(statements.map((s) => [s.sql, bindParams(s.params)] as const));
    } catch (err) {
      throw translateError(err);
    } finally {
      this.threadBatch = null;
      end();
    }
  }

  /** An embedded file: there when the process is. */
  async ping(): Promise<void> {
    this.raw.prepare('SELECT 1').get();
  }

  /** One connection: the same as transaction(). */
  atomic<T>(fn: () => Promise<T>): Promise<T> {
    return this.transaction(fn);
  }

  private async runTransaction<T>(fn: () => Promise<T>): Promise<T> {
    const sqlite = this.raw;
    let end!: () => void;
    this.openTransaction = new Promise((resolve) => {
      end = resolve;
    });
    try {
      sqlite.exec('BEGIN IMMEDIATE');
      try {
        const out = await this.inTransaction.run(true, fn);
        sqlite.exec('COMMIT');
        return out;
      } catch (err) {
        if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
        throw err;
      }
    } finally {
      this.openTransaction = null;
      end();
    }
  }

  /**
   * Several processes may start together on one file (cloud replicas): the whole run holds
   * the write lock (BEGIN EXCLUSIVE, waiting up to busy_timeout for another migrator), and
   * the applied ids are read inside the lock, so each migration applies exactly once.
   */
  async migrate(migrations: readonly Migration[]): Promise<void> {
    const sqlite = this.raw;
    await whileBusy(() => sqlite.exec('BEGIN EXCLUSIVE'));
    try {
      sqlite.exec('CREATE TABLE IF NOT EXISTS _migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
      const applied = new Set(sqlite.prepare('SELECT id FROM _migrations').pluck().all() as string[]);
      const record = sqlite.prepare('INSERT INTO _migrations (id, applied_at) VALUES (?, ?)');
      for (const m of migrations) {
        if (applied.has(m.id)) continue;
        sqlite.exec(m.sql);
        record.run(m.id, new Date().toISOString());
      }
      sqlite.exec('COMMIT');
    } catch (err) {
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
      throw err;
    }
    this.statements = new Map(); // compiled against the old schema
  }

  async close(): Promise<void> {
    await this.transactionTail;
    this.stopProbe();
    // the thread's connection closes first: the main one, closing last, checkpoints what is left and removes the WAL
    await this.thread?.stop();
    this.thread = null;
    this.sqlite?.close();
    this.sqlite = null;
    this.statements = new Map();
  }
}

function translate<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw translateError(err);
  }
}

function translateError(err: unknown): unknown {
  const code = (err as { code?: string }).code;
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
    return new UniqueViolation((err as Error).message, { cause: err });
  return err;
}

/** Runs fn again while SQLite answers "database is locked" (another process holds the file), for up to `ms`. */
async function whileBusy<T>(fn: () => T, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return fn();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if ((code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
    }
  }
}
