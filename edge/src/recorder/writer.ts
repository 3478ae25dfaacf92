import path from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { mainGate, type WriteGate } from '../db/write-gate.ts';
import type { Logger } from '../log.ts';
import { sqliteAddonShared } from '../native/sqlite-binding.ts';
import type { PendingRow } from './store.ts';
import {
  CONTROL_SLOTS,
  DONE,
  FAILING,
  GATE,
  packRows,
  type WriterData,
  type WriterOp,
  type WriterReply,
} from './writer-protocol.ts';

/** The writer thread's code inside the one-file executable (a SEA asset; see tools/src/build-edge). */
export const WRITER_ASSET = 'recorder-writer.cjs';

/** Where the recorder's batches go: its writer thread (RecorderWriter) or the calling thread (InlineWriter). */
export interface RowWriter {
  start(): void;
  /** one transaction */
  write(rows: PendingRow[]): void;
  /** returns once every row written so far is committed */
  flush(): void;
  /** rows handed over and not yet committed */
  readonly pendingRows: number;
  /** batches handed over */
  readonly batches: number;
  /** the gate the main thread's background writes take while this writer runs (a thread: its own connection) */
  readonly gate: WriteGate | null;
  renameEntity(oldId: string, newId: string): boolean;
  /** before the purge deletes an entity's rows older than `cutoff`: the sets later rows use move out of them (store.keepSets) */
  keepSets(metadataId: number, cutoff: number): Promise<number>;
  /** of `candidates` (the sets of an entity's purged rows), deletes those no row uses */
  deleteOrphans(metadataId: number, candidates: number[]): Promise<number>;
  stop(): Promise<void>;
}

export interface RecorderWriterOptions {
  /** rows posted but not yet committed beyond which new batches are dropped (and said once) */
  maxBacklogRows?: number;
  /** how long flush() waits for the writer before it throws */
  flushTimeoutMs?: number;
  /** how long a write waits for another connection's lock (the purge's) before it fails and is retried */
  busyTimeoutMs?: number;
}

/**
 * The main thread's side of the recorder's writer thread: batches are posted with their
 * attributes and event data as JSON text (the thread does the dedup and the SQL), and flush() blocks
 * on a shared counter until the thread has committed everything posted so far, so callers
 * keep the old synchronous contract: after flush(), queries see every recorded row.
 * Lifecycle: constructor assigns, start() spawns the thread, stop() has it write what is
 * queued, close its connection and exit.
 */
