import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCloudArgs } from './config.ts';
import { startTestCloud, type TestCloud } from './testing/harness.ts';
import { SecretBox, parseSecretKey } from './voip/secret-box.ts';
import { voipKeyFile } from './voip/routes.ts';

const clouds: TestCloud[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of clouds.splice(0).reverse()) await c.stop();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function signingKeyText(): Promise<string> {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  return JSON.stringify(await exportJWK(privateKey));
}

describe('keys shared by replicas from the environment', () => {
  it('parses JWT_SIGNING_KEY and VOIP_SECRET_KEY, and says what is wrong with a bad one', async () => {
    const jwk = await signingKeyText();
    const voip = randomBytes(32).toString('base64');
    const config = parseCloudArgs([], { JWT_SIGNING_KEY: jwk, VOIP_SECRET_KEY: voip });
    expect(config.jwtSigningKey).toEqual(JSON.parse(jwk));
    expect(config.voipSecretKey?.equals(Buffer.from(voip, 'base64'))).toBe(true);
    expect(() => parseCloudArgs([], { JWT_SIGNING_KEY: 'nope' })).toThrow(/^JWT_SIGNING_KEY must be a JSON Web Key/);
    const { d: _d, ...publicOnly } = JSON.parse(jwk);
    expect(() => parseCloudArgs([], { JWT_SIGNING_KEY: JSON.stringify(publicOnly) })).toThrow(
      /^JWT_SIGNING_KEY must be an Ed25519 private key/,
    );
    expect(() => parseCloudArgs([], { VOIP_SECRET_KEY: randomBytes(16).toString('base64') })).toThrow(
      /^VOIP_SECRET_KEY must be 32 bytes in base64/,
    );
  });

  it("lets two replicas with data dirs of their own accept each other's tokens and read each other's secrets, with no key files", async () => {
    const jwtSigningKey = JSON.parse(await signingKeyText());
    const voipSecretKey = parseSecretKey(randomBytes(32).toString('base64'));
    const a = await startTestCloud({ jwtSigningKey, voipSecretKey });
    clouds.push(a);
    const otherDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-replica-'));
    dirs.push(otherDir);
    // the same database as A (its PostgreSQL schema, or its SQLite file), a data dir of its own
    const b = await startTestCloud(
      { databaseUrl: a.cloud.config.databaseUrl ?? path.join(a.dataDir, 'cloud.db'), jwtSigningKey, voipSecretKey },
      { dataDir: otherDir },
    );
    clouds.push(b);

    const u = await a.user();
    expect((await b.get('/v1/account', { token: u.token })).body.id).toBe(u.id);
    const sip = {
      name: 'Front door',
      username: 'door',
      password: 'sip-pass-123',
      server: 'sip.example.com',
      port: 5060,
      transport: 'udp',
    };
    const created = await a.post('/v1/voip-accounts', { token: u.token, body: sip });
    expect(created.status).toBe(201);
    expect(await b.cloud.services.database.one('SELECT COUNT(*) AS n FROM voip_accounts')).toEqual({ n: 1 });
    const stored = (await b.sqlOne<{ password_enc: string }>('SELECT password_enc FROM voip_accounts WHERE id = ?', [
      created.body.id,
    ]))!.password_enc;
    expect(new SecretBox('/nonexistent', voipSecretKey).decrypt(stored)).toBe(sip.password);
    for (const dir of [a.dataDir, otherDir]) {
      expect(fs.existsSync(path.join(dir, 'jwt-signing-key.json'))).toBe(false);
      expect(fs.existsSync(voipKeyFile(dir))).toBe(false);
    }
  });
});
