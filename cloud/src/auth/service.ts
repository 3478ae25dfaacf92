import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { TokenResponse, User } from '@smarthome/protocol';
import { conflict, forbidden, rateLimited, unauthorized } from '@smarthome/protocol/server';
import type { CloudDatabase } from '../db/database.ts';
import type { AccessCache } from '../authz/access-cache.ts';
import { refreshTokens, users } from './tables.ts';
import { dummyPasswordHash, hashPassword, newSecret, sha256, verifyPassword } from './secrets.ts';
import type { AccessTokenSigner } from './jwt.ts';
import type { LoginThrottle } from './throttle.ts';
import type { EmailLinks } from './email-links.ts';
import type { MailQueue } from '../mail/queue.ts';
import { renderMail } from '../mail/templates.ts';
import {
  patCredential,
  sessionCredential,
  type CredentialsRevoked,
  type Principal,
  type SessionClient,
} from './credentials.ts';
import { PersonalAccessTokens } from './personal-access-tokens.ts';
import { SecondFactor } from './second-factor.ts';
import { SessionRevocations } from './session-revocations.ts';

// Callers import these from here, as before the split.
export { patCredential, sessionCredential, type CredentialsRevoked, type Principal, type SessionClient };

const REFRESH_PREFIX = 'shp_rt';

const now = () => new Date().toISOString();
const toUser = (u: typeof users.$inferSelect): User => ({ id: u.id, email: u.email, name: u.name ?? null });

export interface AuthServiceDeps {
  database: CloudDatabase;
  /** caches "this user exists" for access-token checks; none: ask the database each time */
  accessCache?: AccessCache;
  signer: AccessTokenSigner;
  throttle: LoginThrottle;
  refreshTtlSeconds: number;
  fastHashing: boolean;
  /** the verification mail after registration (none: no mail) */
  links?: EmailLinks;
  /** the new-device sign-in notice (none: no mail) */
  mail?: MailQueue;
}

/**
 * Accounts and sessions (access + rotating refresh tokens); personal access tokens, the second
 * factor and stored session revocations through the modules of the same names. Emits
 * 'revoked' once a revocation is stored.
 */
export class AuthService extends EventEmitter<{ revoked: [CredentialsRevoked] }> {
  private readonly deps: AuthServiceDeps;
  private readonly pats: PersonalAccessTokens;
  private readonly secondFactor: SecondFactor;
  private readonly revocations: SessionRevocations;
  /** what authenticate() runs on every request with an access token */
  private readonly userExists;
  constructor(deps: AuthServiceDeps) {
    super();
    this.deps = deps;
    this.pats = new PersonalAccessTokens(deps.database);
    this.secondFactor = new SecondFactor(deps.database);
    this.revocations = new SessionRevocations({
      database: deps.database,
      refreshTtlSeconds: deps.refreshTtlSeconds,
      accessTtlSeconds: deps.signer.expiresIn,
    });
    this.userExists = deps.database.prepared((db) =>
      db
        .select({ id: users.id })
        .from(users)
        .where(eq(users.id, sql.placeholder('id')))
        .prepare(),
    );
  }
  private get db() {
    return this.deps.database.db;
  }

  async register(
    input: { email: string; password: string; name?: string },
    locale = 'en',
    client?: SessionClient,
  ): Promise<TokenResponse> {
    const existing = await this.db.select({ id: users.id }).from(users).where(eq(users.email, input.email)).get();
    if (existing) throw conflict('email already registered');
    const passwordHash = await hashPassword(input.password, this.deps.fastHashing);
    const row = {
      id: randomUUID(),
      email: input.email,
      name: input.name?.trim() || null,
      passwordHash,
      appAccountToken: randomUUID(),
      totpSecret: null,
      createdAt: now(),
      emailVerified: false,
      totpPendingSecret: null,
      totpLastStep: null,
      notifyNewSignIn: false,
    };
    try {
      // The verification mail is queued in the same transaction: it exists exactly when the account does.
      await this.deps.database.transaction(async () => {
        await this.db.insert(users).values(row);
        await this.deps.links?.send('verify_email', row, locale);
      });
    } catch (err) {
      // Two registrations racing for one e-mail: the unique index decides.
      if (String((err as Error).message).includes('UNIQUE')) throw conflict('email already registered');
      throw err;
    }
    return this.issueSession(toUser(row), randomUUID(), client);
  }

