import { parseArgs } from 'node:util';
import path from 'node:path';
import { parseProductPlans } from './store-iap/product-plans.ts';
import type { JWK } from 'jose';
import { isPostgresUrl } from './db/database.ts';
import { parseSigningKey } from './auth/jwt.ts';
import { parseSecretKey } from './voip/secret-box.ts';
import { parseTrustProxy } from './http/client-address.ts';

export interface CloudConfig {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  /** FLEET_TOKEN: authorizes cloud replicas' register-cloud calls. */
  fleetToken?: string;
  /** TRUST_PROXY: proxies (IPs, CIDRs, loopback/linklocal/uniquelocal) whose X-Forwarded-For names the client. */
  trustProxy: string[];
  /** Public base URL used in links the cloud hands out (media, mails); default http://localhost:<port>. */
  publicUrl?: string;
  /** SMTP_URL: smtp:// (STARTTLS required unless the URL says otherwise) or smtps://; unset = .eml files in <data-dir>/outbox/. */
  smtpUrl?: string;
  /** MAIL_FROM: the From of every mail. */
  mailFrom: string;
  /** Mail queue timing, for tests: poll interval, first retry delay, attempts before "failed". */
  mailQueue?: { pollMs?: number; retryBaseMs?: number; maxAttempts?: number };
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  bodyLimitBytes: number;
  /** Extra PEM roots trusted for store notifications (STORE_IAP_ROOTS_FILE). */
  storeIapRootsFile?: string;
  storeIapBundleId?: string;
  storeIapEnvironment: 'Production' | 'Sandbox';
  /** STORE_IAP_PRODUCT_PLANS: productId → plan id; unset = "business" in the id → 3, else 2. */
  storeIapProductPlans?: Record<string, number>;
  /** JWT_SIGNING_KEY: the access-token signing key for every replica (else <data-dir>/jwt-signing-key.json). */
  jwtSigningKey?: JWK;
  /** VOIP_SECRET_KEY: the SIP password encryption key for every replica (else <data-dir>/voip-secret.key). */
  voipSecretKey?: Buffer;
  /** Cheaper scrypt parameters for tests; never set in production. */
  fastHashing?: boolean;
}

export function defaultCloudConfig(overrides: Partial<CloudConfig> = {}): CloudConfig {
  return {
    port: 8080,
    host: '0.0.0.0',
    dataDir: path.resolve('data/cloud'),
    accessTokenTtlSeconds: 900,
    refreshTokenTtlSeconds: 30 * 24 * 3600,
    bodyLimitBytes: 1024 * 1024,
    trustProxy: [],
    storeIapEnvironment: 'Production',
    mailFrom: 'Smart Home <no-reply@localhost>',
    ...overrides,
  };
}

/** Flags win over env (contract.md, "Processes and their flags"). */
export function parseCloudArgs(argv: string[], env: NodeJS.ProcessEnv): CloudConfig {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'database-url': { type: 'string' },
      'redis-url': { type: 'string' },
      'public-url': { type: 'string' },
      'trust-proxy': { type: 'string' },
      'smtp-url': { type: 'string' },
    },
    strict: true,
  });
  const portText = values.port ?? env.PORT ?? '8080';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${portText}`);
  const environment = env.STORE_IAP_ENVIRONMENT ?? 'Production';
  if (environment !== 'Production' && environment !== 'Sandbox')
    throw new Error('STORE_IAP_ENVIRONMENT must be Production or Sandbox');
  const databaseUrl = values['database-url'] || env.DATABASE_URL || undefined;
  if (databaseUrl && !isPostgresUrl(databaseUrl))
    throw new Error(
      '--database-url must be a postgres:// (or postgresql://) URL; omit it to use the embedded SQLite database in --data-dir',
    );
  const smtpUrl = values['smtp-url'] || env.SMTP_URL || undefined;
  if (smtpUrl && !/^smtps?:\/\/[^/]/i.test(smtpUrl))
    throw new Error('--smtp-url must be an smtp:// or smtps:// URL (omit it to write mail to <data-dir>/outbox/)');
  const publicUrl = values['public-url'] ?? env.PUBLIC_URL ?? undefined;
  if (publicUrl && !/^https?:\/\/[^/]/i.test(publicUrl)) throw new Error('--public-url must be an http(s):// URL');
  return defaultCloudConfig({
    port,
    host: values.host ?? env.HOST ?? '0.0.0.0',
    dataDir: path.resolve(values['data-dir'] ?? env.DATA_DIR ?? 'data/cloud'),
    databaseUrl,
    redisUrl: values['redis-url'] ?? env.REDIS_URL ?? undefined,
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    smtpUrl,
    ...(env.MAIL_FROM ? { mailFrom: env.MAIL_FROM } : {}),
    trustProxy: parseTrustProxy(values['trust-proxy'] ?? env.TRUST_PROXY ?? ''),
    fleetToken: env.FLEET_TOKEN || undefined,
    storeIapRootsFile: env.STORE_IAP_ROOTS_FILE || undefined,
    storeIapBundleId: env.STORE_IAP_BUNDLE_ID || undefined,
    storeIapEnvironment: environment,
    storeIapProductPlans: env.STORE_IAP_PRODUCT_PLANS ? parseProductPlans(env.STORE_IAP_PRODUCT_PLANS) : undefined,
    jwtSigningKey: env.JWT_SIGNING_KEY ? parseSigningKey(env.JWT_SIGNING_KEY) : undefined,
    voipSecretKey: env.VOIP_SECRET_KEY ? parseSecretKey(env.VOIP_SECRET_KEY) : undefined,
  });
}
