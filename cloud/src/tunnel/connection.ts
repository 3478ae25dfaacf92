import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type WebSocket from 'ws';
import { tunnel } from '@smarthome/protocol';
import { JsonTooDeepError, MAX_TUNNEL_JSON_DEPTH, describeZodError, parseJson } from '@smarthome/protocol/server';
import type { Release, Share, SnapshotBacklog } from './backlog.ts';
import type { LoopSlices } from './slices.ts';
import { SnapshotEnvelope, type TunnelMessage } from './snapshot.ts';

export interface RpcResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  encoding?: 'base64';
}

/**
 * Frames from this size on are parsed in a slice of LoopSlices, not in the socket's callback, and
 * take room in the backlog until handled. A snapshot of 100 entities is ~58 KB: under the 64 KB
 * this was, 10,000 edges' first sync held every parsed snapshot at once while PostgreSQL stored
 * three at a time (peak RSS 1,154 MB, #19).
 */
const LARGE_FRAME_BYTES = 16 * 1024;

export class EdgeOfflineError extends Error {}
export class EdgeTimeoutError extends Error {}
export class EdgeBusyError extends Error {}

export interface ConnectionLimits {
  /** bytes queued on the socket beyond which new requests are refused, not buffered */
  maxBufferedBytes: number;
  /** requests awaiting an answer beyond which new requests are refused */
  maxPendingRequests: number;
  rpcTimeoutMs: number;
  heartbeatMs: number;
}

export const defaultConnectionLimits: ConnectionLimits = {
  maxBufferedBytes: 4 * 1024 * 1024,
  maxPendingRequests: 1000,
  rpcTimeoutMs: 10_000,
  heartbeatMs: 5_000,
};

interface Pending {
  resolve: (r: RpcResult) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * One edge's tunnel on the cloud side: validated messages in both directions, RPCs with
 * correlation ids and timeouts, bounded buffering, and ws-level heartbeats.
 */
export class EdgeConnection {
  readonly edgeId: number;
  private readonly socket: WebSocket;
  private readonly limits: ConnectionLimits;
  private readonly pending = new Map<string, Pending>();
  private readonly slices: LoopSlices;
  private readonly backlog: SnapshotBacklog;
  /** frames not yet processed (waiting for the backlog or a slice): later ones wait behind them, so order holds */
  private deferred = 0;
  /** the chain of those frames */
  private inbox: Promise<void> = Promise.resolve();
  /** frames waiting for room in the backlog: the socket is not read meanwhile */
  private waitingRoom = 0;
  /** the socket under the WebSocket, whose reads show a large frame coming before it is whole */
  private readonly wire: Duplex | null;
  /** bytes read since the last message (roughly: the frame being read) */
  private partialBytes = 0;
  /** a message was delivered since the last read was counted */
  private delivered = false;
  /** the backlog's room for the large frame being read, taken before it is read whole */
  private early: Promise<Share> | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private alive = true;
  closed = false;
  /**
   * A message, in order. `release` gives a snapshot's share of the backlog back: whoever takes the
   * snapshot calls it once the snapshot is stored or dropped (for other messages the connection does).
   */
  onMessage: (msg: TunnelMessage, release: Release) => void = () => {};
  onClose: () => void = () => {};
  onProtocolError: (reason: string) => void = () => {};

  constructor(
    edgeId: number,
    socket: WebSocket,
    limits: ConnectionLimits,
    slices: LoopSlices,
    backlog: SnapshotBacklog,
    wire: Duplex | null = null,
  ) {
    this.wire = wire;
    this.edgeId = edgeId;
    this.socket = socket;
    this.limits = limits;
    this.slices = slices;
    this.backlog = backlog;
  }