export class RecorderWriter implements RowWriter {
  private readonly file: string;
  private readonly log: Logger;
  private readonly maxBacklogRows: number;
  private readonly flushTimeoutMs: number;
  private readonly busyTimeoutMs: number;
  private worker: Worker | null = null;
  private exited: Promise<void> = Promise.resolve();
  private replies: MessagePort | null = null;
  private control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * 4));
  private seq = 0;
  /** rows posted per write seq not yet known done */
  private readonly inFlight = new Map<number, number>();
  private inFlightRows = 0;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private dropping = false;
  /** rows dropped because the writer was too far behind (HA drops too, past its backlog) */
  dropped = 0;
  /** batches posted (one transaction each in the thread) */
  batches = 0;
  /** over the current control buffer (start() makes a new one) */
  private currentGate: WriteGate = mainGate(this.control, GATE);

  constructor(file: string, log: Logger, options: RecorderWriterOptions = {}) {
    this.file = file;
    this.log = log;
    this.maxBacklogRows = options.maxBacklogRows ?? 100_000;
    this.flushTimeoutMs = options.flushTimeoutMs ?? 30_000;
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  }

  start(): void {
    if (this.worker) return;
    this.control = new Int32Array(new SharedArrayBuffer(CONTROL_SLOTS * 4));
    this.currentGate = mainGate(this.control, GATE);
    this.seq = 0;
    const channel = new MessageChannel();
    const data: WriterData = {
      file: this.file,
      fallbackDir: path.dirname(this.file),
      sqliteAddon: sqliteAddonShared(),
      busyTimeoutMs: this.busyTimeoutMs,
      control: this.control.buffer as SharedArrayBuffer,
      replies: channel.port2,
    };
    const worker = spawnWriter(data, [channel.port2]);
    worker.on('message', (m: WriterReply) => this.onReply(m));
    worker.on('error', (err) => this.log.error('recorder: writer thread failed', err));
    // a thread that died (no connection) exits before stop(): stop() must not wait for it
    this.exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // the main thread never waits for the thread's own sake: an idle edge may exit
    worker.unref();
    this.replies = channel.port1;
    this.worker = worker;
  }

  get gate(): WriteGate | null {
    return this.worker ? this.currentGate : null;
  }

  /** Rows posted and not yet committed. */
  get pendingRows(): number {
    this.settle();
    return this.inFlightRows;
  }

  write(rows: PendingRow[]): void {
    if (!this.worker || rows.length === 0) return;
    this.settle();
    if (this.inFlightRows + rows.length > this.maxBacklogRows) {
      this.dropped += rows.length;
      if (!this.dropping)
        this.log.warn(`recorder: writer ${this.inFlightRows} rows behind, dropping rows until it catches up`);
      this.dropping = true;
      return;
    }
    this.dropping = false;
    // JSON here, not in the thread: the text is needed anyway, and a string crosses as one copy
    // where the structured clone walks each object twice (serialise here, rebuild there)
    const packed = packRows(rows);
    const seq = this.post({ type: 'write', rows: packed, reply: 'none' }, [packed.kinds.buffer, packed.times.buffer]);
    this.inFlight.set(seq, rows.length);
    this.inFlightRows += rows.length;
    this.batches++;
  }

  /**
   * Blocks until the thread has done every op posted so far. Throws when a write keeps failing
   * (the thread retries it; nothing is lost) or after flushTimeoutMs.
   */
  flush(): void {
    if (!this.worker) return;
    const target = this.seq;
    const deadline = performance.now() + this.flushTimeoutMs;
    for (;;) {
      const done = Atomics.load(this.control, DONE);
      if (done - target >= 0) break;
      const failing = Atomics.load(this.control, FAILING);
      if (failing === 2) throw new Error('recorder: the writer thread could not open the database');
      if (failing) throw new Error('recorder: writing failed; the rows are kept and retried');
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`recorder: the writer thread did not finish in ${this.flushTimeoutMs} ms`);
      Atomics.wait(this.control, DONE, done, Math.min(left, 100));
    }
    this.settle();
  }

  /** Moves an entity's history to a new id (after every row posted before); true when moved. */
  renameEntity(oldId: string, newId: string): boolean {
    return this.callSync({ type: 'rename', oldId, newId, reply: 'sync' }) as boolean;
  }

  /** Moves the sets later rows use out of the rows the purge will delete, in order with the writes (its first step). */
  async keepSets(metadataId: number, cutoff: number): Promise<number> {
    return (await this.call({ type: 'keep-sets', metadataId, cutoff, reply: 'async' })) as number;
  }

  /** Deletes the entity's attribute sets no row uses, in order with the writes (the purge's last step). */
  async deleteOrphans(metadataId: number, candidates: number[]): Promise<number> {
    return (await this.call({ type: 'delete-orphans', metadataId, candidates, reply: 'async' })) as number;
  }

  /** An op whose answer the caller needs now (after everything posted before it). */
  private callSync(op: DistributiveOmit<WriterOp, 'seq'>): unknown {
    if (!this.worker || !this.replies) throw new Error('recorder writer is not running');
    const seq = this.post(op);
    this.flush();
    for (;;) {
      const received = receiveMessageOnPort(this.replies);
      if (!received) throw new Error('recorder: the writer thread did not answer');
      const m = received.message as WriterReply;
      if (m.seq !== seq) continue;
      if (m.error) throw new Error(m.error);
      return m.result;
    }
  }

  private call(op: DistributiveOmit<WriterOp, 'seq'>): Promise<unknown> {
    if (!this.worker) return Promise.reject(new Error('recorder writer is not running'));
    const seq = this.post(op);
    return new Promise((resolve, reject) => this.waiting.set(seq, { resolve, reject }));
  }

  /** Writes what was posted, closes the thread's connection and waits for it to exit. */
  async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const exited = this.exited;
    const closed = new Promise<unknown>((resolve, reject) => this.waiting.set(this.seq + 1, { resolve, reject }));
    this.post({ type: 'close', reply: 'async' });
    worker.ref();
    await Promise.race([closed.catch(() => undefined), exited]);
    this.worker = null;
    this.replies?.close();
    this.replies = null;
    await worker.terminate();
    await exited;
    for (const w of this.waiting.values()) w.reject(new Error('recorder writer stopped'));
    this.waiting.clear();
    this.inFlight.clear();
    this.inFlightRows = 0;
  }

  private post(op: DistributiveOmit<WriterOp, 'seq'>, transfer: ArrayBuffer[] = []): number {
    this.worker!.postMessage({ ...op, seq: this.seq + 1 }, transfer);
    return ++this.seq;
  }

  /** Forgets the in-flight counts of batches the thread has done. */
  private settle(): void {
    if (this.inFlight.size === 0) return;
    const done = Atomics.load(this.control, DONE);
    for (const [seq, rows] of this.inFlight) {
      if (done - seq < 0) break; // in seq order
      this.inFlight.delete(seq);
      this.inFlightRows -= rows;
    }
  }

  private onReply(m: WriterReply): void {
    if (m.seq === -1) {
      this.log.error(m.error ?? 'recorder: writer error');
      return;
    }
    const w = this.waiting.get(m.seq);
    if (!w) return;
    this.waiting.delete(m.seq);
    if (m.error) w.reject(new Error(m.error));
    else w.resolve(m.result);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The thread's code: the .ts file next to this one, or inside the executable its bundled asset. */
function spawnWriter(data: WriterData, transfer: MessagePort[]): Worker {
  const sea = process.getBuiltinModule('node:sea');
  if (sea?.isSea())
    return new Worker(sea.getAsset(WRITER_ASSET, 'utf8'), { eval: true, workerData: data, transferList: transfer });
  return new Worker(new URL('./writer-worker.ts', import.meta.url), { workerData: data, transferList: transfer });
}
