import { eq } from 'drizzle-orm';
import { badRequest, conflict, rateLimited } from '@smarthome/protocol/server';
import type { CloudDatabase } from '../db/database.ts';
import type { MailQueue } from '../mail/queue.ts';
import { renderMail } from '../mail/templates.ts';
import type { AuthService } from './service.ts';
import type { LoginThrottle } from './throttle.ts';
import { users } from './tables.ts';
import { acceptCode, enrolment, newTotpSecret } from './totp.ts';

/**
 * TOTP enrolment (RFC 6238): enrol (password) → a pending secret as an otpauth:// URI and a
 * QR code; confirm with a first code → enabled, and sign-in asks for a code from then on;
 * disable with the password and a code (TOTP or backup). Wrong codes count like wrong
 * passwords (throttle.ts). Enabling and disabling are mailed to the account's address.
 */
export class MfaService {
  private readonly deps: {
    database: CloudDatabase;
    auth: AuthService;
    throttle: LoginThrottle;
    mail?: MailQueue;
    issuer: string;
  };
  constructor(deps: {
    database: CloudDatabase;
    auth: AuthService;
    throttle: LoginThrottle;
    mail?: MailQueue;
    issuer?: string;
  }) {
    this.deps = { issuer: 'Smart Home', ...deps };
  }
  private get db() {
    return this.deps.database.db;
  }

  async enrol(userId: string, verification: string | undefined, address: string) {
    const user = await this.deps.auth.getUser(userId);
    await this.deps.auth.checkVerification(user, verification, address);
    if (user.totpSecret) throw conflict('TOTP is already enabled; disable it first');
    const secret = newTotpSecret();
    await this.db.update(users).set({ totpPendingSecret: secret }).where(eq(users.id, userId));
    const { uri, svg } = await enrolment(secret, user.email, this.deps.issuer);
    return { secret, otpauth_uri: uri, qr_svg: svg };
  }

  async confirm(userId: string, code: string, address: string): Promise<void> {
    const user = await this.deps.auth.getUser(userId);
    if (!user.totpPendingSecret) throw conflict('no TOTP enrolment to confirm');
    await this.guard(user.email, address);
    const step = acceptCode(user.totpPendingSecret, code, null);
    if (step === null) {
      await this.deps.throttle.fail(user.email, address);
      throw badRequest('code: wrong or expired code');
    }
    await this.deps.throttle.succeed(user.email, address);
    await this.deps.database.transaction(async () => {
      await this.db
        .update(users)
        .set({ totpSecret: user.totpPendingSecret, totpPendingSecret: null, totpLastStep: step })
        .where(eq(users.id, userId));
      await this.notify(user, 'enabled');
    });
  }

  async disable(userId: string, verification: string | undefined, code: string, address: string): Promise<void> {
    const user = await this.deps.auth.getUser(userId);
    await this.deps.auth.checkVerification(user, verification, address);
    if (!user.totpSecret) throw conflict('TOTP is not enabled');
    await this.guard(user.email, address);
    if (!(await this.deps.auth.acceptSecondFactor(user, code))) {
      await this.deps.throttle.fail(user.email, address);
      throw badRequest('code: wrong or already used code');
    }
    await this.deps.database.transaction(async () => {
      await this.db
        .update(users)
        .set({ totpSecret: null, totpPendingSecret: null, totpLastStep: null })
        .where(eq(users.id, userId));
      await this.notify(user, 'disabled');
    });
  }

  private async guard(account: string, address: string): Promise<void> {
    const wait = await this.deps.throttle.retryAfter(account, address);
    if (wait > 0) throw rateLimited(wait);
  }

  private async notify(user: { email: string; id: string }, change: 'enabled' | 'disabled'): Promise<void> {
    if (!this.deps.mail) return;
    const rendered = renderMail('mfa_changed', 'en', { change, email: user.email, at: new Date().toISOString() });
    await this.deps.mail.enqueue({ kind: 'mfa_changed', ref: `user:${user.id}`, to: user.email, ...rendered });
  }
}
