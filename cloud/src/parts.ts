import path from 'node:path';
import { ServiceCallBody } from '@smarthome/protocol';
import { parseOr400 } from '@smarthome/protocol/server';
import { ACCESS_TABLES, AccessCache } from './authz/access-cache.ts';
import type { CloudConfig } from './config.ts';
import { CloudDatabase } from './db/database.ts';
import type { Logger } from './log.ts';
import { AccessTokenSigner } from './auth/jwt.ts';
import { AuthService } from './auth/service.ts';
import { LoginThrottle, MemoryFailureStore } from './auth/throttle.ts';
import { EdgeRegistry } from './edges/registry.ts';
import { TunnelBatches } from './edges/tunnel-batches.ts';
import { MirrorStore } from './mirror/store.ts';
import { MirrorWriter } from './mirror/writer.ts';
import { TunnelHub } from './tunnel/hub.ts';
import { EntityAccess } from './devices/access.ts';
import { MemoryWebhookRateLimiter, type WebhookRateLimiter } from './automations/rate-limit.ts';
import { MailQueue } from './mail/queue.ts';
import { OutboxTransport, SmtpTransport } from './mail/transport.ts';
import { EmailLinks } from './auth/email-links.ts';
import { migrations } from './modules.ts';
import { AppSocketServer } from './websocket/app-socket.ts';
import { SessionRegistry } from './websocket/sessions.ts';
import { linkSessions } from './websocket/session-links.ts';
import { CloudHaBackend } from './ha-api/backend.ts';
import { CloudHaSocketServer } from './ha-api/socket.ts';
import type { ScaleOut } from './scale/wiring.ts';

/**
 * How often open sockets reload their visibility when no grant-change notice came: the bound for
 * a notice lost. Every write to a table grants derive from tells the access cache, which tells
 * every session (linkSessions), so one process misses none: its reload only guards against a
 * grant derived from something else (none is known). Between replicas a notice crosses Redis's
 * pub/sub, which delivers at most once: a replica that was cut from Redis for a moment missed it.
 * The reload was a tenth of a replica's main thread with 1,000 app sockets (#19).
 */
const VISIBILITY_TTL_MS = { replica: 5_000, alone: 60_000 };

/** Webhook flood control, the same as on the edge: 10 requests/s, burst 20 per webhook_id. */
const WEBHOOK_RATE = { perSecond: 10, burst: 20 };

/**
 * The cloud's parts, built once at the composition root (cloud.ts). Nothing under a capability
 * imports this: each route module and service names the few parts it uses in its own *Deps.
 */
export interface CloudParts {
  config: CloudConfig;
  database: CloudDatabase;
  log: Logger;
  auth: AuthService;
  throttle: LoginThrottle;
  /** edges registry: create/revoke ('revoked' event), register-cloud, edge-token auth */
  edges: EdgeRegistry;
  /** read mirror of the edges' registries and states, filled by the tunnel */
  mirror: MirrorStore;
  /** the cloud end of every edge tunnel (RPCs, state_changed) */
  tunnel: TunnelHub;
  /** who may see and operate edge-owned things; service calls through the tunnel */
  access: EntityAccess;
  /** per-webhook flood control of the webhook receiver (in memory, or shared through Redis) */
  webhookLimiter: WebhookRateLimiter;
  /** users' existence and grants, emptied by writes to the tables they come from (on every replica) */
  accessCache: AccessCache;
  /** the durable outbound mail queue: enqueue inside the transaction that causes the mail */
  mail: MailQueue;
  /** where links in mails point: --public-url, else http://localhost:<port> */
  publicUrl: () => string;
  /** single-use verification and reset links sent by mail */
  links: EmailLinks;
}

/** What buildParts makes besides the route modules' parts: what start() opens and the sockets. */
export interface CloudComponents {
  parts: CloudParts;
  signer: AccessTokenSigner;
  appSocket: AppSocketServer;
  /** Home Assistant's WebSocket API (/api/websocket) for cloud callers, across their edges */
  haSocket: CloudHaSocketServer;
  /** Home Assistant's REST and WebSocket APIs over the caller's edges */
  haBackend: CloudHaBackend;
}

/**
 * Builds every part of the cloud; no I/O (start() opens them). scale: this replica's link to
 * the others with REDIS_URL, else null. listenPort: the port bound by start(), for links in mails.
 */
