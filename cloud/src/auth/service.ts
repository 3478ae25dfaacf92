import { randomUUID, randomBytes } from 'node:crypto';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { TokenResponse, User } from '@smarthome/protocol';
import { conflict, forbidden, notFound, rateLimited, unauthorized } from '@smarthome/protocol/server';
import type { CloudDatabase } from '../db/database.ts';
import type { AccessCache } from '../authz/access-cache.ts';
import { mfaBackupCodes, personalAccessTokens, refreshTokens, users } from './tables.ts';
import { dummyPasswordHash, hashPassword, newSecret, sha256, verifyPassword } from './secrets.ts';
import type { AccessTokenSigner } from './jwt.ts';
import type { LoginThrottle } from './throttle.ts';

export type Principal = { userId: string; via: 'jwt' | 'pat'; tokenId?: string };

const PAT_PREFIX = 'shp_pat';
const REFRESH_PREFIX = 'shp_rt';
const BACKUP_CODE_COUNT = 10;

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
}

const PAT_LAST_USED_GRANULARITY_MS = 60_000;

/** Accounts, sessions (access + rotating refresh tokens), personal access tokens, MFA backup codes. */
export class AuthService {
  private readonly deps: AuthServiceDeps;
  /** what authenticate() runs on every request */
  private readonly perRequest;
  constructor(deps: AuthServiceDeps) {
    this.deps = deps;
    this.perRequest = deps.database.prepared((db) => ({
      patByHash: db.select().from(personalAccessTokens).where(eq(personalAccessTokens.tokenHash, sql.placeholder('hash'))).prepare(),
      userExists: db.select({ id: users.id }).from(users).where(eq(users.id, sql.placeholder('id'))).prepare(),
    }));
  }
  private get db() {
    return this.deps.database.db;
  }