  async passwordGrant(
    input: { email: string; password: string; mfa_code?: string },
    address: string,
    userAgent: string | null = null,
  ): Promise<TokenResponse> {
    const { throttle } = this.deps;
    await this.throttleGuess(input.email, address);
    const user = await this.db.select().from(users).where(eq(users.email, input.email)).get();
    // Unknown accounts cost the same scrypt work, so timing does not reveal which e-mails exist.
    const ok = await verifyPassword(
      input.password,
      user?.passwordHash ?? (await dummyPasswordHash(this.deps.fastHashing)),
    );
    if (!user || !ok) {
      await throttle.fail(input.email, address);
      throw unauthorized('invalid_grant');
    }
    // With TOTP enrolled, the password alone is not enough: the answer asks for a code (TOTP or backup).
    if (user.totpSecret && input.mfa_code === undefined) throw unauthorized('mfa_required');
    if (input.mfa_code !== undefined && !(await this.acceptSecondFactor(user, input.mfa_code))) {
      await throttle.fail(input.email, address);
      throw unauthorized('invalid_mfa_code');
    }
    await throttle.succeed(input.email, address);
    if (user.notifyNewSignIn) await this.noticeNewDevice(user, userAgent, address);
    return this.issueSession(toUser(user), randomUUID(), { userAgent, address });
  }

  /** Mails the owner when no session of the account (live or not) ever had this User-Agent. */
  private async noticeNewDevice(
    user: { id: string; email: string },
    userAgent: string | null,
    address: string,
  ): Promise<void> {
    if (!this.deps.mail) return;
    const agent = userAgent?.slice(0, 512) ?? null;
    const seen = await this.db
      .select({ id: refreshTokens.id })
      .from(refreshTokens)
      .where(
        and(
          eq(refreshTokens.userId, user.id),
          agent === null ? isNull(refreshTokens.userAgent) : eq(refreshTokens.userAgent, agent),
        ),
      )
      .limit(1)
      .get();
    if (seen) return;
    const rendered = renderMail('new_sign_in', 'en', {
      email: user.email,
      device: agent ?? 'unknown device',
      address,
      at: now(),
    });
    await this.deps.mail.enqueue({ kind: 'new_sign_in', ref: `user:${user.id}`, to: user.email, ...rendered });
  }

  async setSignInNotice(userId: string, enabled: boolean): Promise<void> {
    await this.db.update(users).set({ notifyNewSignIn: enabled }).where(eq(users.id, userId));
  }

  /** Before checking a password guess: 429 while this address is locked out, a pause while the account is under attack. */
  async throttleGuess(account: string, address: string): Promise<void> {
    const { throttle } = this.deps;
    const wait = await throttle.retryAfter(account, address);
    if (wait > 0) throw rateLimited(wait);
    const slowdown = await throttle.slowdownMs(account);
    if (slowdown > 0) await new Promise((resolve) => setTimeout(resolve, slowdown));
  }

