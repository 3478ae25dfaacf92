import { createHash, randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { EdgeDatabase } from '../db/database.ts';
import { localTokens } from '../db/schema.ts';

export const TOKEN_PREFIX = 'sht_';

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface LocalToken {
  id: number;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/**
 * Local API bearer tokens: 256 random bits, shown once, stored as SHA-256. Created by
 * `pnpm edge token create`; checked on every request (so a token created while the edge
 * runs works at once, and a revoked one stops at once).
 */
export class LocalTokenStore {
  private readonly database: EdgeDatabase;
  private readonly lastTouched = new Map<number, number>();
  constructor(database: EdgeDatabase) {
    this.database = database;
  }

  create(name = 'cli'): { token: string; id: number; name: string } {
    const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const row = this.database.db
      .insert(localTokens)
      .values({ name, tokenHash: hashToken(token), createdAt: new Date().toISOString() })
      .returning()
      .get();
    return { token, id: row.id, name };
  }

  list(): LocalToken[] {
    return this.database.db
      .select()
      .from(localTokens)
      .all()
      .map((r) => ({ id: r.id, name: r.name, created_at: r.createdAt, last_used_at: r.lastUsedAt }));
  }

  revoke(id: number): boolean {
    return this.database.db.delete(localTokens).where(eq(localTokens.id, id)).run().changes > 0;
  }

  /** The token's id when valid, else null. */
  verify(token: string): number | null {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > 200 || !this.database.isOpen) return null;
    const row = this.database.db
      .select({ id: localTokens.id })
      .from(localTokens)
      .where(eq(localTokens.tokenHash, hashToken(token)))
      .get();
    if (!row) return null;
    const now = Date.now();
    if ((this.lastTouched.get(row.id) ?? 0) < now - 60_000) {
      this.lastTouched.set(row.id, now);
      this.database.db
        .update(localTokens)
        .set({ lastUsedAt: new Date(now).toISOString() })
        .where(eq(localTokens.id, row.id))
        .run();
    }
    return row.id;
  }
}
