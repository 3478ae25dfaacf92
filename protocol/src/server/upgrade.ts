import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ConnectionAdmission } from './admission.ts';
import type { ErrorLogger } from './app.ts';

/** Settles once the connection has opened (the tunnel: its hello answered), which admission waits for. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void | Promise<void>;

/** Where WebSocket endpoints register (the cloud's tunnel and app socket; the edge's, later). */
export interface UpgradeRegistry {
  register(path: string, handler: UpgradeHandler): void;
  unregister(path: string): void;
}

const pathOf = (req: IncomingMessage) => {
  try {
    return new URL(req.url ?? '/', 'http://server').pathname;
  } catch {
    return '';
  }
};

/**
 * The one owner of a server's upgrades. Node hands every request carrying `Upgrade` to the
 * 'upgrade' listeners once there is one, and a listener that ignores it leaves the socket open
 * forever (issue #13). Here a WebSocket upgrade on a registered path goes to its handler; any
 * other upgrade request is served as the plain HTTP request it also is (RFC 9110 §7.8 lets a
 * server ignore Upgrade; `serverOptions()` tells Node so), and its connection is closed after
 * the answer. Where Node cannot be told (before 24.9), what reaches 'upgrade' unclaimed is
 * answered 404 and the socket destroyed.
 */
export class UpgradeDispatcher implements UpgradeRegistry {
  private readonly handlers = new Map<string, UpgradeHandler>();
  private readonly log: ErrorLogger;
  /** told when an upgrade's handler has settled: the connection has opened */
  private readonly admission: ConnectionAdmission | null;
  private server: Server | null = null;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => this.dispatch(req, socket, head);
  private readonly onRequest = (req: IncomingMessage, res: ServerResponse) => {
    // The client asked to leave HTTP: it gets its answer, then the connection ends.
    if (req.headers.upgrade !== undefined) res.shouldKeepAlive = false;
  };

  constructor(log: ErrorLogger, admission: ConnectionAdmission | null = null) {
    this.log = log;
    this.admission = admission;
  }

  register(path: string, handler: UpgradeHandler): void {
    this.handlers.set(path, handler);
  }

  unregister(path: string): void {
    this.handlers.delete(path);
  }

  /** Whether a request is a WebSocket upgrade some endpoint takes. */
  claims(req: IncomingMessage): boolean {
    return req.headers.upgrade?.toLowerCase() === 'websocket' && this.handlers.has(pathOf(req));
  }

  /** Options for http.createServer: only claimed upgrades reach 'upgrade' (Node ≥ 24.9). */
  serverOptions(): ServerOptions {
    return { shouldUpgradeCallback: (req) => this.claims(req) };
  }

  attach(server: Server): void {
    this.server = server;
    server.on('upgrade', this.onUpgrade);
    server.prependListener('request', this.onRequest);
  }

  detach(): void {
    this.server?.off('upgrade', this.onUpgrade);
    this.server?.off('request', this.onRequest);
    this.server = null;
  }

  private dispatch(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const handler = this.claims(req) ? this.handlers.get(pathOf(req)) : undefined;
    if (!handler) {
      rejectUpgrade(socket, 404, { message: 'not found' });
      this.admission?.opened(socket as Socket);
      return;
    }
    let pending: void | Promise<void>;
    try {
      pending = handler(req, socket, head);
    } catch (err) {
      pending = Promise.reject(err);
    }
    void Promise.resolve(pending)
      .catch((err: unknown) => {
        this.log.error(`upgrade ${pathOf(req)} failed`, err);
        rejectUpgrade(socket, 500, { error: 'internal_error' });
      })
      .finally(() => this.admission?.opened(socket as Socket));
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * Answers an upgrade request that will not be switched with a JSON error, then destroys the
 * socket once the answer is written: `end()` alone would leave it half-open for as long as the
 * client keeps its side open (HTTP servers allow half-open sockets).
 */
export function rejectUpgrade(
  socket: Duplex,
  status: number,
  body: object,
  headers: Record<string, string> = {},
): void {
  if (socket.destroyed) return;
  const text = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
      `${extra}Connection: close\r\n\r\n${text}`,
  );
}
