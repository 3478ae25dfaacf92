import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** One statement of a batch, with its parameters bound already (bindParams). */
export type BoundStatement = readonly [sql: string, params: readonly unknown[]];

/**
 * The thread's code, evaluated (not a file): it runs the same from the sources and from the
 * bundle. Its own connection checkpoints the WAL every `everyMs`, PASSIVE: it never waits for
 * and never blocks the main connection's writers and readers (SQLite calls no busy handler for
 * it), and a frame a reader still needs is left for the next round. A batch message runs its
 * statements as one transaction and answers once committed or rolled back. Messages are taken in
 * order, so on 'stop' the batches sent before it are done; then it closes its connection and exits.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.addon);
const db = new Database(workerData.file);
// a batch waits for another process's writer (replicas on one file) as the main connection does
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('wal_autocheckpoint = 0');
const round = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    // another process's checkpoint holds the lock (replicas on one file): the next round
    if (err.code !== 'SQLITE_BUSY' && err.code !== 'SQLITE_LOCKED') throw err;
  }
};
const timer = setInterval(round, workerData.everyMs);
const statements = new Map();
const statement = (sql) => {
  let stmt = statements.get(sql);
  if (!stmt) {
    if (statements.size >= 500) statements.delete(statements.keys().next().value);
    statements.set(sql, (stmt = db.prepare(sql)));
  }
  return stmt;
};
parentPort.on('message', (m) => {
  if (m === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.exec('BEGIN IMMEDIATE');
    for (const [sql, params] of m.statements) statement(sql).run(...params);
    db.exec('COMMIT');
    parentPort.postMessage({ id: m.id });
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    parentPort.postMessage({ id: m.id, error: { message: String(err && err.message), code: err && err.code } });
  }
});
`;

interface Pending {
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * The SQLite file's own thread, with a connection of its own, for the work that would otherwise
 * stall the event loop once the file is busy (SqliteDriver starts it then):
 * - it checkpoints the WAL. With SQLite's automatic checkpoint the commit that crosses 1,000 WAL
 *   pages copies them back into the file and syncs it, on the event loop: 20–57 ms turns every
 *   second or two in the fleet bench's steady state at 1,000 deltas/s (#19). The main connection
 *   then runs with `wal_autocheckpoint = 0` (SqliteDriver).
 * - it runs batches of writes (run): the mirror's state changes, a quarter of the replica's main
 *   thread at 10,000 edges, in transactions of up to 15 ms each on the loop (#19).
 */
export class SqliteThread {
  private readonly file: string;
  private readonly everyMs: number;
  private readonly onError: (err: Error) => void;
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /** onError: the thread failed (it has exited; the caller checkpoints and writes itself again) */
  constructor(file: string, onError: (err: Error) => void, everyMs = 200) {
    this.file = file;
    this.onError = onError;
    this.everyMs = everyMs;
  }

  get running(): boolean {
    return this.worker !== null;
  }

  start(): void {
    if (this.worker) return;
    const addon = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(THREAD, { eval: true, workerData: { addon, file: this.file, everyMs: this.everyMs } });
    this.exited = new Promise<void>((resolve) =>
      worker.once('exit', () => {
        this.failPending(new Error('the SQLite thread exited'));
        resolve();
      }),
    );
    worker.on('message', (m: { id: number; error?: { message: string; code?: string } }) => this.answered(m));
    worker.once('error', (err) => {
      this.failPending(err);
      if (this.worker !== worker) return;
      this.worker = null;
      this.onError(err);
    });
    // a checkpoint is never a reason to keep the process alive (a batch in flight is: run refs it)
    worker.unref();
    this.worker = worker;
  }

  /**
   * Runs the statements as one transaction on the thread; resolves once committed, rejects with
   * SQLite's error (its `code` kept) once rolled back, or when the thread is gone.
   */
  run(statements: readonly BoundStatement[]): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.reject(new Error('the SQLite thread is not running'));
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      if (this.pending.size === 0) worker.ref();
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, statements });
    });
  }

  private answered(m: { id: number; error?: { message: string; code?: string } }): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (this.pending.size === 0) this.worker?.unref();
    if (m.error) p.reject(Object.assign(new Error(m.error.message), { code: m.error.code }));
    else p.resolve();
  }

  private failPending(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Lets a round and the batches sent finish, closes the thread's connection and waits for it to exit. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) worker.postMessage('stop');
    await this.exited;
  }
}
