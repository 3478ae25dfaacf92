import { randomUUID } from 'node:crypto';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { notFound } from '@smarthome/protocol/server';
import type { CloudDatabase } from '../db/database.ts';
import { patCredential, type Principal } from './credentials.ts';
import { newSecret, sha256 } from './secrets.ts';
import { personalAccessTokens } from './tables.ts';

const PAT_PREFIX = 'shp_pat';
const PAT_LAST_USED_GRANULARITY_MS = 60_000;

const now = () => new Date().toISOString();

/**
 * Personal access tokens: bearer secrets a user names, lists and revokes one by one; they do
 * not expire. Only their hashes are stored. Announcing a revocation is AuthService's.
 */
export class PersonalAccessTokens {
  private readonly database: CloudDatabase;
  /** what authenticate() runs on every request that carries a PAT */
  private readonly byHash;
  constructor(database: CloudDatabase) {
    this.database = database;
    this.byHash = database.prepared((db) =>
      db
        .select()
        .from(personalAccessTokens)
        .where(eq(personalAccessTokens.tokenHash, sql.placeholder('hash')))
        .prepare(),
    );
  }
  private get db() {
    return this.database.db;
  }

  /** A PAT carries its prefix, so telling it from a JWT needs no lookup. */
  recognises(token: string): boolean {
    return token.startsWith(`${PAT_PREFIX}_`);
  }

  async authenticate(token: string): Promise<Principal | null> {
    const row = await this.byHash().get({ hash: sha256(token) });
    if (!row || row.revokedAt) return null;
    // last_used_at is informational: a write per minute, not one per request.
    const at = now();
    if (!row.lastUsedAt || Date.parse(at) - Date.parse(row.lastUsedAt) >= PAT_LAST_USED_GRANULARITY_MS) {
      await this.db.update(personalAccessTokens).set({ lastUsedAt: at }).where(eq(personalAccessTokens.id, row.id));
    }
    return { userId: row.userId, via: 'pat', tokenId: row.id, credential: patCredential(row.id), expiresAt: null };
  }

  async create(userId: string, name: string) {
    const token = newSecret(PAT_PREFIX);
    const row = { id: randomUUID(), userId, name, tokenHash: sha256(token), createdAt: now() };
    await this.db.insert(personalAccessTokens).values(row);
    return { id: row.id, name, token, created_at: row.createdAt };
  }

  async list(userId: string) {
    const rows = await this.db
      .select()
      .from(personalAccessTokens)
      .where(and(eq(personalAccessTokens.userId, userId), isNull(personalAccessTokens.revokedAt)))
      .orderBy(desc(personalAccessTokens.createdAt))
      .all();
    return rows.map((r) => ({ id: r.id, name: r.name, created_at: r.createdAt, last_used_at: r.lastUsedAt }));
  }

  /** 404 unless it is one of the user's tokens and not revoked yet. */
  async revoke(userId: string, id: string): Promise<void> {
    const result = await this.db
      .update(personalAccessTokens)
      .set({ revokedAt: now() })
      .where(
        and(
          eq(personalAccessTokens.id, id),
          eq(personalAccessTokens.userId, userId),
          isNull(personalAccessTokens.revokedAt),
        ),
      )
      .returning({ id: personalAccessTokens.id })
      .all();
    if (result.length !== 1) throw notFound('token not found');
  }
}