  /** Rotation: a refresh token works once; presenting a used one revokes its whole family. */
  async refreshGrant(refreshToken: string, client?: SessionClient): Promise<TokenResponse> {
    const hash = sha256(refreshToken);
    const row = await this.db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, hash)).get();
    if (!row) throw unauthorized('invalid_grant');
    if (row.usedAt || row.revokedAt) {
      await this.revokeSessions(row.userId, [row.familyId], 'session revoked: its refresh token was used twice');
      throw unauthorized('invalid_grant');
    }
    if (row.expiresAt < now()) throw unauthorized('invalid_grant');
    // A token its family's revocation missed (issued by a refresh racing with it) is dead too.
    if (await this.revocations.isRevoked(row.familyId)) throw unauthorized('invalid_grant');
    const claimed = await this.db
      .update(refreshTokens)
      .set({ usedAt: now() })
      .where(and(eq(refreshTokens.id, row.id), isNull(refreshTokens.usedAt)))
      .returning({ id: refreshTokens.id })
      .all();
    if (claimed.length !== 1) throw unauthorized('invalid_grant');
    const user = await this.db.select().from(users).where(eq(users.id, row.userId)).get();
    if (!user) throw unauthorized('invalid_grant');
    return this.issueSession(toUser(user), row.familyId, client);
  }

  private async issueSession(user: User, familyId: string, client?: SessionClient): Promise<TokenResponse> {
    const refresh = newSecret(REFRESH_PREFIX);
    const expires = new Date(Date.now() + this.deps.refreshTtlSeconds * 1000).toISOString();
    await this.db.insert(refreshTokens).values({
      id: randomUUID(),
      userId: user.id,
      tokenHash: sha256(refresh),
      familyId,
      expiresAt: expires,
      createdAt: now(),
      userAgent: client?.userAgent?.slice(0, 512) ?? null,
      clientAddress: client?.address ?? null,
    });
    return {
      user,
      access_token: await this.deps.signer.sign(user.id, familyId),
      refresh_token: refresh,
      token_type: 'Bearer',
      expires_in: this.deps.signer.expiresIn,
    };
  }

  /** Resolves an Authorization bearer value (JWT or PAT) to a principal, or null. */
  async authenticate(token: string): Promise<Principal | null> {
    if (this.pats.recognises(token)) return this.pats.authenticate(token);
    const claims = await this.deps.signer.verify(token);
    if (!claims) return null;
    const { userId, sessionId } = claims;
    // A deleted account's tokens, and a revoked session's, stop working at once.
    const load = async () => {
      if (!(await this.userExists().get({ id: userId }))) return false;
      return sessionId === null || !(await this.revocations.isRevoked(sessionId));
    };
    const key = sessionId === null ? `user:${userId}` : `session:${userId}:${sessionId}`;
    const valid = this.deps.accessCache ? await this.deps.accessCache.get(key, load) : await load();
    return valid
      ? {
          userId,
          via: 'jwt',
          credential: sessionId === null ? null : sessionCredential(sessionId),
          expiresAt: claims.expiresAt,
        }
      : null;
  }

  /**
   * Ends sign-in sessions: their refresh tokens stop working, and so do their access tokens
   * (session_revocations, which the access cache follows on every replica) and the sockets
   * opened with them ('revoked').
   */
  async revokeSessions(userId: string, familyIds: string[], message: string): Promise<void> {
    await this.deps.database.transaction(() => this.revocations.store(userId, familyIds));
    this.announceSessionsRevoked(userId, familyIds, message);
  }

  /** Once committed: sockets opened with these sessions end. */
  private announceSessionsRevoked(userId: string, familyIds: string[], message: string): void {
    if (familyIds.length === 0) return;
    this.emit('revoked', { userId, credentials: familyIds.map(sessionCredential), reason: 'session revoked', message });
  }

  /**
   * Sets a new password (the current one as verification) and ends every other sign-in
   * session of the user. The caller's own session stays (when it called with an access
   * token), and so do personal access tokens: they are listed and revoked one by one.
   */
  async changePassword(
    caller: Principal,
    verification: string | undefined,
    password: string,
    address: string,
  ): Promise<void> {
    const user = await this.getUser(caller.userId);
    await this.checkVerification(user, verification, address);
    const passwordHash = await hashPassword(password, this.deps.fastHashing);
    const current = caller.via === 'jwt' ? caller.credential : null;
    await this.setPasswordHash(user.id, passwordHash, current, 'session revoked: the password was changed');
  }

  /**
   * Stores a new password hash and ends every sign-in session of the user but `keep` (its
   * refresh tokens, access tokens and sockets). `user` may be a function that finds the user
   * inside the same transaction (e.g. by using a reset link), so a failure changes nothing.
   */
  async setPasswordHash(
    user: string | (() => Promise<string>),
    passwordHash: string,
    keep: string | null,
    message: string,
  ): Promise<void> {
    const { userId, ended } = await this.deps.database.transaction(async () => {
      const userId = typeof user === 'string' ? user : await user();
      await this.db.update(users).set({ passwordHash }).where(eq(users.id, userId));
      const others = (await this.revocations.liveFamilies(userId)).filter((id) => sessionCredential(id) !== keep);
      await this.revocations.store(userId, others);
      return { userId, ended: others };
    });
    this.announceSessionsRevoked(userId, ended, message);
  }

  hashPassword(password: string): Promise<string> {
    return hashPassword(password, this.deps.fastHashing);
  }

  async getUser(userId: string) {
    const row = await this.db.select().from(users).where(eq(users.id, userId)).get();
    if (!row) throw unauthorized();
    return row;
  }

  async findUserByEmail(email: string) {
    return this.db.select().from(users).where(eq(users.email, email.toLowerCase())).get();
  }

  createPat(userId: string, name: string) {
    return this.pats.create(userId, name);
  }

  listPats(userId: string) {
    return this.pats.list(userId);
  }

  async revokePat(userId: string, id: string) {
    await this.pats.revoke(userId, id);
    this.emit('revoked', {
      userId,
      credentials: [patCredential(id)],
      reason: 'token revoked',
      message: 'personal access token revoked',
    });
  }

  /**
   * X-Account-Verification: the caller's current password. A password guess like a login:
   * throttled and counted per account+address (403 verification_failed when missing or wrong).
   */
  async checkVerification(
    user: { email: string; passwordHash: string },
    verification: string | undefined,
    address: string,
  ): Promise<void> {
    if (!verification) throw forbidden('verification_failed');
    await this.throttleGuess(user.email, address);
    if (!(await verifyPassword(verification, user.passwordHash))) {
      await this.deps.throttle.fail(user.email, address);
      throw forbidden('verification_failed');
    }
    await this.deps.throttle.succeed(user.email, address);
  }

  /**
   * X-Account-Verification: the current password (TOTP enrolment is not offered yet). A
   * password guess like a login: throttled and counted per account+address.
   */
  async generateBackupCodes(userId: string, verification: string | undefined, address: string): Promise<string[]> {
    const user = await this.getUser(userId);
    await this.checkVerification(user, verification, address);
    return this.secondFactor.newBackupCodes(userId);
  }

  /** A TOTP code (once per time step) or an unused backup code. */
  async acceptSecondFactor(
    user: { id: string; totpSecret: string | null; totpLastStep: number | null },
    code: string,
  ): Promise<boolean> {
    return this.secondFactor.accept(user, code);
  }
}
