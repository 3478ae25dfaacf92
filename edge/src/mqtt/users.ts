import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import type { MqttRole, MqttUser } from '@smarthome/protocol/edge-local';
import type { MqttCredentials } from '@smarthome/protocol';
import type { EdgeDatabase } from '../db/database.ts';
import { mqttUsers } from '../db/schema.ts';
import { ConflictError } from '../errors.ts';

/**
 * Broker passwords are never chosen by a person: `create` draws 192 random bits, `put` installs the
 * cloud's (as random, and stored there as SHA-256 too). A slow KDF protects guessable passwords;
 * for these it only cost every connection a 16 MB scrypt and ~50 ms of a libuv thread, and glibc
 * kept the 16 MB resident per thread (README, "Edge start-up notes"). So they are stored as SHA-256,
 * like every token in this system. Hashes written by earlier versions (scrypt) still verify and
 * are replaced by SHA-256 on their first successful check.
 */
const SHA256 = 'sha256$';

export function hashPassword(password: string | Buffer): string {
  return SHA256 + createHash('sha256').update(password).digest('base64');
}

function scryptAsync(password: string | Buffer, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** True when the password matches the stored hash (SHA-256, or an earlier version's scrypt). */
export async function verifyPassword(password: string | Buffer, stored: string): Promise<boolean> {
  if (stored.startsWith(SHA256)) {
    const expected = Buffer.from(stored.slice(SHA256.length), 'base64');
    const key = createHash('sha256').update(password).digest();
    return key.length === expected.length && timingSafeEqual(key, expected);
  }
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** compared against when the username is unknown, so that both answers take as long */
const UNKNOWN_USER_HASH = hashPassword(randomBytes(24));

export interface AuthenticatedUser {
  username: string;
  role: MqttRole;
}

/** MQTT broker users in SQLite: SHA-256-hashed generated passwords, a role per user. */
export class MqttUserStore {
  private readonly database: EdgeDatabase;
  constructor(database: EdgeDatabase) {
    this.database = database;
  }

  /** Creates a user with a generated password (returned once). Username generated when absent. */
  async create(input: { username?: string; role?: MqttRole } = {}): Promise<MqttCredentials> {
    const role = input.role ?? 'device';
    const username = input.username ?? `${role}-${randomBytes(5).toString('hex')}`;
    const password = randomBytes(24).toString('base64url');
    const passwordHash = hashPassword(password);
    const db = this.database.db;
    if (db.select({ u: mqttUsers.username }).from(mqttUsers).where(eq(mqttUsers.username, username)).get()) {
      throw new ConflictError(`MQTT user ${username} already exists`);
    }
    db.insert(mqttUsers).values({ username, passwordHash, role, createdAt: new Date().toISOString() }).run();
    return { username, password };
  }

  /** Sets a user's password to one issued elsewhere (a cloud replica's register-cloud credentials). */
  async put(input: { username: string; password: string; role: MqttRole }): Promise<void> {
    const passwordHash = hashPassword(input.password);
    this.database.db
      .insert(mqttUsers)
      .values({ username: input.username, passwordHash, role: input.role, createdAt: new Date().toISOString() })
      .onConflictDoUpdate({ target: mqttUsers.username, set: { passwordHash, role: input.role } })
      .run();
  }

  list(): MqttUser[] {
    return this.database.db
      .select()
      .from(mqttUsers)
      .all()
      .map((r) => ({ username: r.username, role: r.role, created_at: r.createdAt }));
  }

  get(username: string): MqttUser | undefined {
    const r = this.database.db.select().from(mqttUsers).where(eq(mqttUsers.username, username)).get();
    return r ? { username: r.username, role: r.role, created_at: r.createdAt } : undefined;
  }

  remove(username: string): boolean {
    return this.database.db.delete(mqttUsers).where(eq(mqttUsers.username, username)).run().changes > 0;
  }

  /** The user when username and password match, else null. */
  async authenticate(username: string | undefined, password: Buffer | undefined): Promise<AuthenticatedUser | null> {
    if (!username || !password || !this.database.isOpen) return null;
    const r = this.database.db.select().from(mqttUsers).where(eq(mqttUsers.username, username)).get();
    if (!r) {
      await verifyPassword(password, UNKNOWN_USER_HASH);
      return null;
    }
    if (!(await verifyPassword(password, r.passwordHash))) return null;
    if (!r.passwordHash.startsWith(SHA256) && this.database.isOpen) {
      // an earlier version's scrypt hash: replaced unless the password changed meanwhile
      this.database.db
        .update(mqttUsers)
        .set({ passwordHash: hashPassword(password) })
        .where(and(eq(mqttUsers.username, username), eq(mqttUsers.passwordHash, r.passwordHash)))
        .run();
    }
    return { username: r.username, role: r.role };
  }
}
