import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt (memory-hard). N=2^15, r=8 → 32 MiB per hash; tests may use a cheaper cost. */
const STRONG: ScryptOptions = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const FAST: ScryptOptions = { N: 1 << 10, r: 8, p: 1 };
const KEYLEN = 32;

function scryptAsync(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEYLEN, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Format: scrypt$N$r$p$salt$hash (base64url), so cost can change without breaking old hashes. */
export async function hashPassword(password: string, fast = false): Promise<string> {
  const opts = fast ? FAST : STRONG;
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, opts);
  return ['scrypt', opts.N, opts.r, opts.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scryptAsync(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash that lets us burn the same time for unknown accounts as for known ones. */
let dummyHash: Promise<string> | null = null;
export function dummyPasswordHash(fast: boolean): Promise<string> {
  dummyHash ??= hashPassword('not-a-real-password', fast);
  return dummyHash;
}

/** High-entropy bearer secrets (256 bits) carry a kind prefix so they are recognisable in logs and scanners. */
export function newSecret(prefix: string, bytes = 32): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

/** Bearer secrets are random, so a fast hash is enough to store them (no brute force possible). */
export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
