import type { AccessCache } from './authz/access-cache.ts';
import type { CloudConfig } from './config.ts';
import type { CloudDatabase } from './db/database.ts';
import type { Logger } from './log.ts';
import type { AuthService } from './auth/service.ts';
import type { LoginThrottle } from './auth/throttle.ts';
import type { EdgeRegistry } from './edges/registry.ts';
import type { MirrorStore } from './mirror/store.ts';
import type { TunnelHub } from './tunnel/hub.ts';
import type { EntityAccess } from './devices/access.ts';
import type { WebhookRateLimiter } from './automations/rate-limit.ts';
import type { MailQueue } from './mail/queue.ts';
import type { EmailLinks } from './auth/email-links.ts';

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
