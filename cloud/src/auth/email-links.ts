import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { CloudDatabase } from '../db/database.ts';
import type { MailQueue } from '../mail/queue.ts';
import { renderMail } from '../mail/templates.ts';
import { emailTokens } from './tables.ts';
import { newSecret, sha256 } from './secrets.ts';

export type LinkPurpose = 'verify_email' | 'password_reset';

/** Verification links live 48 hours; reset links 30 minutes. */
export const LINK_TTL_MS: Record<LinkPurpose, number> = { verify_email: 48 * 3600_000, password_reset: 30 * 60_000 };
const PREFIX: Record<LinkPurpose, string> = { verify_email: 'shp_ev', password_reset: 'shp_pr' };
const PAGE: Record<LinkPurpose, string> = { verify_email: '/verify-email', password_reset: '/reset-password' };

/**
 * The single-use links sent by mail (address verification, password reset): 256 random bits
 * in the mail, the SHA-256 in email_tokens, consumed by one conditional UPDATE so a link
 * works once even when two requests race. Links point at the portal's pages.
 */
export class EmailLinks {
  private readonly database: CloudDatabase;
  private readonly mail: MailQueue | null;
  private readonly publicUrl: () => string;
  constructor(deps: { database: CloudDatabase; mail?: MailQueue; publicUrl?: () => string }) {
    this.database = deps.database;
    this.mail = deps.mail ?? null;
    this.publicUrl = deps.publicUrl ?? (() => 'http://localhost');
  }
  private get db() {
    return this.database.db;
  }

  /** Creates a link for `email` and queues its mail; call it inside the transaction that needs it. */
  async send(purpose: LinkPurpose, user: { id: string; email: string }, locale = 'en'): Promise<void> {
    const token = newSecret(PREFIX[purpose]);
    const at = Date.now();
    await this.db.insert(emailTokens).values({
      userId: user.id,
      purpose,
      email: user.email,
      tokenHash: sha256(token),
      expiresAt: new Date(at + LINK_TTL_MS[purpose]).toISOString(),
      usedAt: null,
      createdAt: new Date(at).toISOString(),
    });
    if (!this.mail) return;
    const link = `${this.publicUrl()}${PAGE[purpose]}?token=${encodeURIComponent(token)}`;
    const rendered = renderMail(
      purpose,
      locale,
      {
        email: user.email,
        hours: String(LINK_TTL_MS.verify_email / 3600_000),
        minutes: String(LINK_TTL_MS.password_reset / 60_000),
      },
      { link },
    );
    await this.mail.enqueue({ kind: purpose, ref: `user:${user.id}`, to: user.email, ...rendered });
  }

  /** Uses a link: its user and the address it was sent to, or null (unknown, expired or already used). */
  async consume(purpose: LinkPurpose, token: string): Promise<{ userId: string; email: string } | null> {
    const now = new Date().toISOString();
    const [row] = await this.db
      .update(emailTokens)
      .set({ usedAt: now })
      .where(
        and(
          eq(emailTokens.tokenHash, sha256(token)),
          eq(emailTokens.purpose, purpose),
          isNull(emailTokens.usedAt),
          gt(emailTokens.expiresAt, now),
        ),
      )
      .returning({ userId: emailTokens.userId, email: emailTokens.email })
      .all();
    return row ?? null;
  }

  /** How many links of this purpose the user was sent in the last `windowMs` (for throttling). */
  async sentSince(
    purpose: LinkPurpose,
    userId: string,
    windowMs: number,
  ): Promise<{ count: number; oldest: string | null }> {
    const since = new Date(Date.now() - windowMs).toISOString();
    const row = await this.db
      .select({ count: sql<number>`count(*)`, oldest: sql<string | null>`min(${emailTokens.createdAt})` })
      .from(emailTokens)
      .where(and(eq(emailTokens.userId, userId), eq(emailTokens.purpose, purpose), gt(emailTokens.createdAt, since)))
      .get();
    return { count: Number(row?.count ?? 0), oldest: row?.oldest ?? null };
  }
}