  async register(input: { email: string; password: string; name?: string }): Promise<TokenResponse> {
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
    };
    try {
      await this.db.insert(users).values(row);
    } catch (err) {
      // Two registrations racing for one e-mail: the unique index decides.
      if (String((err as Error).message).includes('UNIQUE')) throw conflict('email already registered');
      throw err;
    }
    return this.issueSession(toUser(row), randomUUID());
  }

  async passwordGrant(input: { email: string; password: string; mfa_code?: string }, address: string): Promise<TokenResponse> {
    const { throttle } = this.deps;
    await this.throttleGuess(input.email, address);
    const user = await this.db.select().from(users).where(eq(users.email, input.email)).get();
    // Unknown accounts cost the same scrypt work, so timing does not reveal which e-mails exist.
    const ok = await verifyPassword(input.password, user?.passwordHash ?? (await dummyPasswordHash(this.deps.fastHashing)));
    if (!user || !ok) {
      await throttle.fail(input.email, address);
      throw unauthorized('invalid_grant');
    }
    if (input.mfa_code !== undefined && !(await this.consumeBackupCode(user.id, input.mfa_code))) {
      await throttle.fail(input.email, address);
      throw unauthorized('invalid_mfa_code');
    }
    await throttle.succeed(input.email, address);
    return this.issueSession(toUser(user), randomUUID());
  }

  /** Before checking a password guess: 429 while this address is locked out, a pause while the account is under attack. */
  private async throttleGuess(account: string, address: string): Promise<void> {
    const { throttle } = this.deps;
    const wait = await throttle.retryAfter(account, address);
    if (wait > 0) throw rateLimited(wait);
    const slowdown = await throttle.slowdownMs(account);
    if (slowdown > 0) await new Promise((resolve) => setTimeout(resolve, slowdown));
  }

  /** Rotation: a refresh token works once; presenting a used one revokes its whole family. */
  async refreshGrant(refreshToken: string): Promise<TokenResponse> {
    const hash = sha256(refreshToken);
    const row = await this.db.select().from(refreshTokens).where(eq(refreshTokens.tokenHash, hash)).get();
    if (!row) throw unauthorized('invalid_grant');
    if (row.usedAt || row.revokedAt) {
      await this.db.update(refreshTokens).set({ revokedAt: now() })
        .where(and(eq(refreshTokens.familyId, row.familyId), isNull(refreshTokens.revokedAt)));
      throw unauthorized('invalid_grant');
    }
    if (row.expiresAt < now()) throw unauthorized('invalid_grant');
    const claimed = await this.db.update(refreshTokens).set({ usedAt: now() })
      .where(and(eq(refreshTokens.id, row.id), isNull(refreshTokens.usedAt))).returning({ id: refreshTokens.id }).all();
    if (claimed.length !== 1) throw unauthorized('invalid_grant');
    const user = await this.db.select().from(users).where(eq(users.id, row.userId)).get();
    if (!user) throw unauthorized('invalid_grant');
    return this.issueSession(toUser(user), row.familyId);
  }

  private async issueSession(user: User, familyId: string): Promise<TokenResponse> {
    const refresh = newSecret(REFRESH_PREFIX);
    const expires = new Date(Date.now() + this.deps.refreshTtlSeconds * 1000).toISOString();
    await this.db.insert(refreshTokens).values({
      id: randomUUID(), userId: user.id, tokenHash: sha256(refresh), familyId, expiresAt: expires, createdAt: now(),
    });
    return {
      user,
      access_token: await this.deps.signer.sign(user.id),
      refresh_token: refresh,
      token_type: 'Bearer',
      expires_in: this.deps.signer.expiresIn,
    };
  }

  /** Resolves an Authorization bearer value (JWT or PAT) to a principal, or null. */
  async authenticate(token: string): Promise<Principal | null> {
    if (token.startsWith(`${PAT_PREFIX}_`)) {
      const row = await this.perRequest().patByHash.get({ hash: sha256(token) });
      if (!row || row.revokedAt) return null;
      // last_used_at is informational: a write per minute, not one per request.
      const at = now();
      if (!row.lastUsedAt || Date.parse(at) - Date.parse(row.lastUsedAt) >= PAT_LAST_USED_GRANULARITY_MS) {
        await this.db.update(personalAccessTokens).set({ lastUsedAt: at }).where(eq(personalAccessTokens.id, row.id));
      }
      return { userId: row.userId, via: 'pat', tokenId: row.id };
    }
    const userId = await this.deps.signer.verify(token);
    if (!userId) return null;
    // A deleted account's tokens stop working at once.
    const load = async () => Boolean(await this.perRequest().userExists.get({ id: userId }));
    const exists = this.deps.accessCache ? await this.deps.accessCache.get(`user:${userId}`, load) : await load();
    return exists ? { userId, via: 'jwt' } : null;
  }

  async getUser(userId: string) {
    const row = await this.db.select().from(users).where(eq(users.id, userId)).get();
    if (!row) throw unauthorized();
    return row;
  }

  async findUserByEmail(email: string) {
    return this.db.select().from(users).where(eq(users.email, email.toLowerCase())).get();
  }

  async createPat(userId: string, name: string) {
    const token = newSecret(PAT_PREFIX);
    const row = { id: randomUUID(), userId, name, tokenHash: sha256(token), createdAt: now() };
    await this.db.insert(personalAccessTokens).values(row);
    return { id: row.id, name, token, created_at: row.createdAt };
  }

  async listPats(userId: string) {
    const rows = await this.db.select().from(personalAccessTokens)
      .where(and(eq(personalAccessTokens.userId, userId), isNull(personalAccessTokens.revokedAt)))
      .orderBy(desc(personalAccessTokens.createdAt)).all();
    return rows.map((r) => ({ id: r.id, name: r.name, created_at: r.createdAt, last_used_at: r.lastUsedAt }));
  }

  async revokePat(userId: string, id: string) {
    const result = await this.db.update(personalAccessTokens).set({ revokedAt: now() })
      .where(and(eq(personalAccessTokens.id, id), eq(personalAccessTokens.userId, userId), isNull(personalAccessTokens.revokedAt)))
      .returning({ id: personalAccessTokens.id }).all();
    if (result.length !== 1) throw notFound('token not found');
  }

  /**
   * X-Account-Verification: the current password (TOTP enrolment is not offered yet). A
   * password guess like a login: throttled and counted per account+address.
   */
  async generateBackupCodes(userId: string, verification: string | undefined, address: string): Promise<string[]> {
    const user = await this.getUser(userId);
    if (!verification) throw forbidden('verification_failed');
    await this.throttleGuess(user.email, address);
    if (!(await verifyPassword(verification, user.passwordHash))) {
      await this.deps.throttle.fail(user.email, address);
      throw forbidden('verification_failed');
    }
    await this.deps.throttle.succeed(user.email, address);
    // 10 codes of 10 base32 characters: 50 bits each, enough against online guessing (throttled).
    const alphabet = 'abcdefghijkmnpqrstuvwxyz23456789';
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, () => {
      const bytes = randomBytes(10);
      const chars = Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('');
      return `${chars.slice(0, 5)}-${chars.slice(5)}`;
    });
    const createdAt = now();
    await this.deps.database.transaction(async () => {
      await this.db.delete(mfaBackupCodes).where(eq(mfaBackupCodes.userId, userId));
      await this.db.insert(mfaBackupCodes).values(codes.map((code) => ({ userId, codeHash: sha256(normalizeCode(code)), createdAt })));
    });
    return codes;
  }

  private async consumeBackupCode(userId: string, code: string): Promise<boolean> {
    const result = await this.db.update(mfaBackupCodes).set({ usedAt: now() })
      .where(and(eq(mfaBackupCodes.userId, userId), eq(mfaBackupCodes.codeHash, sha256(normalizeCode(code))), isNull(mfaBackupCodes.usedAt)))
      .returning({ id: mfaBackupCodes.id }).all();
    return result.length === 1;
  }
}

const normalizeCode = (code: string) => code.trim().toLowerCase().replace(/[\s-]/g, '');
