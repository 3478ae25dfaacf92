import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { MqttRole, MqttUser } from '@smarthome/protocol/edge-local';
import type { MqttCredentials } from '@smarthome/protocol';
import type { EdgeDatabase } from '../db/database.ts';
import { mqttUsers } from '../db/schema.ts';
import { ConflictError } from '../errors.ts';

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

function scryptAsync(password: string | Buffer, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT.keylen, {
    N: SCRYPT.N,
    r: SCRYPT.r,
    p: SCRYPT.p,
    maxmem: 64 * 1024 * 1024,
  });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string | Buffer, stored: string): Promise<boolean> {
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

export interface AuthenticatedUser {
  username: string;
  role: MqttRole;
}

/** MQTT broker users in SQLite: scrypt-hashed passwords, a role per user. */
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
    const passwordHash = await hashPassword(password);
    const db = this.database.db;
    if (db.select({ u: mqttUsers.username }).from(mqttUsers).where(eq(mqttUsers.username, username)).get()) {
      throw new ConflictError(`MQTT user ${username} already exists`);
    }
    db.insert(mqttUsers).values({ username, passwordHash, role, createdAt: new Date().toISOString() }).run();
    return { username, password };
  }

  /** Sets a user's password to one issued elsewhere (a cloud replica's register-cloud credentials). */
  async put(input: { username: string; password: string; role: MqttRole }): Promise<void> {
    const passwordHash = await hashPassword(input.password);
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
      // spend the same time as a real check so usernames cannot be probed by timing
      await verifyPassword(
        password,
        `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$AAAAAAAAAAAAAAAAAAAAAA==$${Buffer.alloc(32).toString('base64')}`,
      );
      return null;
    }
    return (await verifyPassword(password, r.passwordHash)) ? { username: r.username, role: r.role } : null;
  }
}
