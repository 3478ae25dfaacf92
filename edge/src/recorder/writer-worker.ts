import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { sqliteNativeBinding } from '../native/sqlite-binding.ts';
import { RecorderStore, type PendingRow } from './store.ts';
import { enterAsWriter, leaveAsWriter } from '../db/write-gate.ts';
import { WAL_AUTOCHECKPOINT_PAGES } from '../db/wal.ts';
import {
  DONE,
  FAILING,
  GATE,
  unpackRows,
  type WriterData,
  type WriterOp,
  type WriterReply,
} from './writer-protocol.ts';

/** An op as queued here: a write's rows unpacked. */
type QueuedOp =
  Exclude<WriterOp, { type: 'write' }> | { type: 'write'; seq: number; reply: WriterOp['reply']; rows: PendingRow[] };

/**
 * The recorder's writer thread: its own connection to the edge's SQLite file (WAL, so the main
 * thread's queries see each batch once committed) and a RecorderStore doing the JSON, the
 * attribute dedup and the inserts. Ops run in the order they were posted; a failed one (disk
 * full, database locked) stays at the head and is retried, so later rows never overtake it.
 * After each op the shared counter `DONE` takes its seq, which is what the main thread's
 * flush waits on.
 */
const data = workerData as WriterData;
const control = new Int32Array(data.control);
const replies: MessagePort = data.replies;
const RETRY_MS = 1000;
/** rows per transaction at most when queued writes are joined */
const MAX_ROWS = 10_000;

function openConnection(): Database.Database {
  try {
    const db = new Database(data.file, {
      nativeBinding: sqliteNativeBinding(data.fallbackDir, data.sqliteAddon) as string | undefined,
    });
    db.pragma('synchronous = NORMAL');
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    db.pragma(`busy_timeout = ${Math.trunc(data.busyTimeoutMs)}`);
    db.pragma('foreign_keys = ON');
    return db;
  } catch (err) {
    // the main thread's flush() must not wait for a thread that will never write
    Atomics.store(control, FAILING, 2);
    Atomics.notify(control, DONE);
    throw err;
  }
}

const sqlite = openConnection();
const store = new RecorderStore({ sqlite });
store.open();

const queue: QueuedOp[] = [];
let retry: NodeJS.Timeout | null = null;

function run(op: QueuedOp): unknown {
  switch (op.type) {
    case 'write':
      store.write(op.rows);
      return undefined;
    case 'rename':
      return store.renameEntity(op.oldId, op.newId);
    case 'keep-sets':
      return store.keepSets(op.metadataId, op.cutoff);
    case 'delete-orphans':
      return store.deleteOrphans(op.metadataId, op.candidates);
    case 'close':
      return undefined;
  }
}

/** Runs a write holding the database's write gate, so the main thread's background writes wait their turn without blocking its loop. */
function gated<T>(write: () => T): T {
  enterAsWriter(control, GATE);
  try {
    return write();
  } finally {
    leaveAsWriter(control, GATE);
  }
}

function reply(op: QueuedOp, message: WriterReply): void {
  if (op.reply === 'sync') replies.postMessage(message);
  else if (op.reply === 'async') parentPort!.postMessage(message);
}

function finish(op: QueuedOp): void {
  Atomics.store(control, DONE, op.seq);
  Atomics.notify(control, DONE);
}

/**
 * Writes queued back to back go in one transaction (up to MAX_ROWS): a thread that fell behind
 * catches up with fewer commits.
 */
function takeWrites(): { last: QueuedOp; rows: PendingRow[]; count: number } | null {
  if (queue[0]?.type !== 'write') return null;
  let rows: PendingRow[] = [];
  let count = 0;
  let n = 0;
  for (const op of queue) {
    if (op.type !== 'write' || (n > 0 && rows.length + op.rows.length > MAX_ROWS)) break;
    rows = n === 0 ? op.rows : rows.concat(op.rows);
    count++;
    n++;
  }
  return { last: queue[count - 1], rows, count };
}

function drain(): void {
  retry = null;
  while (queue.length) {
    const op = queue[0];
    try {
      const writes = takeWrites();
      if (writes) {
        const started = performance.now();
        gated(() => store.write(writes.rows));
        queue.splice(0, writes.count);
        Atomics.store(control, FAILING, 0);
        finish(writes.last);
        if (queue.length) {
          // the main thread's own writes (current states, the purge) wait on the same lock, in
          // SQLite's busy handler: a pause after each transaction lets them in
          retry = setTimeout(drain, Math.max(1, (performance.now() - started) / 2));
          return;
        }
        continue;
      }
      const result = gated(() => run(op));
      queue.shift();
      Atomics.store(control, FAILING, 0);
      reply(op, { seq: op.seq, result });
      if (op.type === 'close') return close(op);
      finish(op);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (queue.some((o) => o.type === 'close')) {
        // stopping: nothing would retry it; said, then given up
        queue.shift();
        reply(op, { seq: op.seq, error: message });
        parentPort!.postMessage({ seq: -1, error: `recorder: ${op.type} failed at stop, dropped: ${message}` });
        finish(op);
        continue;
      }
      Atomics.store(control, FAILING, 1);
      Atomics.notify(control, DONE);
      parentPort!.postMessage({ seq: -1, error: `recorder: ${op.type} failed, retrying: ${message}` });
      retry = setTimeout(drain, RETRY_MS);
      return;
    }
  }
}

function close(op: QueuedOp): void {
  store.close();
  sqlite.close();
  finish(op);
  parentPort!.close();
  replies.close();
}

parentPort!.on('message', (op: WriterOp) => {
  queue.push(op.type === 'write' ? { ...op, rows: unpackRows(op.rows) } : op);
  // a failing op (or the pause after a transaction) has a timer: the new one queues behind it
  if (!retry) drain();
});
