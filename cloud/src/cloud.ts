import path from 'node:path';
import { ACCESS_TABLES, AccessCache } from './authz/access-cache.ts';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { ServiceCallBody, routes, type RouteSpec } from '@smarthome/protocol';
import { mountHaRest } from '@smarthome/protocol/server/ha/index';
import {
  HttpError,
  SpecRouter,
  UpgradeDispatcher,
  installErrorHandling,
  parseOr400,
  unauthorized,
} from '@smarthome/protocol/server';
import type { CloudConfig } from './config.ts';
import { CloudDatabase } from './db/database.ts';
import { createLogger, type Logger } from './log.ts';
import { AccessTokenSigner } from './auth/jwt.ts';
import { AuthService } from './auth/service.ts';
import { LoginThrottle, MemoryFailureStore } from './auth/throttle.ts';
import { safeEqual } from './auth/secrets.ts';
import type { Caller } from './context.ts';
import type { CloudParts } from './parts.ts';
import { mountCapabilityRoutes } from './api.ts';
import { TrustedProxies, clientAddressMiddleware } from './http/client-address.ts';
import { mountDocs } from './docs/routes.ts';
import { EdgeRegistry } from './edges/registry.ts';
import { MirrorStore } from './mirror/store.ts';
import { migrations } from './modules.ts';
import { TunnelHub } from './tunnel/hub.ts';
import { AppSocketServer } from './websocket/app-socket.ts';
import { CloudHaBackend } from './ha-api/backend.ts';
import { CloudHaSocketServer } from './ha-api/socket.ts';
import { SessionRegistry } from './websocket/sessions.ts';
import { linkSessions } from './websocket/session-links.ts';
import { EntityAccess } from './devices/access.ts';
import { Cluster, redisPrefixFromEnv } from './scale/cluster.ts';
import { ClusterEdges } from './scale/edges.ts';
import { RedisFailureStore } from './scale/failure-store.ts';
import { RedisWebhookRateLimiter } from './scale/webhook-limiter.ts';
import { StaleEdgeSweeper } from './scale/sweeper.ts';
import { MemoryWebhookRateLimiter, type WebhookRateLimiter } from './automations/rate-limit.ts';
import { portalFallback } from '@smarthome/web/serve';
import { MailQueue } from './mail/queue.ts';
import { EmailLinks } from './auth/email-links.ts';
import { OutboxTransport, SmtpTransport } from './mail/transport.ts';

/** Webhook flood control, the same as on the edge: 10 requests/s, burst 20 per webhook_id. */
const WEBHOOK_RATE = { perSecond: 10, burst: 20 };

const ANONYMOUS: Caller = { userId: '', via: 'anonymous' };

