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
 * A batch as it crosses to the thread: columns, not an object per row, and its strings joined
 * into one. The structured clone of 5,000 row objects (their keys and values one by one, rebuilt
 * there) cost 1.7 µs a row posted and received in a micro-benchmark, columns of strings 0.4-0.6 µs
 * with their building, the strings joined (one string to copy, cut by lengths there) 0.15-0.25 µs
 * (v8.serialize/deserialize, same process). The numbers go in transferred buffers (moved, not copied).
 */
export interface PackedRows {
  /** per row: 0 a state, 1 an event */
  kinds: Uint8Array<ArrayBuffer>;
  /**
   * per row, one after the other: a state's entity_id, state and attributes as JSON; an event's
   * event_type and data as JSON (its third is null)
   */
  text: string;
  /** per row three: the lengths of those strings in `text` (-1: null) */
  lengths: Int32Array<ArrayBuffer>;
  /** per row two: last_updated (an event's time_fired) and last_changed (NaN: null) */
  times: Float64Array<ArrayBuffer>;
}

/** The rows' JSON is made here (see RecorderWriter.write): `attributes` and `data` are not sent. */
export function packRows(rows: PendingRow[]): PackedRows {
  const n = rows.length;
  const kinds = new Uint8Array(n);
  const lengths = new Int32Array(3 * n);
  const times = new Float64Array(2 * n);
  const parts: string[] = [];
  const add = (k: number, text: string | null) => {
    if (text === null) lengths[k] = -1;
    else {
      lengths[k] = text.length;
      parts.push(text);
    }
  };
  for (let i = 0; i < n; i++) {
    const row = rows[i];
    if (row.kind === 'state') {
      add(3 * i, row.entity_id);
      add(3 * i + 1, row.state);
      add(3 * i + 2, row.shared !== undefined ? row.shared : row.attributes && JSON.stringify(row.attributes));
      times[2 * i] = row.last_updated;
      times[2 * i + 1] = row.last_changed ?? NaN;
    } else {
      kinds[i] = 1;
      add(3 * i, row.event_type);
      add(3 * i + 1, row.json ?? JSON.stringify(row.data ?? {}));
      add(3 * i + 2, null);
      times[2 * i] = row.time_fired;
    }
  }
  return { kinds, text: parts.join(''), lengths, times };
}

export function unpackRows(packed: PackedRows): PendingRow[] {
  const { kinds, text, lengths, times } = packed;
  const rows = new Array<PendingRow>(kinds.length);
  let at = 0;
  const next = (k: number): string | null => {
    const length = lengths[k];
    if (length < 0) return null;
    const s = text.slice(at, at + length);
    at += length;
    return s;
  };
  for (let i = 0; i < kinds.length; i++) {
    const name = next(3 * i) as string;
    const second = next(3 * i + 1);
    const shared = next(3 * i + 2);
    const changed = times[2 * i + 1];
    rows[i] =
      kinds[i] === 0
        ? {
            kind: 'state',
            entity_id: name,
            state: second,
            attributes: null,
            shared,
            last_updated: times[2 * i],
            last_changed: Number.isNaN(changed) ? null : changed,
          }
        : { kind: 'event', event_type: name, data: null, json: second ?? '{}', time_fired: times[2 * i] };
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
