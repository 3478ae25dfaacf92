import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The thread's code, evaluated (not a file): it runs the same from the sources and from the
 * bundle. Its own connection checkpoints the WAL every `everyMs`, PASSIVE: it never waits for
 * and never blocks the main connection's writers and readers, and a frame a reader still needs
 * is left for the next round. On 'stop' it closes its connection and exits.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.addon);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 0');
const round = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    // another process's checkpoint holds the lock (replicas on one file): the next round
    if (err.code !== 'SQLITE_BUSY' && err.code !== 'SQLITE_LOCKED') throw err;
  }
};
const timer = setInterval(round, workerData.everyMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * The SQLite file's own thread, with a connection of its own. It checkpoints the WAL. With SQLite's automatic checkpoint
 * the commit that crosses 1,000 WAL pages copies them back into the file and syncs it, on the
 * event loop: 20–57 ms turns every second or two in the fleet bench's steady state at 1,000
 * deltas/s (#19). The main connection then runs with `wal_autocheckpoint = 0` (SqliteDriver).
 */
export class SqliteThread {
  private readonly file: string;
  private readonly everyMs: number;
  private readonly onError: (err: Error) => void;
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();

  /** onError: the thread failed (it has exited; the caller checkpoints again itself) */
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
    this.exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.once('error', (err) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.onError(err);
    });
    // a checkpoint is never a reason to keep the process alive
    worker.unref();
    this.worker = worker;
  }

  /** Lets a round in progress finish, closes the thread's connection and waits for it to exit. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) worker.postMessage('stop');
    await this.exited;
  }
}
