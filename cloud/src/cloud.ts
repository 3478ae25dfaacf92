import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Hono } from 'hono';
import { serve } from '@hono/node-server';
import type { RouteSpec } from '@smarthome/protocol';
import { ConnectionAdmission, Lifecycle, UpgradeDispatcher } from '@smarthome/protocol/server';
import type { CloudConfig } from './config.ts';
import type { CloudDatabase } from './db/database.ts';
import { createLogger, type Logger } from './log.ts';
import type { AccessTokenSigner } from './auth/jwt.ts';
import { createCloudApi } from './api.ts';
import { buildParts, type CloudParts } from './parts.ts';
import type { AppSocketServer } from './websocket/app-socket.ts';
import type { CloudHaSocketServer } from './ha-api/socket.ts';
import { redisPrefixFromEnv } from './scale/cluster.ts';
import { ScaleOut } from './scale/wiring.ts';

/**
 * The cloud relay, the composition root: buildParts() makes the parts, createCloudApi() the
 * HTTP API, ScaleOut the link to other replicas (REDIS_URL). The constructor only assigns;
 * start() does the I/O, registering each step's undo; stop() unwinds them in reverse.
 */
export class Cloud {
  readonly config: CloudConfig;
  readonly log: Logger;
  readonly app: Hono;
  readonly database: CloudDatabase;
  /** the parts every route module takes its dependencies from (tests reach into them) */
  readonly services: CloudParts;
  private readonly signer: AccessTokenSigner;
  private readonly appSocket: AppSocketServer;
  /** Home Assistant's WebSocket API (/api/websocket) for cloud callers, across their edges */
  private readonly haSocket: CloudHaSocketServer;
  private readonly allRoutes: () => RouteSpec[];
  /** the one owner of the server's upgrades: the tunnel and the app WebSocket register here */
  private readonly upgrades: UpgradeDispatcher;
  /** reads new connections and opens upgrades a bounded number at a time (a reconnect storm: #19) */
  private readonly admission: ConnectionAdmission;
  /** Scale-out (REDIS_URL set): this replica's link to the others; null on a single replica. */
  private readonly scale: ScaleOut | null;
  private readonly life: Lifecycle;
  private server: Server | null = null;
  /** the port bound by start(), kept while stopping */
  private listenPort = 0;

  /** opts.redisPrefix: Redis key prefix (default REDIS_PREFIX, else "smarthome"). */
  constructor(config: CloudConfig, opts: { log?: Logger; redisPrefix?: string } = {}) {
    this.config = config;
    this.log = opts.log ?? createLogger('cloud');
    this.life = new Lifecycle({ onError: (message, err) => this.log.error(message, err) });
    this.admission = new ConnectionAdmission();
    this.upgrades = new UpgradeDispatcher(this.log, this.admission);
    // Scale-out: with REDIS_URL, replicas share tunnels, state_changed and login throttling through Redis (scale/).
    this.scale = config.redisUrl
      ? new ScaleOut({
          url: config.redisUrl,
          prefix: opts.redisPrefix ?? redisPrefixFromEnv(process.env),
          log: this.log,
        })
      : null;
    const built = buildParts(config, this.log, this.scale, () => this.listenPort);
    this.services = built.parts;
    this.database = built.parts.database;
    this.signer = built.signer;
    this.appSocket = built.appSocket;
    this.haSocket = built.haSocket;
    const scale = this.scale;
    const api = createCloudApi(built.parts, {
      haBackend: built.haBackend,
      redisHealthy: scale && (() => scale.healthy),
    });
    this.app = api.app;
    this.allRoutes = api.routes;
  }

  get routes(): RouteSpec[] {
    return this.allRoutes();
  }

  get port(): number {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('cloud not started');
    return address.port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Opens the parts and listens; a step that fails (a taken port) undoes those before it and rejects. */
  async start(): Promise<void> {
    const { life } = this;
    await life.start(async () => {
      await this.database.start();
      life.defer('closing the database', () => this.database.stop());
      await this.signer.start();
      if (this.scale) await this.scale.start(life);
      else await this.markEdgesOfflineAtStart();
      const server = await this.listen();
      this.server = server;
      // Stops accepting and lets in-flight requests finish (they commit before they answer).
      life.defer('closing HTTP', async () => {
        this.server = null;
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          this.admission.detach();
          server.closeIdleConnections();
        });
        this.upgrades.detach();
      });
      // Bound how long a client may take to send its request (slowloris).
      server.requestTimeout = 30_000;
      server.headersTimeout = 10_000;
      this.listenPort = (server.address() as AddressInfo).port;
      this.admission.attach(server);
      this.upgrades.attach(server);
      const { tunnel, mail } = this.services;
      tunnel.start(this.upgrades);
      life.defer('closing the tunnels', () => tunnel.stop());
      mail.start();
      life.defer('stopping the mail queue', () => mail.stop());
      this.haSocket.start(this.upgrades);
      life.defer('closing HA WebSockets', () => this.haSocket.stop());
      this.appSocket.start(this.upgrades);
      life.defer('closing app WebSockets', () => this.appSocket.stop());
      this.log.info('mail goes to', { transport: mail.transportDescription });
    });
  }

  private listen(): Promise<Server> {
    return new Promise<Server>((resolve, reject) => {
      const server = serve({
        fetch: this.app.fetch,
        port: this.config.port,
        hostname: this.config.host,
        serverOptions: this.upgrades.serverOptions(),
      }) as Server;
      server.once('listening', () => resolve(server));
      server.once('error', reject);
    });
  }

  /** One process (no Redis): no tunnel exists yet, so every edge marked online is not. */
  private async markEdgesOfflineAtStart(): Promise<void> {
    const stale = await this.services.edges.markAllOffline();
    if (stale.length) this.log.info('edges marked offline at start: not connected', { edgeIds: stale });
  }

  /**
   * Stops accepting, lets in-flight requests finish, then leaves Redis and closes the
   * database: start()'s steps undone in reverse. A second call gets the same stop.
   */
  stop(): Promise<void> {
    return this.life.stop();
  }
}

export function createCloud(config: CloudConfig, opts: { log?: Logger; redisPrefix?: string } = {}): Cloud {
  return new Cloud(config, opts);
}
