import fs from 'node:fs';
import path from 'node:path';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const FORMAT = 'v1';
const AAD = Buffer.from('smarthome/voip-account-password/v1');

/**
 * AES-256-GCM under a 256-bit key kept in one file of the data dir (created on first use,
 * mode 0600, never rewritten). Ciphertexts are `v1:<iv>:<tag>:<data>` (base64url parts),
 * with a fresh 96-bit IV each time.
 */
export class SecretBox {
  private readonly keyFile: string;
  private key: Buffer | null = null;
  /** `providedKey`: VOIP_SECRET_KEY (the same on every replica); the key file is then not used */
  constructor(keyFile: string, providedKey: Buffer | null = null) {
    this.keyFile = keyFile;
    this.key = providedKey;
  }

  private loadKey(): Buffer {
    if (this.key) return this.key;
    if (!fs.existsSync(this.keyFile)) {
      fs.mkdirSync(path.dirname(this.keyFile), { recursive: true });
      // Write a temporary file, then link it into place: another process racing us either
      // wins (EEXIST, we read its key) or loses; nobody ever reads a half-written key.
      const tmp = `${this.keyFile}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      fs.writeFileSync(tmp, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
      try {
        fs.linkSync(tmp, this.keyFile);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        fs.rmSync(tmp, { force: true });
      }
    }
    const key = Buffer.from(fs.readFileSync(this.keyFile, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${this.keyFile} does not hold a 256-bit key`);
    this.key = key;
    return key;
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.loadKey(), iv);
    cipher.setAAD(AAD);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [
      FORMAT,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      data.toString('base64url'),
    ].join(':');
  }

  decrypt(sealed: string): string {
    const [format, iv, tag, data] = sealed.split(':');
    if (format !== FORMAT || !iv || !tag || data === undefined) throw new Error('unknown secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.loadKey(), Buffer.from(iv, 'base64url'));
    decipher.setAAD(AAD);
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** VOIP_SECRET_KEY: 32 bytes in base64 (what voip-secret.key holds). */
export function parseSecretKey(text: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32 || key.toString('base64') !== text.trim())
    throw new Error('VOIP_SECRET_KEY must be 32 bytes in base64 (the content of a voip-secret.key)');
  return key;
}
