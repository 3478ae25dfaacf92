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
  /** inside the executable: the main thread's loaded SQLite addon, to share its mapping (sqliteAddonShared) */
  sqliteAddon?: string;
  /** how long a write waits for another connection's lock before it fails (and is retried) */
  busyTimeoutMs: number;
  control: SharedArrayBuffer;
  /** replies the main thread takes synchronously (receiveMessageOnPort) */
  replies: MessagePort;
}

/**
 * A batch as it crosses to the thread: columns, not an object per row. The structured clone
 * of 5,000 row objects (their keys and values one by one, rebuilt there) cost 1.7 µs a row
 * posted and received in a micro-benchmark, these columns 0.6 µs with their building; the
 * numbers go in one transferred buffer (moved, not copied).
 */
export interface PackedRows {
  /** per row: 0 a state, 1 an event */
  kinds: Uint8Array<ArrayBuffer>;
  /** a state's entity_id, an event's event_type */
  names: string[];
  /** a state's state, an event's data as JSON */
  texts: (string | null)[];
  /** a state's attributes as JSON (null: none); an event's null */
  shared: (string | null)[];
  /** per row two: last_updated (an event's time_fired) and last_changed (NaN: null) */
  times: Float64Array<ArrayBuffer>;
}

/** The rows' JSON is made here (see RecorderWriter.write): `attributes` and `data` are not sent. */
export function packRows(rows: PendingRow[]): PackedRows {
  const n = rows.length;
  const packed: PackedRows = {
    kinds: new Uint8Array(n),
    names: new Array<string>(n),
    texts: new Array<string | null>(n),
    shared: new Array<string | null>(n),
    times: new Float64Array(2 * n),
  };
  for (let i = 0; i < n; i++) {
    const row = rows[i];
    if (row.kind === 'state') {
      packed.names[i] = row.entity_id;
      packed.texts[i] = row.state;
      packed.shared[i] = row.shared !== undefined ? row.shared : row.attributes && JSON.stringify(row.attributes);
      packed.times[2 * i] = row.last_updated;
      packed.times[2 * i + 1] = row.last_changed ?? NaN;
    } else {
      packed.kinds[i] = 1;
      packed.names[i] = row.event_type;
      packed.texts[i] = row.json ?? JSON.stringify(row.data ?? {});
      packed.shared[i] = null;
      packed.times[2 * i] = row.time_fired;
    }
  }
  return packed;
}

export function unpackRows(packed: PackedRows): PendingRow[] {
  const { kinds, names, texts, shared, times } = packed;
  const rows = new Array<PendingRow>(kinds.length);
  for (let i = 0; i < kinds.length; i++) {
    const changed = times[2 * i + 1];
    rows[i] =
      kinds[i] === 0
        ? {
            kind: 'state',
            entity_id: names[i],
            state: texts[i],
            attributes: null,
            shared: shared[i],
            last_updated: times[2 * i],
            last_changed: Number.isNaN(changed) ? null : changed,
          }
        : { kind: 'event', event_type: names[i], data: null, json: texts[i] ?? '{}', time_fired: times[2 * i] };
  }
  return rows;
}

/** reply: 'sync' answers on the replies port, 'async' on the worker's own port, 'none' not at all */
export type WriterOp = { seq: number; reply: 'sync' | 'async' | 'none' } & (
  | { type: 'write'; rows: PackedRows }
  | { type: 'rename'; oldId: string; newId: string }
  | { type: 'keep-sets'; metadataId: number; cutoff: number }
  | { type: 'delete-orphans'; metadataId: number; candidates: number[] }
  | { type: 'close' }
);

/** seq -1: a log line from the writer (a failed write) */
export type WriterReply = { seq: number; result?: unknown; error?: string };
