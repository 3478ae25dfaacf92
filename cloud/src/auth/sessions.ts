import { and, eq, gt, isNull } from 'drizzle-orm';
import { notFound } from '@smarthome/protocol/server';
import type { CloudDatabase } from '../db/database.ts';
import type { Caller } from '../context.ts';
import type { AuthService } from './service.ts';
import { refreshTokens } from './tables.ts';

export interface SessionOut {
  id: string;
  user_agent: string | null;
  client_address: string | null;
  created_at: string;
  last_used_at: string;
  current: boolean;
}

/** The session (refresh-token family) a caller's access token belongs to; null for a PAT. */
export function currentSession(auth: Caller): string | null {
  if (auth.via !== 'jwt' || !auth.credential?.startsWith('session:')) return null;
  return auth.credential.slice('session:'.length);
}

/**
 * A user's live sign-in sessions: one per refresh-token family whose tokens are neither
 * revoked nor expired. Started: its first token; last used: its newest (a refresh issues one);
 * the device: the User-Agent and address of the newest. Revoking uses AuthService's path
 * (refresh and access tokens, and app WebSockets, end at once).
 */
export class SessionList {
  private readonly deps: { database: CloudDatabase; auth: AuthService };
  constructor(deps: { database: CloudDatabase; auth: AuthService }) {
    this.deps = deps;
  }

  private async live(userId: string) {
    const rows = await this.deps.database.db
      .select()
      .from(refreshTokens)
      .where(
        and(
          eq(refreshTokens.userId, userId),
          isNull(refreshTokens.revokedAt),
          gt(refreshTokens.expiresAt, new Date().toISOString()),
        ),
      )
      .orderBy(refreshTokens.createdAt)
      .all();
    const byFamily = new Map<string, { first: (typeof rows)[number]; last: (typeof rows)[number] }>();
    for (const r of rows) {
      const f = byFamily.get(r.familyId);
      if (!f) byFamily.set(r.familyId, { first: r, last: r });
      else f.last = r;
    }
    return byFamily;
  }

  async list(userId: string, current: string | null): Promise<SessionOut[]> {
    const families = await this.live(userId);
    return [...families.entries()]
      .map(([id, { first, last }]) => ({
        id,
        user_agent: last.userAgent,
        client_address: last.clientAddress,
        created_at: first.createdAt,
        last_used_at: last.createdAt,
        current: id === current,
      }))
      .sort((a, b) => b.last_used_at.localeCompare(a.last_used_at));
  }

  /** 404 for an id that is not one of the user's live sessions (another user's included). */
  async revoke(userId: string, id: string): Promise<void> {
    if (!(await this.live(userId)).has(id)) throw notFound('session not found');
    await this.deps.auth.revokeSessions(userId, [id], 'session revoked: signed out from the session list');
  }

  async revokeAllBut(userId: string, keep: string | null): Promise<number> {
    const ids = [...(await this.live(userId)).keys()].filter((id) => id !== keep);
    await this.deps.auth.revokeSessions(userId, ids, 'session revoked: signed out from the session list');
    return ids.length;
  }
}
