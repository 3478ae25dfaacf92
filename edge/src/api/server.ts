import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import { listen } from '../errors.ts';

/** The HTTP listener for the local API. Lifecycle: start() listens, stop() closes every connection. */
export class HttpServer {
  private readonly app: Hono;
  private readonly port: number;
  private readonly host: string | undefined;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private boundPort = 0;

  constructor(app: Hono, port: number, host?: string) {
    this.app = app;
    this.port = port;
    this.host = host;
  }

  /** the node server while started (WebSocket endpoints claim their upgrade paths on it) */
  get nodeServer(): Server | null {
    return this.server;
  }

  get boundTo(): number {
    return this.boundPort;
  }

  async start(): Promise<number> {
    const server = createAdaptorServer({ fetch: this.app.fetch }) as Server;
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.boundPort = await listen(server, this.port, this.host, 'HTTP', '--port');
    this.server = server;
    return this.boundPort;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // give in-flight requests a moment, then cut what is left
    const timer = setTimeout(() => { for (const s of this.sockets) s.destroy(); }, 1000);
    await closed;
    clearTimeout(timer);
    this.sockets.clear();
  }
}
