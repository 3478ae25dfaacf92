import { and, eq } from 'drizzle-orm';
import { badRequest, conflict, rateLimited } from '@smarthome/protocol/server';
import type { CloudDatabase } from '../db/database.ts';
import type { AuthService } from './service.ts';
import type { EmailLinks } from './email-links.ts';
import type { LoginThrottle } from './throttle.ts';
import { users } from './tables.ts';

const HOUR = 3600_000;
/** verification mails a user may ask for per hour (registration and address changes count too) */
const VERIFY_PER_HOUR = 5;
/** reset mails sent per account per hour; further requests get the same answer and send nothing */
const RESETS_PER_HOUR = 3;

export const RESET_REQUESTED = 'if an account has this address, a link to reset its password is on its way';

/**
 * Verified addresses and password reset, on top of AuthService: the links are EmailLinks',
 * the password and session work AuthService's (the path POST /v1/account/password uses).
 */
export class AccountEmailService {
  private readonly deps: { database: CloudDatabase; auth: AuthService; links: EmailLinks; throttle: LoginThrottle };
  constructor(deps: { database: CloudDatabase; auth: AuthService; links: EmailLinks; throttle: LoginThrottle }) {
    this.deps = deps;
  }
  private get db() {
    return this.deps.database.db;
  }

  /** Follows a verification link: the address it was sent to becomes verified (if it is still the account's). */
  async verify(token: string): Promise<void> {
    const ok = await this.deps.database.transaction(async () => {
      const link = await this.deps.links.consume('verify_email', token);
      if (!link) return false;
      const done = await this.db
        .update(users)
        .set({ emailVerified: true })
        .where(and(eq(users.id, link.userId), eq(users.email, link.email)))
        .returning({ id: users.id })
        .all();
      return done.length === 1;
    });
    if (!ok) throw badRequest('token: invalid, expired or already used');
  }

  /** Another verification mail (409 when verified; at most 5 per hour, then 429). */
  async resend(userId: string, locale: string): Promise<void> {
    const user = await this.deps.auth.getUser(userId);
    if (user.emailVerified) throw conflict('email already verified');
    await this.limitVerificationMails(userId);
    await this.deps.database.transaction(() => this.deps.links.send('verify_email', user, locale));
  }

  private async limitVerificationMails(userId: string): Promise<void> {
    const { count, oldest } = await this.deps.links.sentSince('verify_email', userId, HOUR);
    if (count >= VERIFY_PER_HOUR)
      throw rateLimited(Math.max(1, Math.ceil((Date.parse(oldest ?? '') + HOUR - Date.now()) / 1000) || 60));
  }

  /** A new address (the password in X-Account-Verification): unverified until its link is followed. */
  async changeEmail(
    userId: string,
    verification: string | undefined,
    email: string,
    address: string,
    locale: string,
  ): Promise<void> {
    const user = await this.deps.auth.getUser(userId);
    await this.deps.auth.checkVerification(user, verification, address);
    if (email === user.email) throw conflict('that is already the address of this account');
    await this.limitVerificationMails(userId);
    await this.deps.database.transaction(async () => {
      const taken = await this.db.select({ id: users.id }).from(users).where(eq(users.email, email)).get();
      if (taken) throw conflict('email already registered');
      await this.db.update(users).set({ email, emailVerified: false }).where(eq(users.id, userId));
      await this.deps.links.send('verify_email', { id: userId, email }, locale);
    });
  }

  /**
   * Always the same answer, whether the address has an account or not. Counted like a failed
   * sign-in per address and e-mail (429 after 5 in 15 minutes, see throttle.ts), and at most
   * 3 mails per account per hour.
   */
  async requestReset(email: string, address: string, locale: string): Promise<void> {
    const key = `reset:${email}`;
    const wait = await this.deps.throttle.retryAfter(key, address);
    if (wait > 0) throw rateLimited(wait);
    await this.deps.throttle.fail(key, address);
    const user = await this.deps.auth.findUserByEmail(email);
    if (!user) return;
    if ((await this.deps.links.sentSince('password_reset', user.id, HOUR)).count >= RESETS_PER_HOUR) return;
    await this.deps.database.transaction(() => this.deps.links.send('password_reset', user, locale));
  }

  /**
   * Follows a reset link with a new password: every sign-in session ends (refresh and access
   * tokens, open app WebSockets), and the address counts as verified (the link reached it).
   */
  async confirmReset(token: string, password: string): Promise<void> {
    const passwordHash = await this.deps.auth.hashPassword(password);
    // The link is used in the transaction that sets the password: both happen, or neither.
    await this.deps.auth.setPasswordHash(
      async () => {
        const link = await this.deps.links.consume('password_reset', token);
        const user =
          link &&
          (await this.db
            .select({ id: users.id })
            .from(users)
            .where(and(eq(users.id, link.userId), eq(users.email, link.email)))
            .get());
        if (!user) throw badRequest('token: invalid, expired or already used');
        await this.db.update(users).set({ emailVerified: true }).where(eq(users.id, user.id));
        return user.id;
      },
      passwordHash,
      null,
      'session revoked: the password was reset',
    );
  }
}