  start(): void {
    // after the WebSocket's own listener: the messages a chunk completes are delivered by then
    this.wire?.on('data', (chunk: Buffer) => this.read(chunk.length));
    this.socket.on('message', (data, isBinary) => this.receive(data as Buffer, isBinary));
    this.socket.on('close', () => this.closedByPeer());
    this.socket.on('error', () => this.socket.terminate());
    this.socket.on('pong', () => {
      this.alive = true;
    });
    // A peer that stops answering pings (power cut, NAT drop) is cut after two intervals.
    const beat = () => {
      // not read while it waits for the backlog: its pongs cannot be seen, it is not dead for that
      if (this.waitingRoom > 0) return;
      if (!this.alive) {
        this.socket.terminate();
        return;
      }
      this.alive = false;
      this.socket.ping();
    };
    // The first beat at a random point of the interval: a reconnect storm opens thousands of
    // tunnels within a second or two, whose intervals would otherwise ping them all in the same
    // few turns of the loop, every interval.
    const { heartbeatMs } = this.limits;
    this.heartbeat = setTimeout(() => {
      if (this.closed) return;
      beat();
      this.heartbeat = setInterval(beat, heartbeatMs);
      this.heartbeat.unref();
    }, Math.random() * heartbeatMs);
    this.heartbeat.unref();
  }

  /**
   * A large frame being read takes its room in the backlog when its first LARGE_FRAME_BYTES are in, not once
   * it is whole: over the budget, the rest of it stays in the kernel's buffers until there is room.
   */
  private read(bytes: number): void {
    if (this.delivered) {
      this.delivered = false;
      this.partialBytes = 0; // this chunk ended a message: what it holds of the next is not counted
      return;
    }
    this.partialBytes += bytes;
    if (this.partialBytes >= LARGE_FRAME_BYTES && !this.early && !this.closed)
      this.early = this.admit(this.partialBytes);
  }

  private receive(data: Buffer, isBinary: boolean): void {
    this.delivered = true;
    this.partialBytes = 0;
    // room taken while this frame was read is this frame's
    const early = this.early;
    this.early = null;
    if (early && data.length < LARGE_FRAME_BYTES) void early.then((share) => share.release());
    // a snapshot frame of megabytes is tens of milliseconds of parsing: not in the poll phase, where
    // every socket with data would add its own
    if (this.deferred === 0 && data.length < LARGE_FRAME_BYTES) {
      this.process(data, isBinary, noRelease);
      return;
    }
    this.deferred += 1;
    // a large frame waits for room in the backlog as raw bytes (parsed, it would be several times
    // that), and the socket is not read until it has room: the edge's next frames wait in the kernel
    let admitted: Promise<Release> = Promise.resolve(noRelease);
    if (data.length >= LARGE_FRAME_BYTES) {
      // admitted while it was read (its real size now), or now
      const share = early ?? this.admit(data.length);
      admitted = share.then((s) => {
        s.resize(data.length);
        return s.release;
      });
    }
    this.inbox = this.inbox.then(async () => {
      const release = await admitted;
      try {
        await this.slices.run(() => {
          this.deferred -= 1;
          // an edge that went away resends what it has no ack for: a stale snapshot is not stored
          if (this.closed) release();
          else this.process(data, isBinary, release);
        });
      } catch {
        release();
        this.socket.terminate();
      }
    });
  }

  /** Resolves once the backlog has room for a frame of `bytes`; stops reading the socket until then. */
  private admit(bytes: number): Promise<Share> {
    return new Promise<Share>((resolve) => {
      let waited = false;
      const now = this.backlog.enter(bytes, (share) => {
        if (waited) {
          this.waitingRoom -= 1;
          if (this.waitingRoom === 0 && !this.closed) {
            this.alive = true; // a full interval for the pong that waited in the kernel
            this.socket.resume();
          }
        }
        resolve(share);
      });
      if (now) return;
      waited = true;
      this.waitingRoom += 1;
      this.socket.pause();
    });
  }

  /** Whether reading the socket is paused (its frames wait for room in the backlog). */
  get paused(): boolean {
    return this.socket.isPaused;
  }

  private process(data: Buffer, isBinary: boolean, release: Release): void {
    let handedOver = false;
    try {
      handedOver = this.dispatch(data, isBinary, release);
    } finally {
      if (!handedOver) release();
    }
  }

