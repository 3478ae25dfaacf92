import type { MessagePort } from 'node:worker_threads';
import type { PendingRow } from './store.ts';

/** Between the recorder (main thread) and its writer thread (writer-worker.ts). */

/** Int32 slots of the shared control buffer. */
/** seq of the last op the writer finished (written, or given up at stop) */
export const DONE = 0;
/** 1 while the op at the head of the writer's queue keeps failing (it is retried); 2: the thread could not open its connection */
export const FAILING = 1;
/** the database's write gate (db/write-gate.ts) */
export const GATE = 2;
export const CONTROL_SLOTS = 3;

export interface WriterData {
  /** the edge's SQLite file (already migrated, WAL) */
  file: string;
  /** where the executable's SQLite addon may be unpacked (the data dir) */
  fallbackDir: string;
  /** how long a write waits for another connection's lock before it fails (and is retried) */
  busyTimeoutMs: number;
  control: SharedArrayBuffer;
  /** replies the main thread takes synchronously (receiveMessageOnPort) */
  replies: MessagePort;
}

/** reply: 'sync' answers on the replies port, 'async' on the worker's own port, 'none' not at all */
export type WriterOp = { seq: number; reply: 'sync' | 'async' | 'none' } & (
  | { type: 'write'; rows: PendingRow[] }
  | { type: 'rename'; oldId: string; newId: string }
  | { type: 'delete-orphans'; metadataId: number }
  | { type: 'close' }
);

/** seq -1: a log line from the writer (a failed write) */
export type WriterReply = { seq: number; result?: unknown; error?: string };
