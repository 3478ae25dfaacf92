import { randomUUID } from 'node:crypto';
import type WebSocket from 'ws';
import { tunnel } from '@smarthome/protocol';
import { JsonTooDeepError, MAX_TUNNEL_JSON_DEPTH, describeZodError, parseJson } from '@smarthome/protocol/server';

export interface RpcResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  encoding?: 'base64';
}

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
  private heartbeat: NodeJS.Timeout | null = null;
  private alive = true;
  closed = false;
  onMessage: (msg: tunnel.EdgeToCloud) => void = () => {};
  onClose: () => void = () => {};
  onProtocolError: (reason: string) => void = () => {};

  constructor(edgeId: number, socket: WebSocket, limits: ConnectionLimits) {
    this.edgeId = edgeId;
    this.socket = socket;
    this.limits = limits;
  }

  start(): void {
    this.socket.on('message', (data, isBinary) => this.receive(data as Buffer, isBinary));
    this.socket.on('close', () => this.closedByPeer());
    this.socket.on('error', () => this.socket.terminate());
    this.socket.on('pong', () => {
      this.alive = true;
    });
    // A peer that stops answering pings (power cut, NAT drop) is cut after two intervals.
    this.heartbeat = setInterval(() => {
      if (!this.alive) {
        this.socket.terminate();
        return;
      }
      this.alive = false;
      this.socket.ping();
    }, this.limits.heartbeatMs);
    this.heartbeat.unref();
  }

  private receive(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      this.onProtocolError('binary frames are not part of the protocol');
      return;
    }
    let raw: unknown;
    try {
      raw = parseJson(data.toString('utf8'), MAX_TUNNEL_JSON_DEPTH);
    } catch (err) {
      this.onProtocolError(err instanceof JsonTooDeepError ? err.message : 'malformed JSON');
      return;
    }
    const parsed = tunnel.EdgeToCloud.safeParse(raw);
    if (!parsed.success) {
      this.onProtocolError(describeZodError(parsed.error));
      return;
    }
    const msg = parsed.data;
    if (msg.type === 'response') {
      const p = this.pending.get(msg.id);
      if (!p) return; // late answer after a timeout
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      p.resolve({ status: msg.status, body: msg.body, headers: msg.headers, encoding: msg.encoding });
      return;
    }
    if (msg.type === 'ping') {
      this.send({ type: 'pong', ts: msg.ts });
      return;
    }
    this.onMessage(msg);
  }

  /** Sends a validated message; false when the socket is gone or too far behind. */
  send(msg: tunnel.CloudToEdge): boolean {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return false;
    this.socket.send(JSON.stringify(tunnel.CloudToEdge.parse(msg)));
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
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new EdgeOfflineError());
      this.pending.delete(id);
    }
    this.onClose();
  }
}
