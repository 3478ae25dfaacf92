import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { acceptCode } from './totp.ts';

/** RFC 6238 / RFC 4226 written out here, independently of the library the cloud uses. */
function hotp(key: Buffer, counter: number, digits: number, algorithm = 'sha1'): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, key).update(msg).digest();
  const offset = mac[mac.length - 1] & 0xf;
  const bin = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** digits;
  return String(bin).padStart(digits, '0');
}
const totpAt = (key: Buffer, unixSeconds: number, digits = 6) => hotp(key, Math.floor(unixSeconds / 30), digits);

function base32Decode(s: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of s.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const bytes = bits.match(/.{8}/g) ?? [];
  return Buffer.from(bytes.map((b) => parseInt(b, 2)));
}
const base32Encode = (buf: Buffer) => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  const bits = [...buf].map((b) => b.toString(2).padStart(8, '0')).join('');
  return (bits.match(/.{1,5}/g) ?? []).map((c) => alphabet[parseInt(c.padEnd(5, '0'), 2)]).join('');
};

describe('TOTP codes (RFC 6238)', () => {
  it('the independent implementation reproduces the RFC 6238 SHA-1 test vectors', () => {
    const key = Buffer.from('12345678901234567890');
    expect([59, 1111111109, 1111111111, 1234567890, 2000000000, 20000000000].map((t) => totpAt(key, t, 8))).toEqual([
      '94287082',
      '07081804',
      '14050471',
      '89005924',
      '69279037',
      '65353130',
    ]);
  });

  it('accepts the current step and ±1 (clock skew), refuses ±2, other codes and a step already used', () => {
    const key = Buffer.from('12345678901234567890');
    const secret = base32Encode(key);
    const now = 1234567890_000;
    const t = now / 1000;
    const step = Math.floor(t / 30);
    expect(acceptCode(secret, totpAt(key, t), null, now)).toBe(step);
    expect(acceptCode(secret, totpAt(key, t - 30), null, now)).toBe(step - 1);
    expect(acceptCode(secret, totpAt(key, t + 30), null, now)).toBe(step + 1);
    expect(acceptCode(secret, totpAt(key, t - 60), null, now)).toBeNull();
    expect(acceptCode(secret, totpAt(key, t + 60), null, now)).toBeNull();
    expect(acceptCode(secret, totpAt(key, t), step, now)).toBeNull(); // replay
    expect(acceptCode(secret, totpAt(key, t - 30), step, now)).toBeNull(); // older than the last one used
    expect(acceptCode(secret, '12345', null, now)).toBeNull();
  });
});

describe('TOTP sign-in', () => {
  let t: TestCloud;
  beforeAll(async () => {
    t = await startTestCloud();
  });
  afterAll(async () => {
    await t.stop();
  });
  const grant = (email: string, password: string, mfa_code?: string) =>
    t.post('/v1/auth/token', {
      body: { grant_type: 'password', email, password, ...(mfa_code === undefined ? {} : { mfa_code }) },
    });

  it('enrol → URI + SVG, confirm with a first code; sign-in then needs a TOTP code or a backup code, each once; disable needs password + code', async () => {
    const u = await t.user();
    const pw = { 'x-account-verification': u.password };
    expect(
      (await t.post('/v1/account/mfa/totp', { token: u.token, headers: { 'x-account-verification': 'wrong' } })).status,
    ).toBe(403);
    const enrol = await t.post('/v1/account/mfa/totp', { token: u.token, headers: pw });
    expect(enrol.status).toBe(200);
    const uri = new URL(enrol.body.otpauth_uri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(uri.searchParams.get('secret')).toBe(enrol.body.secret);
    expect([uri.searchParams.get('algorithm'), uri.searchParams.get('digits'), uri.searchParams.get('period')]).toEqual(
      ['SHA1', '6', '30'],
    );
    expect(enrol.body.qr_svg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
    const key = base32Decode(enrol.body.secret);
    expect(key.length).toBe(20);

    // not enabled until confirmed
    expect((await grant(u.email, u.password)).status).toBe(200);
    expect(
      (
        await t.post('/v1/account/mfa/totp/confirm', {
          token: u.token,
          body: { code: '000000' === totpAt(key, Date.now() / 1000) ? '111111' : '000000' },
        })
      ).status,
    ).toBe(400);
    // a step back (clock skew) still confirms
    const confirmed = await t.post('/v1/account/mfa/totp/confirm', {
      token: u.token,
      body: { code: totpAt(key, Date.now() / 1000 - 30) },
    });
    expect(confirmed.status).toBe(200);
    expect((await t.get('/v1/account', { token: u.token })).body.mfa_enabled).toBe(true);

    const challenge = await grant(u.email, u.password);
    expect(challenge.status).toBe(401);
    expect(challenge.body).toEqual({ error: 'mfa_required' });
    const code = totpAt(key, Date.now() / 1000);
    const ok = await grant(u.email, u.password, code);
    expect(ok.status).toBe(200);
    const replay = await grant(u.email, u.password, code);
    expect(replay.status).toBe(401);
    expect(replay.body).toEqual({ error: 'invalid_mfa_code' });

    const backup = (await t.post('/v1/account/mfa/backup-codes', { token: u.token, headers: pw })).body
      .codes as string[];
    expect((await grant(u.email, u.password, backup[0])).status).toBe(200);
    expect((await grant(u.email, u.password, backup[0])).status).toBe(401);

    expect(
      (
        await t.post('/v1/account/mfa/totp/disable', {
          token: u.token,
          headers: { 'x-account-verification': 'wrong' },
          body: { code: backup[1] },
        })
      ).status,
    ).toBe(403);
    expect(
      (await t.post('/v1/account/mfa/totp/disable', { token: u.token, headers: pw, body: { code: backup[0] } })).status,
    ).toBe(400);
    expect(
      (await t.post('/v1/account/mfa/totp/disable', { token: u.token, headers: pw, body: { code: backup[1] } })).status,
    ).toBe(200);
    expect((await grant(u.email, u.password)).status).toBe(200);
  });

  it('throttles wrong codes like wrong passwords (429 after 5 failures from one address)', async () => {
    const u = await t.user();
    const pw = { 'x-account-verification': u.password };
    const { secret } = (await t.post('/v1/account/mfa/totp', { token: u.token, headers: pw })).body;
    const key = base32Decode(secret);
    expect(
      (await t.post('/v1/account/mfa/totp/confirm', { token: u.token, body: { code: totpAt(key, Date.now() / 1000) } }))
        .status,
    ).toBe(200);
    const wrong = String((Number(totpAt(key, Date.now() / 1000)) + 500_000) % 1_000_000).padStart(6, '0');
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await grant(u.email, u.password, wrong)).status);
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.at(-1)).toBe(429);
  });

  it('throttles wrong codes at confirm too: past the 5 free failures and a sixth, 429', async () => {
    const u = await t.user();
    const pw = { 'x-account-verification': u.password };
    const { secret } = (await t.post('/v1/account/mfa/totp', { token: u.token, headers: pw })).body;
    const key = base32Decode(secret);
    const wrong = String((Number(totpAt(key, Date.now() / 1000)) + 500_000) % 1_000_000).padStart(6, '0');
    const confirm = async (code: string) =>
      (await t.post('/v1/account/mfa/totp/confirm', { token: u.token, body: { code } })).status;
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push(await confirm(wrong));
    // 5 free failures; the sixth locks the pair for 1 s (throttle.ts)
    expect(statuses).toEqual([400, 400, 400, 400, 400, 400, 429]);
    expect((await t.get('/v1/account', { token: u.token })).body.mfa_enabled).toBe(false);
  });
});
