import { and, eq, gt, inArray, isNull, lt, sql } from 'drizzle-orm';
import type { CloudDatabase } from '../db/database.ts';
import { refreshTokens, sessionRevocations } from './tables.ts';

const now = () => new Date().toISOString();

/**
 * The stored side of ending sign-in sessions (refresh-token families): their refresh tokens are
 * marked revoked and the session ids go to session_revocations, which access-token checks read
 * (through the access cache on every replica). Announcing it to open sockets is AuthService's.
 */
export class SessionRevocations {
  private readonly deps: { database: CloudDatabase; refreshTtlSeconds: number; accessTtlSeconds: number };
  /** what access-token checks run on every request */
  private readonly byId;
  constructor(deps: { database: CloudDatabase; refreshTtlSeconds: number; accessTtlSeconds: number }) {
    this.deps = deps;
    this.byId = deps.database.prepared((db) =>
      db
        .select({ id: sessionRevocations.sessionId })
        .from(sessionRevocations)
        .where(eq(sessionRevocations.sessionId, sql.placeholder('id')))
        .prepare(),
    );
  }
  private get db() {
    return this.deps.database.db;
  }

  async isRevoked(sessionId: string): Promise<boolean> {
    return Boolean(await this.byId().get({ id: sessionId }));
  }

  /** The user's sessions with a refresh token that is neither revoked nor expired. */
  async liveFamilies(userId: string): Promise<string[]> {
    const live = await this.db
      .selectDistinct({ familyId: refreshTokens.familyId })
      .from(refreshTokens)
      .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt), gt(refreshTokens.expiresAt, now())))
      .all();
    return live.map((r) => r.familyId);
  }

  /** For a caller's transaction: the rows that end these sessions. */
  async store(userId: string, familyIds: string[]): Promise<void> {
    if (familyIds.length === 0) return;
    const at = now();
    // Kept while a token of the session could still be alive: a refresh token issued by a
    // refresh racing with this revocation, and the access tokens it would give.
    const useless = new Date(
      Date.now() - (this.deps.refreshTtlSeconds + this.deps.accessTtlSeconds + 60) * 1000,
    ).toISOString();
    await this.db
      .update(refreshTokens)
      .set({ revokedAt: at })
      .where(
        and(
          eq(refreshTokens.userId, userId),
          inArray(refreshTokens.familyId, familyIds),
          isNull(refreshTokens.revokedAt),
        ),
      );
    await this.db
      .insert(sessionRevocations)
      .values(familyIds.map((sessionId) => ({ sessionId, userId, revokedAt: at })))
      .onConflictDoNothing();
    await this.db.delete(sessionRevocations).where(lt(sessionRevocations.revokedAt, useless));
  }
}
