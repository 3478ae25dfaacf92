import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { LocalAccount } from '@smarthome/protocol/local-accounts';
import type { EdgeDatabase } from '../db/database.ts';
import type { LocalTokenStore } from '../auth/tokens.ts';
import { ConflictError, NotFoundError } from '../errors.ts';

/** scrypt as on the cloud (N=2^15, r=8: 32 MiB, ~0.1 s on a Pi 4), stored as scrypt$N$r$p$salt$hash. */
const COST: ScryptOptions = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEYLEN = 32;
/** A session is a local API token named after its account, so the local API and /api/websocket accept it as they are. */
export const SESSION_TOKEN_PREFIX = 'session:';

const derive = (password: string, salt: Buffer, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEYLEN, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: COST.maxmem,
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

interface Row {
  id: number;
  username: string;
  password_hash: string;
  role: 'owner' | 'user';
  created_at: string;
}
const toAccount = (r: Row): LocalAccount => ({
  id: r.id,
  username: r.username,
  role: r.role,
  created_at: r.created_at,
});

/** The home's local accounts in the edge's SQLite file (table local_accounts). */
export class LocalAccountStore {
  private readonly database: EdgeDatabase;
  private readonly tokens: LocalTokenStore;
  /** burns the same time for an unknown username as for a wrong password */
  private dummy: Promise<string> | null = null;

  constructor(database: EdgeDatabase, tokens: LocalTokenStore) {
    this.database = database;
    this.tokens = tokens;
  }

  count(): number {
    return (this.database.sqlite.prepare('SELECT count(*) AS n FROM local_accounts').get() as { n: number }).n;
  }

  list(): LocalAccount[] {
    return (this.database.sqlite.prepare('SELECT * FROM local_accounts ORDER BY id').all() as Row[]).map(toAccount);
  }

  /** The first account is the owner whatever is asked: a home always has one. onlyIfFirst: 409 once one exists (onboarding). */
  async create(
    username: string,
    password: string,
    role: 'owner' | 'user' = 'user',
    opts: { onlyIfFirst?: boolean } = {},
  ): Promise<LocalAccount> {
    const hash = await hashPassword(password);
    // checked and inserted in one synchronous step after the (slow) hash: two first-run forms cannot both win
    const insert = this.database.sqlite.transaction(() => {
      const first = this.count() === 0;
      if (opts.onlyIfFirst && !first) throw new ConflictError('this home already has an owner: sign in instead');
      if (this.database.sqlite.prepare('SELECT 1 FROM local_accounts WHERE username = ?').get(username)) {
        throw new ConflictError(`local account ${username} already exists`);
      }
      return this.database.sqlite
        .prepare(
          'INSERT INTO local_accounts (username, password_hash, role, created_at) VALUES (?, ?, ?, ?) RETURNING *',
        )
        .get(username, hash, first ? 'owner' : role, new Date().toISOString()) as Row;
    });
    return toAccount(insert());
  }

  /** The account when the password matches, else null (in about the same time either way). */
  async verify(username: string, password: string): Promise<LocalAccount | null> {
    const row = this.database.sqlite.prepare('SELECT * FROM local_accounts WHERE username = ?').get(username) as
      Row | undefined;
    if (!row) {
      this.dummy ??= hashPassword('not-a-real-password');
      await verifyPassword(password, await this.dummy);
      return null;
    }
    return (await verifyPassword(password, row.password_hash)) ? toAccount(row) : null;
  }

  /** A new edge-local session for the account: its bearer token (shown once). */
  openSession(account: LocalAccount): string {
    return this.tokens.create(`${SESSION_TOKEN_PREFIX}${account.username}`).token;
  }

  /** What a local API token stands for: its local account (a session), a plain local token (the CLI's), or nothing. */
  ofToken(tokenId: number): { kind: 'account'; account: LocalAccount } | { kind: 'token' } | null {
    const token = this.tokens.list().find((t) => t.id === tokenId);
    if (!token) return null;
    if (!token.name.startsWith(SESSION_TOKEN_PREFIX)) return { kind: 'token' };
    const row = this.database.sqlite
      .prepare('SELECT * FROM local_accounts WHERE username = ?')
      .get(token.name.slice(SESSION_TOKEN_PREFIX.length)) as Row | undefined;
    // a session whose account is gone (deleted while the token lived) stands for nobody
    return row ? { kind: 'account', account: toAccount(row) } : null;
  }

  /** Deletes an account and ends its sessions. Never the last owner; `byId` (the caller) never deletes itself. */
  remove(id: number, byId: number | null): LocalAccount {
    const remove = this.database.sqlite.transaction(() => {
      const row = this.database.sqlite.prepare('SELECT * FROM local_accounts WHERE id = ?').get(id) as Row | undefined;
      if (!row) throw new NotFoundError(`no local account ${id}`);
      if (id === byId) throw new ConflictError('you cannot delete your own account: ask another owner');
      const owners = this.database.sqlite
        .prepare("SELECT count(*) AS n FROM local_accounts WHERE role = 'owner'")
        .get() as { n: number };
      if (row.role === 'owner' && owners.n <= 1)
        throw new ConflictError(`${row.username} is the last owner: a home always keeps one`);
      this.database.sqlite.prepare('DELETE FROM local_accounts WHERE id = ?').run(id);
      return toAccount(row);
    });
    const gone = remove();
    this.endSessions(gone.username);
    return gone;
  }

  /** Sets a new password when `current` matches (false when it does not); the account's other sessions end. */
  async changePassword(account: LocalAccount, current: string, next: string, keepTokenId: number): Promise<boolean> {
    if (!(await this.verify(account.username, current))) return false;
    const hash = await hashPassword(next);
    this.database.sqlite.prepare('UPDATE local_accounts SET password_hash = ? WHERE id = ?').run(hash, account.id);
    this.endSessions(account.username, keepTokenId);
    return true;
  }

  /** Revokes the account's sessions (all but `keepTokenId`); an open WebSocket of theirs stops at its next command. */
  private endSessions(username: string, keepTokenId?: number): void {
    const name = `${SESSION_TOKEN_PREFIX}${username}`;
    for (const t of this.tokens.list()) if (t.name === name && t.id !== keepTokenId) this.tokens.revoke(t.id);
  }

  /** Ends a session by its token id; other local tokens (the CLI's) are not sessions and stay. */
  closeSession(tokenId: number): boolean {
    const token = this.tokens.list().find((t) => t.id === tokenId);
    return !!token && token.name.startsWith(SESSION_TOKEN_PREFIX) && this.tokens.revoke(tokenId);
  }
}
