import type { AccessCache } from '../authz/access-cache.ts';
import type { AuthService, CredentialsRevoked } from '../auth/service.ts';
import type { Logger } from '../log.ts';
import type { Cluster, ClusterMessage } from '../scale/cluster.ts';
import type { SessionRegistry } from './sessions.ts';

/** cluster message: credentials revoked on the sending replica */
const CREDENTIALS_REVOKED = 'credentials_revoked';

/**
 * Connects the open sessions to what ends or narrows them, on every replica:
 * - a revocation stored here ends the matching sessions here and is broadcast to the other
 *   replicas, which end theirs;
 * - any access-cache invalidation (a write here, or another replica's notice) makes every
 *   session drop the visibility it derived.
 */
export function linkSessions(
  sessions: SessionRegistry,
  deps: { auth: AuthService; accessCache: AccessCache; cluster: Cluster | null; log: Logger },
): void {
  const { auth, accessCache, cluster, log } = deps;
  accessCache.onInvalidate(() => sessions.accessChanged());
  auth.on('revoked', (revoked) => {
    sessions.revoke(revoked);
    cluster
      ?.broadcast({ t: CREDENTIALS_REVOKED, revoked })
      .catch((err) => log.warn('revocation broadcast failed', { err: (err as Error).message }));
  });
  cluster?.on('message', (msg) => {
    if (msg.t !== CREDENTIALS_REVOKED || msg.from === cluster.replicaId) return;
    const revoked = revocationOf(msg);
    if (revoked) sessions.revoke(revoked);
    else log.warn('malformed revocation message', { from: msg.from });
  });
}

function revocationOf(msg: ClusterMessage): CredentialsRevoked | null {
  const r = msg.revoked as Partial<CredentialsRevoked> | undefined;
  if (!r || typeof r.userId !== 'string' || typeof r.reason !== 'string' || typeof r.message !== 'string') return null;
  if (!Array.isArray(r.credentials) || !r.credentials.every((c) => typeof c === 'string')) return null;
  return { userId: r.userId, credentials: r.credentials, reason: r.reason, message: r.message };
}