export function buildParts(
  config: CloudConfig,
  log: Logger,
  scale: ScaleOut | null,
  listenPort: () => number,
): CloudComponents {
  const database = new CloudDatabase(config.databaseUrl ?? path.join(config.dataDir, 'cloud.db'), migrations);
  const signer = new AccessTokenSigner(config.dataDir, config.accessTokenTtlSeconds, config.jwtSigningKey ?? null);
  const throttle = new LoginThrottle(scale ? scale.failureStore() : new MemoryFailureStore());
  const accessCache = new AccessCache({ enabled: () => !scale || scale.healthy });
  // Emptied on every write to a table it derives from, here and (through Redis) on every replica.
  database.onWrite((table) => {
    if (!ACCESS_TABLES.has(table)) return;
    accessCache.invalidate();
    scale?.accessChanged();
  });
  scale?.onAccessChanged(() => accessCache.invalidate());
  const mail = new MailQueue({
    database,
    transport: config.smtpUrl
      ? new SmtpTransport(config.smtpUrl)
      : new OutboxTransport(path.join(config.dataDir, 'outbox'), log),
    from: config.mailFrom,
    log,
    ...config.mailQueue,
  });
  // The port is remembered at start: requests finishing while the cloud stops still build links.
  const publicUrl = () => config.publicUrl ?? `http://localhost:${listenPort()}`;
  const links = new EmailLinks({ database, mail, publicUrl });
  const auth = new AuthService({
    database,
    accessCache,
    signer,
    throttle,
    refreshTtlSeconds: config.refreshTokenTtlSeconds,
    fastHashing: config.fastHashing ?? false,
    links,
    mail,
  });
  const edges = new EdgeRegistry(database);
  const mirror = new MirrorStore(database);
  // the edges' deltas of one tick share a transaction; acks wait for its commit
  const mirrorWriter = new MirrorWriter(database, mirror);
  // the edges' token lookups, lastSeq reads and online/offline marks of one tick: one query or transaction each
  const tunnelBatches = new TunnelBatches({ edges, mirror, dialect: database.dialect });
  const tunnel = new TunnelHub({
    log,
    authenticateEdge: (token) => tunnelBatches.authenticate(token),
    lastSeq: (edgeId) => tunnelBatches.lastSeq(edgeId),
    applySnapshot: async (edgeId, seq, snapshot) => mirror.replaceSnapshot(edgeId, snapshot, seq),
    applyDeltas: (edgeId, lastSeq, deltas, oldStates) => mirrorWriter.applyDeltas(edgeId, deltas, lastSeq, oldStates),
    announce: (edgeId, settled) => mirror.announced.add(edgeId, settled),
    // Scale-out: claim the edge's ownership key before marking it online; mark it offline only
    // while the key was still ours (the edge may already have said hello on another replica).
    markOnline: async (edgeId) => {
      await scale?.claim(edgeId);
      await tunnelBatches.markOnline(edgeId);
    },
    markOffline: async (edgeId) => {
      if (scale && !(await scale.release(edgeId))) return;
      await tunnelBatches.markOffline(edgeId);
    },
  });
  scale?.linkEdges(tunnel, edges);
  // Revoked or re-credentialed edges lose their tunnel at once.
  edges.on('revoked', (edge) => tunnel.disconnect(edge.id, 'revoked'));
  edges.on('rotated', (edge) => tunnel.disconnect(edge.id, 'credentials rotated'));
  const webhookLimiter: WebhookRateLimiter = scale
    ? scale.webhookLimiter(WEBHOOK_RATE)
    : new MemoryWebhookRateLimiter(WEBHOOK_RATE);
  const access = new EntityAccess({ database, mirror, accessCache }, tunnel);
  const parts: CloudParts = {
    config,
    database,
    log,
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
  linkSessions(sessions, { auth, accessCache, cluster: scale?.cluster ?? null, log });
  const visibilityTtlMs = scale ? VISIBILITY_TTL_MS.replica : VISIBILITY_TTL_MS.alone;
  const appSocket = new AppSocketServer({
    hub: tunnel,
    log,
    sessions,
    visibilityTtlMs,
    api: {
      authenticate: (token) => auth.authenticate(token),
      visibility: (userId) => access.visibility(userId),
      states: (userId) => access.states(userId),
      callService: (userId, domain, service, data) =>
        access.callService(userId, domain, service, parseOr400(ServiceCallBody, data, ''), null),
    },
  });
  const haBackend = new CloudHaBackend({ ...parts, visibilityTtlMs });
  const haSocket = new CloudHaSocketServer({ backend: haBackend, hub: tunnel, log, sessions });
  // Scale-out: state_changed and events from tunnels on other replicas reach this replica's sockets.
  scale?.fanOutTo([
    { logPrefix: '', target: appSocket },
    { logPrefix: 'ha ', target: haBackend },
  ]);
  return { parts, signer, appSocket, haSocket, haBackend };
}
