import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import { UpgradeDispatcher, type ErrorLogger, type UpgradeRegistry } from '@smarthome/protocol/server';
import { listen } from '../errors.ts';

/** The HTTP listener for the local API. Lifecycle: start() listens, stop() closes every connection. */
export class HttpServer {
  private readonly app: Hono;
  private readonly dispatcher: UpgradeDispatcher;
  private readonly port: number;
  private readonly host: string | undefined;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private boundPort = 0;

  constructor(app: Hono, port: number, host: string | undefined, log: ErrorLogger) {
    this.app = app;
    this.port = port;
    this.host = host;
    this.dispatcher = new UpgradeDispatcher(log);
  }

  /** Where a WebSocket endpoint of the local API registers its path; other upgrade requests are answered and closed. */
  get upgrades(): UpgradeRegistry {
    return this.dispatcher;
  }

  get boundTo(): number {
    return this.boundPort;
  }

  async start(): Promise<number> {
    const server = createAdaptorServer({
      fetch: this.app.fetch,
      serverOptions: this.dispatcher.serverOptions(),
    }) as Server;
    this.dispatcher.attach(server);
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
    const timer = setTimeout(() => {
      for (const s of this.sockets) s.destroy();
    }, 1000);
    await closed;
    clearTimeout(timer);
    this.dispatcher.detach();
    this.sockets.clear();
  }
}
