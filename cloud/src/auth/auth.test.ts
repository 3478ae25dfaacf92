import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtectedHeader } from 'jose';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

describe('register', () => {
  it('creates an account and returns the token shape', async () => {
    const res = await t.post('/v1/auth/register', {
      body: { email: 'Alice@Example.test', password: 'password123', name: 'Alice' },
    });
    expect(res.status).toBe(201);
    expect(res.body.user).toEqual({ id: expect.any(String), email: 'alice@example.test', name: 'Alice' });
    expect(res.body.token_type).toBe('Bearer');
    expect(res.body.expires_in).toBe(900);
    expect(res.body.refresh_token).toMatch(/^shp_rt_/);
    expect(decodeProtectedHeader(res.body.access_token).alg).toBe('EdDSA');
  });
  it('refuses a duplicate e-mail with 409 {message}, case-insensitively', async () => {
    await t.user('dup@example.test');
    const res = await t.post('/v1/auth/register', { body: { email: 'DUP@example.test', password: 'password123' } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: 'email already registered' });
  });
  it('validates e-mail and password length with 400 {message} naming the field', async () => {
    const short = await t.post('/v1/auth/register', { body: { email: 'x@example.test', password: 'short' } });
    expect(short.status).toBe(400);
    expect(short.body.message).toMatch(/^password: /);
    const bad = await t.post('/v1/auth/register', { body: { email: 'not-an-email', password: 'password123' } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^email: /);
  });
});

describe('password grant', () => {
  it('issues tokens for valid credentials and 401 {error} otherwise', async () => {
    const u = await t.user('grant@example.test', 'password123');
    const ok = await t.post('/v1/auth/token', {
      body: { grant_type: 'password', email: 'GRANT@example.test', password: 'password123' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.user.id).toBe(u.id);
    const wrong = await t.post('/v1/auth/token', {
      body: { grant_type: 'password', email: u.email, password: 'nope-nope' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({ error: 'invalid_grant' });
    const unknown = await t.post('/v1/auth/token', {
      body: { grant_type: 'password', email: 'ghost@example.test', password: 'nope-nope' },
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual({ error: 'invalid_grant' });
  });
  it('rejects an unknown grant type with 400', async () => {
    const res = await t.post('/v1/auth/token', { body: { grant_type: 'client_credentials' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('grant_type');
  });
  it('slows down repeated failures for one account with 429 and Retry-After', async () => {
    const u = await t.user('throttle@example.test', 'password123');
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 8; i++) {
      const res = await t.post('/v1/auth/token', {
        body: { grant_type: 'password', email: u.email, password: `wrong-${i}` },
      });
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        expect(res.body).toEqual({ error: 'rate_limited' });
      }
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    // Even the right password waits while the account is locked.
    const right = await t.post('/v1/auth/token', {
      body: { grant_type: 'password', email: u.email, password: 'password123' },
    });
    expect(right.status).toBe(429);
  });
});

describe('refresh grant', () => {
  it('rotates: the new refresh token works, a used one is dead and kills its family', async () => {
    const u = await t.user();
    const first = await t.post('/v1/auth/token', { body: { grant_type: 'refresh_token', refresh_token: u.refresh } });
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).not.toBe(u.refresh);
    const me = await t.get('/v1/account', { token: first.body.access_token });
    expect(me.body.id).toBe(u.id);
    const replay = await t.post('/v1/auth/token', { body: { grant_type: 'refresh_token', refresh_token: u.refresh } });
    expect(replay.status).toBe(401);
    expect(replay.body).toEqual({ error: 'invalid_grant' });
    // Reuse of a rotated token is treated as theft: the descendant is revoked too.
    const descendant = await t.post('/v1/auth/token', {
      body: { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
    });
    expect(descendant.status).toBe(401);
  });
  it('refuses garbage', async () => {
    const res = await t.post('/v1/auth/token', { body: { grant_type: 'refresh_token', refresh_token: 'shp_rt_nope' } });
    expect(res.status).toBe(401);
  });
});

describe('bearer authentication', () => {
  it('answers 401 {error} without, with a malformed, or with a forged token', async () => {
    for (const authorization of [
      undefined,
      'Basic abc',
      'Bearer',
      'Bearer not.a.jwt',
      'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
    ]) {
      const res = await t.get('/v1/account', { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
  });
  it('GET /v1/account returns the contract shape', async () => {
    const u = await t.user('acct@example.test');
    const res = await t.get('/v1/account', { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: u.id,
      email: 'acct@example.test',
      name: 'acct',
      app_account_token: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email_verified: true,
      mfa_enabled: false,
      notify_new_sign_in: false,
      organizations: [],
    });
  });
});

describe('personal access tokens', () => {
  it('are shown once, listed without the secret, usable as bearer, and dead at once when revoked', async () => {
    const u = await t.user();
    const created = await t.post('/v1/account/tokens', { token: u.token, body: { name: 'ci' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'ci',
      token: expect.stringMatching(/^shp_pat_/),
      created_at: expect.any(String),
    });
    const pat = created.body.token as string;
    const list = await t.get('/v1/account/tokens', { token: u.token });
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).not.toHaveProperty('token');
    expect(JSON.stringify(list.body)).not.toContain(pat);
    expect((await t.get('/v1/account', { token: pat })).body.id).toBe(u.id);
    const del = await t.delete(`/v1/account/tokens/${created.body.id}`, { token: u.token });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: 'token revoked' });
    expect((await t.get('/v1/account', { token: pat })).status).toBe(401);
    expect((await t.delete(`/v1/account/tokens/${created.body.id}`, { token: u.token })).status).toBe(404);
  });
  it('record when they were last used, at most once a minute (not a write per request)', async () => {
    const u = await t.user();
    const created = await t.post('/v1/account/tokens', { token: u.token, body: { name: 'poller' } });
    const lastUsed = async () =>
      (await t.get('/v1/account/tokens', { token: u.token })).body[0].last_used_at as string | null;
    expect(await lastUsed()).toBeNull();
    expect((await t.get('/v1/account', { token: created.body.token })).status).toBe(200);
    const first = await lastUsed();
    expect(Date.parse(first!)).toBeGreaterThan(Date.now() - 10_000);
    expect((await t.get('/v1/account', { token: created.body.token })).status).toBe(200);
    expect(await lastUsed()).toBe(first);
    const hourAgo = new Date(Date.now() - 3600_000).toISOString();
    await t.cloud.database.execute('UPDATE personal_access_tokens SET last_used_at = ? WHERE id = ?', [
      hourAgo,
      created.body.id,
    ]);
    expect((await t.get('/v1/account', { token: created.body.token })).status).toBe(200);
    expect(Date.parse((await lastUsed())!)).toBeGreaterThan(Date.parse(hourAgo));
  });
  it("cannot revoke another user's token", async () => {
    const a = await t.user();
    const b = await t.user();
    const created = await t.post('/v1/account/tokens', { token: a.token, body: { name: 'mine' } });
    expect((await t.delete(`/v1/account/tokens/${created.body.id}`, { token: b.token })).status).toBe(404);
    expect((await t.get('/v1/account', { token: created.body.token })).status).toBe(200);
  });
  it('rejects an empty name', async () => {
    const u = await t.user();
    const res = await t.post('/v1/account/tokens', { token: u.token, body: { name: '  ' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^name: /);
  });
});

describe('MFA backup codes', () => {
  it('needs the current password in X-Account-Verification', async () => {
    const u = await t.user(undefined, 'password123');
    expect((await t.post('/v1/account/mfa/backup-codes', { token: u.token })).status).toBe(403);
    const wrong = await t.post('/v1/account/mfa/backup-codes', {
      token: u.token,
      headers: { 'x-account-verification': 'nope' },
    });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toEqual({ error: 'verification_failed' });
    expect((await t.post('/v1/account/mfa/backup-codes', {})).status).toBe(401);
  });
  it('returns exactly 10 distinct codes, each usable once at login, and a new set replaces the old', async () => {
    const u = await t.user(undefined, 'password123');
    const res = await t.post('/v1/account/mfa/backup-codes', {
      token: u.token,
      headers: { 'x-account-verification': 'password123' },
    });
    expect(res.status).toBe(200);
    const codes = res.body.codes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const login = (mfa_code: string) =>
      t.post('/v1/auth/token', { body: { grant_type: 'password', email: u.email, password: 'password123', mfa_code } });
    expect((await login(codes[0])).status).toBe(200);
    expect((await login(codes[0])).status).toBe(401);
    const again = await t.post('/v1/account/mfa/backup-codes', {
      token: u.token,
      headers: { 'x-account-verification': 'password123' },
    });
    expect((await login(codes[1])).status).toBe(401);
    expect((await login(again.body.codes[1].toUpperCase())).status).toBe(200);
  });
});
