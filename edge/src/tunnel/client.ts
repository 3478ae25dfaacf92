import os from 'node:os';
import WebSocket from 'ws';
import { tunnel, type ws } from '@smarthome/protocol';
import { MAX_TUNNEL_JSON_DEPTH, parseJson } from '@smarthome/protocol/server';

export interface TunnelLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, err?: unknown, fields?: Record<string, unknown>): void;
}

/** What the tunnel needs from the edge. */
export interface TunnelClientDeps {
  cloudUrl: string;
  token: string;
  edgeVersion: string;
  hostname?: string;
  log: TunnelLogger;
  /** a full copy of what the edge owns */
  snapshot(): tunnel.Snapshot;
  /** every change after start, in order */
  onDelta(listener: (delta: tunnel.Delta) => void): () => void;
  /** an RPC from the cloud into the local API */
  handleRequest(
    req: tunnel.TunnelRequest,
  ): Promise<{ status: number; body: unknown; headers?: Record<string, string>; encoding?: 'base64' }>;
  /** called with the edge id the cloud assigned, on every welcome */
  onWelcome?(edgeId: number): void;
  /**
   * called whenever a connection closes (what was tied to it, e.g. the cloud's trigger subscriptions,
   * ends), with the close code and reason (1006 and '' for a connection that never opened)
   */
  onDisconnect?(close: { code: number; reason: string }): void;
  backoff?: Backoff;
  /** deltas kept for resuming after a reconnect */
  bufferSize?: number;
  /** bytes queued on the socket beyond which we stop sending deltas and resync with a snapshot */
  maxBufferedBytes?: number;
}

export interface Backoff {
  initialMs: number;
  maxMs: number;
  /** the ceiling after the cloud refused the token (default maxMs) */
  refusedMs?: number;
}

/**
 * An unreachable cloud is retried at least every 10 s, so a live edge is back within
 * seconds of a cloud restart; a refused token will not get better by hammering.
 */
export const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 10_000, refusedMs: 30_000 };

/** The longest wait before reconnect attempt `attempt` (0-based): doubling, capped; full jitter picks below it. */
export function backoffCeiling(attempt: number, backoff: Backoff = DEFAULT_BACKOFF, refused = false): number {
  if (refused) return backoff.refusedMs ?? backoff.maxMs;
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt, 20));
}

/**
 * The edge's outbound tunnel to the cloud (works behind NAT). Deltas carry a sequence
 * number; after a reconnect the edge resends what the cloud has not acknowledged, or a
 * snapshot when that is no longer in its buffer.
 */
export class TunnelClient {
  private readonly deps: TunnelClientDeps;
  private socket: WebSocket | null = null;
  private stopped = true;
  private seq = 0;
  private acked: number | null = null;
  private buffer: Array<{ seq: number; delta: tunnel.Delta }> = [];
  private needsSnapshot = true;
  private ready = false;
  private attempt = 0;
  /** the cloud refused the token on the last attempt */
  private refused = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private drainTimer: NodeJS.Timeout | null = null;
  private unsubscribe: (() => void) | null = null;
  edgeId: number | null = null;
  connected = false;

  constructor(deps: TunnelClientDeps) {
    this.deps = deps;
  }

  /** Connected and welcomed by the cloud (deltas flow). */
  get welcomed(): boolean {
    return this.ready;
  }

  /** Welcomed, and the cloud has acknowledged every change so far (its mirror is current). */
  get synced(): boolean {
    return this.ready && !this.needsSnapshot && this.acked !== null && this.acked >= this.seq;
  }