  /** true when a snapshot was handed to onMessage with `release` (its taker releases it) */
  private dispatch(data: Buffer, isBinary: boolean, release: Release): boolean {
    if (isBinary) {
      this.onProtocolError('binary frames are not part of the protocol');
      return false;
    }
    let raw: unknown;
    try {
      raw = parseJson(data.toString('utf8'), MAX_TUNNEL_JSON_DEPTH);
    } catch (err) {
      this.onProtocolError(err instanceof JsonTooDeepError ? err.message : 'malformed JSON');
      return false;
    }
    if (isSnapshot(raw)) {
      // its items are validated by the hub in slices (validateSnapshot), not here at once
      const envelope = SnapshotEnvelope.safeParse(raw);
      if (!envelope.success) {
        this.onProtocolError(describeZodError(envelope.error));
        return false;
      }
      this.onMessage(envelope.data, release);
      return true;
    }
    const parsed = tunnel.EdgeToCloud.safeParse(raw);
    if (!parsed.success) {
      this.onProtocolError(describeZodError(parsed.error));
      return false;
    }
    const msg = parsed.data;
    if (msg.type === 'response') {
      const p = this.pending.get(msg.id);
      if (!p) return false; // late answer after a timeout
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      p.resolve({ status: msg.status, body: msg.body, headers: msg.headers, encoding: msg.encoding });
      return false;
    }
    if (msg.type === 'ping') {
      this.send({ type: 'pong', ts: msg.ts });
      return false;
    }
    this.onMessage(msg, noRelease);
    return false;
  }

  /** Sends a validated message; false when the socket is gone or too far behind. */
  send(msg: tunnel.CloudToEdge): boolean {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return false;
    // acks, welcomes and pongs are built by the hub from numbers it holds (their types are the
    // check): validating each cost more than sending it (every delta's ack, a storm's welcomes)
    this.socket.send(JSON.stringify(BUILT_HERE.has(msg.type) ? msg : tunnel.CloudToEdge.parse(msg)));
    return true;
  }

  get congested(): boolean {
    return (
      this.socket.bufferedAmount > this.limits.maxBufferedBytes || this.pending.size >= this.limits.maxPendingRequests
    );
  }

  /** An HTTP-shaped call into the edge's local API. */
  request(req: Omit<tunnel.TunnelRequest, 'type' | 'id'>, timeoutMs = this.limits.rpcTimeoutMs): Promise<RpcResult> {
    if (this.closed) return Promise.reject(new EdgeOfflineError());
    // Backpressure: a slow edge makes callers fail fast instead of growing our buffers.
    if (this.congested) return Promise.reject(new EdgeBusyError());
    const id = randomUUID();
    return new Promise<RpcResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new EdgeTimeoutError());
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      if (!this.send({ type: 'request', id, ...req })) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(new EdgeOfflineError());
      }
    });
  }

  close(code = 1000, reason = ''): void {
    if (this.closed) return;
    this.socket.close(code, reason);
    // Do not wait for a peer that may never answer the close handshake.
    setTimeout(() => this.socket.terminate(), 1000).unref();
    this.closedByPeer();
  }

  private closedByPeer(): void {
    if (this.closed) return;
    this.closed = true;
    // a Timeout either way (the first beat's or the interval's)
    if (this.heartbeat) clearTimeout(this.heartbeat);
    // room taken for a frame that will never be whole
    void this.early?.then((share) => share.release());
    this.early = null;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new EdgeOfflineError());
      this.pending.delete(id);
    }
    this.onClose();
  }
}

const noRelease: Release = () => {};

/** messages whose every field the cloud sets itself (see send) */
const BUILT_HERE: ReadonlySet<tunnel.CloudToEdge['type']> = new Set(['ack', 'welcome', 'pong']);

const isSnapshot = (raw: unknown): boolean =>
  typeof raw === 'object' && raw !== null && (raw as { type?: unknown }).type === 'snapshot';