function bearerOf(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/** The cloud relay: constructor assigns, start() does I/O, stop() unwinds it all. */
export class Cloud {
  readonly config: CloudConfig;
  readonly log: Logger;
  readonly app = new Hono();
  readonly database: CloudDatabase;
  /** the parts every route module takes its dependencies from (tests reach into them) */
  readonly services: CloudParts;
  private readonly signer: AccessTokenSigner;
  private readonly router: SpecRouter<Caller>;
  private readonly appSocket: AppSocketServer;
  /** Home Assistant's WebSocket API (/api/websocket) for cloud callers, across their edges */
  private readonly haSocket: CloudHaSocketServer;
  /** Home Assistant's REST API (/api/*): its own bearer check, documented in /openapi.json */
  private readonly haRoutes: RouteSpec[];
  /** the one owner of the server's upgrades: the tunnel and the app WebSocket register here */
  private readonly upgrades: UpgradeDispatcher;
  private server: Server | null = null;
  /** the port bound by start(), kept while stopping */
  private listenPort = 0;
  /** Scale-out (REDIS_URL set): this replica's link to the others; null on a single replica. */
  private readonly cluster: Cluster | null;
  private readonly clusterEdges: ClusterEdges | null = null;
  private readonly sweeper: StaleEdgeSweeper | null = null;

  /** opts.redisPrefix: Redis key prefix (default REDIS_PREFIX, else "smarthome"). */
  constructor(config: CloudConfig, opts: { log?: Logger; redisPrefix?: string } = {}) {
    this.config = config;
    this.log = opts.log ?? createLogger('cloud');
    this.database = new CloudDatabase(config.databaseUrl ?? path.join(config.dataDir, 'cloud.db'), migrations);
    this.upgrades = new UpgradeDispatcher(this.log);
    this.signer = new AccessTokenSigner(config.dataDir, config.accessTokenTtlSeconds, config.jwtSigningKey ?? null);
    // Scale-out: with REDIS_URL, replicas share tunnels, state_changed and login throttling through Redis (scale/).
    this.cluster = config.redisUrl
      ? new Cluster({
          url: config.redisUrl,
          prefix: opts.redisPrefix ?? redisPrefixFromEnv(process.env),
          log: this.log,
        })
      : null;
    const throttle = new LoginThrottle(this.cluster ? new RedisFailureStore(this.cluster) : new MemoryFailureStore());
    const accessCache = this.watchAccess(new AccessCache({ enabled: () => !this.cluster || this.cluster.healthy }));
    const mail = new MailQueue({
      database: this.database,
      transport: config.smtpUrl
        ? new SmtpTransport(config.smtpUrl)
        : new OutboxTransport(path.join(config.dataDir, 'outbox'), this.log),
      from: config.mailFrom,
      log: this.log,
      ...config.mailQueue,
    });
    // The port is remembered at start: requests finishing while the cloud stops still build links.
    const publicUrl = () => config.publicUrl ?? `http://localhost:${this.listenPort}`;
    const links = new EmailLinks({ database: this.database, mail, publicUrl });
    const auth = new AuthService({
      database: this.database,
      accessCache,
      signer: this.signer,
      throttle,
      refreshTtlSeconds: config.refreshTokenTtlSeconds,
      fastHashing: config.fastHashing ?? false,
      links,
      mail,
    });
    const edges = new EdgeRegistry(this.database);
    const mirror = new MirrorStore(this.database);
    const tunnel = new TunnelHub({
      log: this.log,
      authenticateEdge: (token) => edges.authenticateEdgeToken(token),
      lastSeq: async (edgeId) => mirror.lastSeq(edgeId),
      applySnapshot: async (edgeId, seq, snapshot) => mirror.replaceSnapshot(edgeId, snapshot, seq),
      applyDeltas: (edgeId, lastSeq, deltas) => mirror.applyDeltas(edgeId, deltas, lastSeq),
      // Scale-out: claim the edge's ownership key before marking it online; mark it offline only
      // while the key was still ours (the edge may already have said hello on another replica).
      markOnline: async (edgeId) => {
        await this.clusterEdges?.claim(edgeId);
        await edges.markOnline(edgeId);
      },
      markOffline: async (edgeId) => {
        if (this.clusterEdges && !(await this.clusterEdges.release(edgeId))) return;
        await edges.markOffline(edgeId);
      },
    });
    if (this.cluster) {
      // Requests and revocations for edges whose tunnel is on another replica go through Redis.
      this.clusterEdges = new ClusterEdges({
        cluster: this.cluster,
        local: tunnel,
        log: this.log,
        // What this replica holds is online, whatever a sweeper concluded while Redis could not tell.
        onHeld: async (edgeIds) => {
          for (const id of await edges.offlineAmong(edgeIds)) tunnel.ifConnected(id, () => edges.markOnline(id));
        },
      });
      tunnel.useRemote(this.clusterEdges);
      // Edges left 'online' by a replica that died without marking them offline.
      this.sweeper = new StaleEdgeSweeper({
        cluster: this.cluster,
        log: this.log,
        listOnline: () => edges.onlineIds(),
        markOffline: (edgeId) => edges.markOffline(edgeId),
        markOnline: (edgeId) => edges.markOnline(edgeId),
      });
    }
    // Revoked or re-credentialed edges lose their tunnel at once.
    edges.on('revoked', (edge) => tunnel.disconnect(edge.id, 'revoked'));
    edges.on('rotated', (edge) => tunnel.disconnect(edge.id, 'credentials rotated'));
    const webhookLimiter: WebhookRateLimiter = this.cluster
      ? new RedisWebhookRateLimiter(this.cluster, WEBHOOK_RATE)
      : new MemoryWebhookRateLimiter(WEBHOOK_RATE);
    const access = new EntityAccess({ database: this.database, mirror, accessCache }, tunnel);
    this.services = {
      config,
      database: this.database,
      log: this.log,
      auth,
      throttle,
      edges,
      mirror,
      tunnel,
      access,
      webhookLimiter,
      accessCache,
      mail,
      publicUrl,
      links,
    };
    // Open sockets' sessions end when their credential is revoked or expires, and drop cached
    // visibility whenever grants change, on any replica.
    const sessions = new SessionRegistry();
    linkSessions(sessions, { auth, accessCache, cluster: this.cluster, log: this.log });
    this.appSocket = new AppSocketServer({
      hub: tunnel,
      log: this.log,
      sessions,
      api: {
        authenticate: (token) => auth.authenticate(token),
        visibility: (userId) => access.visibility(userId),
        states: (userId) => access.states(userId),
        callService: (userId, domain, service, data) =>
          access.callService(userId, domain, service, parseOr400(ServiceCallBody, data, ''), null),
      },
    });
    // Scale-out: state_changed from tunnels on other replicas reaches this replica's app sockets.
    const haBackend = new CloudHaBackend(this.services);
    this.haSocket = new CloudHaSocketServer({ backend: haBackend, hub: tunnel, log: this.log, sessions });
    this.clusterEdges?.on('state_changed', (e) => {
      this.appSocket.fanOut(e).catch((err) => this.log.error('state_changed fan-out failed', err));
      haBackend.fanOut(e).catch((err) => this.log.error('ha state_changed fan-out failed', err));
    });
    this.clusterEdges?.on('edge_event', (e) => {
      this.appSocket.fanOutEvent(e).catch((err) => this.log.error('edge event fan-out failed', err));
      haBackend.fanOutEvent(e).catch((err) => this.log.error('ha edge event fan-out failed', err));
    });
    // Before every route: who the client is (throttling, the origin relayed to edges).
    this.app.use('*', clientAddressMiddleware(new TrustedProxies(config.trustProxy)));
    this.router = new SpecRouter<Caller>(this.app, {
      authenticate: (c, spec) => this.authenticate(c.req.header('authorization'), spec),
      bodyLimit: config.bodyLimitBytes,
    });
    installErrorHandling(this.app, this.log);
    this.router.add(routes.healthRoute, async () => {
      // A replica cut off from Redis would answer for edges it cannot reach: take it out of the load balancer.
      if (this.cluster && !this.cluster.healthy) throw new HttpError(503, 'redis_unavailable');
      await this.database.ping();
      return { status: 'ok' as const };
    });
    mountDocs(this.app, () => this.routes);
    mountCapabilityRoutes(this.router, this.services);
    this.haRoutes = mountHaRest(this.app, haBackend);
    // the web portal at / (GET outside the API paths only: unknown API paths keep their JSON 404)
    this.app.use('*', portalFallback('cloud'));
  }

  private async authenticate(header: string | undefined, spec: RouteSpec): Promise<Caller> {
    if (spec.auth === 'none') return ANONYMOUS;
    const token = bearerOf(header);
    if (!token) throw unauthorized();
    if (spec.auth === 'fleet') {
      if (!this.config.fleetToken || !safeEqual(token, this.config.fleetToken)) throw unauthorized();
      return { userId: '', via: 'fleet' };
    }
    if (spec.auth === 'edge') {
      const edge = await this.services.edges.authenticateEdgeToken(token);
      if (!edge) throw unauthorized();
      return { userId: '', via: 'edge', edgeId: edge.id };
    }
    const principal = await this.services.auth.authenticate(token);
    if (!principal) throw unauthorized();
    return principal;
  }

  /**
   * Empties the access cache on every write to a table it derives from, and tells the other
   * replicas to do the same (one broadcast per tick, however many statements wrote).
   */
  private watchAccess(cache: AccessCache): AccessCache {
    let announcing = false;
    this.database.onWrite((table) => {
      if (!ACCESS_TABLES.has(table)) return;
      cache.invalidate();
      const cluster = this.cluster;
      if (!cluster || announcing) return;
      announcing = true;
      setImmediate(() => {
        announcing = false;
        cluster
          .broadcast({ t: ACCESS_CHANGED })
          .catch((err) => this.log.warn('access change broadcast failed', { err: (err as Error).message }));
      });
    });
    this.cluster?.on('message', (msg) => {
      if (msg.t === ACCESS_CHANGED && msg.from !== this.cluster?.replicaId) cache.invalidate();
    });
    return cache;
  }

  get routes(): RouteSpec[] {
    return [...this.router.routes, ...this.haRoutes];
  }

  get port(): number {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('cloud not started');
    return address.port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    await this.database.start();
    await this.signer.start();
    await this.cluster?.start();
    this.clusterEdges?.start();
    // No edge can be online before we listen, unless another replica holds its tunnel: status
    // left 'online' by a crash is corrected now, not when the edge happens to reconnect.
    if (this.sweeper) await this.sweeper.start();
    else await this.markEdgesOfflineAtStart();
    this.server = await new Promise<Server>((resolve, reject) => {
      const server = serve({
        fetch: this.app.fetch,
        port: this.config.port,
        hostname: this.config.host,
        serverOptions: this.upgrades.serverOptions(),
      }) as Server;
      server.once('listening', () => resolve(server));
      server.once('error', reject);
    });
    // Bound how long a client may take to send its request (slowloris).
    this.server.requestTimeout = 30_000;
    this.server.headersTimeout = 10_000;
    this.listenPort = (this.server.address() as AddressInfo).port;
    this.upgrades.attach(this.server);
    this.services.tunnel.start(this.upgrades);
    this.appSocket.start(this.upgrades);
    this.haSocket.start(this.upgrades);
    this.services.mail.start();
    this.log.info('mail goes to', { transport: this.services.mail.transportDescription });
  }

  /** One process (no Redis): no tunnel exists yet, so every edge marked online is not. */
  private async markEdgesOfflineAtStart(): Promise<void> {
    const stale = await this.services.edges.markAllOffline();
    if (stale.length) this.log.info('edges marked offline at start: not connected', { edgeIds: stale });
  }

  /** Stops accepting, lets in-flight requests finish, then closes the database. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.appSocket.stop();
    this.haSocket.stop();
    await this.services.mail.stop();
    await this.services.tunnel.stop();
    if (server) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      this.upgrades.detach();
    }
    // Scale-out: release the edges still owned here, then leave Redis.
    await this.sweeper?.stop();
    await this.clusterEdges?.stop();
    await this.cluster?.stop();
    await this.database.stop();
  }
}

/** cluster message: some replica wrote a table the access cache derives from */
const ACCESS_CHANGED = 'access_changed';

export function createCloud(config: CloudConfig, opts: { log?: Logger; redisPrefix?: string } = {}): Cloud {
  return new Cloud(config, opts);
}