  start(): void {
    this.stopped = false;
    this.unsubscribe = this.deps.onDelta((delta) => this.record(delta));
    this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.drainTimer) clearInterval(this.drainTimer);
    const socket = this.socket;
    this.socket = null;
    if (socket && socket.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close(1001, 'edge shutting down');
        setTimeout(() => {
          socket.terminate();
          resolve();
        }, 1000).unref();
      });
    }
  }

  /**
   * A bus event (custom, automation_triggered, call_service) for the cloud's app WebSocket: live
   * only, like Home Assistant's event subscriptions; while the tunnel is down it is not kept.
   */
  sendEvent(event: ws.BusEvent): void {
    if (!this.ready) return;
    this.send({ type: 'event', ...event });
  }

  /** A cloud-made trigger subscription fired: live only, dropped while the tunnel is down. */
  sendTrigger(msg: tunnel.TriggerMessage): void {
    if (!this.ready) return;
    this.send(msg);
  }

  private record(delta: tunnel.Delta): void {
    this.seq += 1;
    this.buffer.push({ seq: this.seq, delta });
    const max = this.deps.bufferSize ?? 10_000;
    if (this.buffer.length > max) this.buffer.splice(0, this.buffer.length - max);
    if (this.ready && !this.needsSnapshot) this.sendDelta(this.seq, delta);
  }

  private connect(): void {
    if (this.stopped) return;
    const url = new URL('/v1/edge/connect', this.deps.cloudUrl);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(url, {
      headers: { authorization: `Bearer ${this.deps.token}` },
      handshakeTimeout: 10_000,
    });
    this.socket = socket;
    this.ready = false;
    this.refused = false;
    socket.on('open', () => {
      this.connected = true;
      this.send({
        type: 'hello',
        protocol: tunnel.TUNNEL_PROTOCOL_VERSION,
        edge_version: this.deps.edgeVersion,
        hostname: this.deps.hostname ?? os.hostname(),
        resume_from: this.acked,
      });
    });
    socket.on('message', (data) => this.receive(data.toString()));
    let refusal: number | null = null;
    socket.on('unexpected-response', (_req, res) => {
      refusal = res.statusCode ?? 0;
      this.deps.log.warn('cloud refused the tunnel', { status: refusal });
      if (refusal === 401) this.refused = true;
      // With a listener for this event, ws leaves the refused handshake open: the socket would stay
      // CONNECTING for good (no 'close', so no reconnect; the handshake timeout does not cover it),
      // and an edge answered 503 or 404 once (a database away, a replica shutting down) would never
      // try again (#19). Ending it closes the socket and schedules the next attempt.
      res.resume();
      socket.terminate();
    });
    socket.on('error', (err) => {
      // terminating a refused handshake reports itself as an error: the refusal was logged above
      if (refusal === null) this.deps.log.warn('tunnel error', { err: err.message });
    });
    socket.on('close', (code, reason) => {
      this.connected = false;
      this.ready = false;
      if (this.socket === socket) this.socket = null;
      this.deps.onDisconnect?.({ code, reason: reason.toString() });
      this.scheduleReconnect();
    });
  }

  /** Full jitter exponential backoff. */
  private scheduleReconnect(): void {
    if (this.stopped) return;
    const ceiling = backoffCeiling(this.attempt, this.deps.backoff, this.refused);
    this.attempt += 1;
    const delay = Math.random() * ceiling;
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  private receive(text: string): void {
    let parsed;
    try {
      parsed = tunnel.CloudToEdge.safeParse(parseJson(text, MAX_TUNNEL_JSON_DEPTH));
    } catch (err) {
      this.deps.log.warn('malformed message from cloud', { reason: (err as Error).message });
      return;
    }
    if (!parsed.success) {
      this.deps.log.warn('invalid message from cloud', { issues: parsed.error.issues.length });
      return;
    }
    const msg = parsed.data;
    switch (msg.type) {
      case 'welcome':
        this.attempt = 0;
        this.edgeId = msg.edge_id;
        this.deps.onWelcome?.(msg.edge_id);
        this.resync(msg.acked_seq);
        return;
      case 'ack':
        this.acked = Math.max(this.acked ?? 0, msg.seq);
        // Keep only what the cloud has not confirmed (plus nothing older).
        while (this.buffer.length && this.buffer[0].seq <= this.acked) this.buffer.shift();
        return;
      case 'request':
        void this.answer(msg);
        return;
      case 'ping':
        this.send({ type: 'pong', ts: msg.ts });
        return;
      case 'error':
        this.deps.log.warn('cloud reported an error', { code: msg.code, message: msg.message });
        return;
      default:
        return;
    }
  }

  private resync(ackedSeq: number | null): void {
    const first = this.buffer[0]?.seq ?? this.seq + 1;
    const canResume = ackedSeq !== null && ackedSeq <= this.seq && ackedSeq >= first - 1 && !this.needsSnapshot;
    if (canResume) {
      this.acked = ackedSeq;
      for (const item of this.buffer) if (item.seq > ackedSeq) this.sendDelta(item.seq, item.delta);
    } else {
      this.sendSnapshot();
    }
    this.ready = true;
  }

  private sendSnapshot(): void {
    this.needsSnapshot = false;
    this.send({ type: 'snapshot', seq: this.seq, data: this.deps.snapshot() });
  }

  private sendDelta(seq: number, delta: tunnel.Delta): void {
    const socket = this.socket;
    if (!socket) return;
    // Backpressure: if the cloud cannot keep up, stop queueing deltas and send one snapshot once drained.
    if (socket.bufferedAmount > (this.deps.maxBufferedBytes ?? 8 * 1024 * 1024)) {
      this.needsSnapshot = true;
      this.waitForDrain();
      return;
    }
    this.send({ type: 'delta', seq, delta });
  }

  private waitForDrain(): void {
    if (this.drainTimer) return;
    this.drainTimer = setInterval(() => {
      const socket = this.socket;
      if (!socket || !this.ready) return;
      if (socket.bufferedAmount < 64 * 1024) {
        clearInterval(this.drainTimer!);
        this.drainTimer = null;
        this.sendSnapshot();
      }
    }, 100);
    this.drainTimer.unref();
  }

  private async answer(req: tunnel.TunnelRequest): Promise<void> {
    let res: { status: number; body: unknown; headers?: Record<string, string>; encoding?: 'base64' };
    try {
      res = await this.deps.handleRequest(req);
    } catch (err) {
      this.deps.log.error('tunnel request failed', err, { path: req.path });
      res = { status: 500, body: { error: 'internal_error' } };
    }
    this.send({
      type: 'response',
      id: req.id,
      status: res.status,
      body: res.body ?? null,
      headers: res.headers,
      encoding: res.encoding,
    });
  }

  private send(msg: tunnel.EdgeToCloud): void {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify(tunnel.EdgeToCloud.parse(msg)));
  }
}
