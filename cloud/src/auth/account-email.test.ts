import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { SmtpSink, linkIn, type ReceivedMail } from '../testing/mail.ts';
import { orgFixture } from '../testing/fixtures.ts';

const PORTAL = 'https://portal.example';
const sink = new SmtpSink();
let t: TestCloud;
beforeAll(async () => {
  await sink.start(0);
  t = await startTestCloud({ smtpUrl: sink.url, publicUrl: PORTAL, mailQueue: { pollMs: 100, retryBaseMs: 100 } });
});
afterAll(async () => {
  await t?.stop();
  await sink.stop();
});

const fresh = (what: string) => `${what}-${Math.random().toString(36).slice(2)}@example.test`;
const bySubject = (re: RegExp) => (m: ReceivedMail) => re.test(m.parsed.subject ?? '');

async function register(email: string, password = 'correct horse battery') {
  const res = await t.post('/v1/auth/register', { body: { email, password } });
  expect(res.status).toBe(201);
  return {
    email,
    password,
    id: res.body.user.id as string,
    token: res.body.access_token as string,
    refresh: res.body.refresh_token as string,
  };
}

/** A WebSocket (the app's /v1/websocket or HA's /api/websocket: the same auth phase) past auth_ok. */
async function authenticatedSocket(path: string, token: string) {
  const ws = new WebSocket(`${t.url.replace('http', 'ws')}${path}`);
  const messages: any[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const authOk = new Promise<void>((resolve, reject) => {
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      messages.push(m);
      if (m.type === 'auth_required') ws.send(JSON.stringify({ type: 'auth', access_token: token }));
      else if (m.type === 'auth_ok') resolve();
      else if (m.type === 'auth_invalid' && messages.every((x) => x.type !== 'auth_ok')) reject(new Error(m.message));
    });
  });
  await authOk;
  return { messages, closed, open: () => ws.readyState === ws.OPEN, close: () => ws.close() };
}

/** Follows the portal link of the newest verification mail to `email`, as the portal page would. */
async function verifyFromMail(email: string) {
  const mail = await sink.waitFor(email, bySubject(/Confirm your e-mail address/));
  const link = linkIn(mail, `${PORTAL}/verify-email?token=`);
  return t.post('/v1/auth/verify-email', { body: { token: link.searchParams.get('token') } });
}

describe('verified addresses', () => {
  it('register → a verification mail → its link verifies the address, once; the token is 256-bit and stored hashed', async () => {
    const email = fresh('reg');
    const u = await register(email);
    expect((await t.get('/v1/account', { token: u.token })).body.email_verified).toBe(false);
    const mail = await sink.waitFor(email, bySubject(/Confirm your e-mail address/));
    expect(mail.parsed.html).toContain('Confirm my address');
    const token = linkIn(mail, `${PORTAL}/verify-email?token=`).searchParams.get('token') as string;
    expect(token).toMatch(/^shp_ev_[A-Za-z0-9_-]{43}$/);
    const stored = await t.sqlOne<{ token_hash: string; expires_at: string }>(
      'SELECT token_hash, expires_at FROM email_tokens WHERE user_id = ?',
      [u.id],
    );
    expect(stored?.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(Date.parse(stored!.expires_at) - Date.now()).toBeLessThanOrEqual(48 * 3600_000);

    const ok = await t.post('/v1/auth/verify-email', { body: { token } });
    expect(ok.status).toBe(200);
    expect((await t.get('/v1/account', { token: u.token })).body.email_verified).toBe(true);
    const again = await t.post('/v1/auth/verify-email', { body: { token } });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ message: 'token: invalid, expired or already used' });
    expect((await t.post('/v1/account/email/verification', { token: u.token })).status).toBe(409);
  });

  it('refuses an expired link and throttles resends (5 per hour, then 429 with Retry-After)', async () => {
    const email = fresh('exp');
    const u = await register(email);
    await sink.waitFor(email);
    await t.sql('UPDATE email_tokens SET expires_at = ? WHERE user_id = ?', [
      new Date(Date.now() - 1000).toISOString(),
      u.id,
    ]);
    expect((await verifyFromMail(email)).status).toBe(400);
    for (let i = 0; i < 4; i++)
      expect((await t.post('/v1/account/email/verification', { token: u.token })).status).toBe(202);
    const limited = await t.post('/v1/account/email/verification', { token: u.token });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'rate_limited' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('an e-mail change needs the password and makes the new address unverified until its own link is followed', async () => {
    const u = await register(fresh('old'));
    const wrong = await t.post('/v1/account/email', {
      token: u.token,
      body: { email: fresh('x') },
      headers: { 'x-account-verification': 'nope' },
    });
    expect(wrong.status).toBe(403);
    const next = fresh('new');
    const changed = await t.post('/v1/account/email', {
      token: u.token,
      body: { email: next.toUpperCase() },
      headers: { 'x-account-verification': u.password },
    });
    expect(changed.status).toBe(202);
    const account = (await t.get('/v1/account', { token: u.token })).body;
    expect([account.email, account.email_verified]).toEqual([next, false]);
    // The link sent to the old address does not verify the new one.
    expect((await verifyFromMail(u.email)).status).toBe(400);
    expect((await verifyFromMail(next)).status).toBe(200);
    expect((await t.get('/v1/account', { token: u.token })).body.email_verified).toBe(true);
    const taken = await t.post('/v1/account/email', {
      token: u.token,
      body: { email: (await register(fresh('taken'))).email },
      headers: { 'x-account-verification': u.password },
    });
    expect(taken.status).toBe(409);
  });

  it('invite by mail → accept on the link (after verifying)', async () => {
    const { admin, org } = await orgFixture(t);
    const email = fresh('invitee');
    const inv = await t.post(`/v1/organizations/${org.id}/invitations`, { token: admin.token, body: { email } });
    expect(inv.status).toBe(201);
    const mail = await sink.waitFor(email, bySubject(/invited you to/));
    const link = linkIn(mail, `${PORTAL}/invitations/`);
    expect(link.pathname).toBe(`/invitations/${inv.body.id}`);
    const token = link.searchParams.get('token') as string;
    const u = await register(email);
    expect((await t.post(`/v1/invitations/${token}/accept`, { token: u.token })).body).toEqual({
      error: 'email_not_verified',
    });
    expect((await verifyFromMail(email)).status).toBe(200);
    const accepted = await t.post(`/v1/invitations/${token}/accept`, { token: u.token });
    expect(accepted.status).toBe(200);
    expect(accepted.body.organization.id).toBe(org.id);
  });

  it('a transfer to an unregistered address: the recipient registers, cannot claim it until verified, then accepts; the sender hears the outcome', async () => {
    const sender = await t.user(fresh('sender'));
    const zone = (
      await t.post('/v1/zones', {
        token: sender.token,
        body: { name: 'Cabin', icon: 'mdi:home', latitude: 1, longitude: 2, radius: 50 },
      })
    ).body;
    const email = fresh('recipient');
    const tr = await t.post('/v1/transfers', {
      token: sender.token,
      body: { to_email: email, resource_type: 'zone', resource_id: String(zone.id), metadata: { name: 'Cabin' } },
    });
    expect(tr.status).toBe(201);
    const request = await sink.waitFor(email, bySubject(/wants to hand over a zone/));
    expect(request.parsed.text).toContain('"Cabin"');
    expect(linkIn(request, `${PORTAL}/transfers/`).pathname).toBe(`/transfers/${tr.body.id}`);

    const u = await register(email);
    expect((await t.get('/v1/transfers', { token: u.token })).body).toEqual([]);
    expect((await t.post(`/v1/transfers/${tr.body.id}/accept`, { token: u.token })).status).toBe(404);
    expect((await verifyFromMail(email)).status).toBe(200);
    expect((await t.post(`/v1/transfers/${tr.body.id}/accept`, { token: u.token })).status).toBe(200);
    expect((await t.get(`/v1/zones/${zone.id}`, { token: u.token })).body.user_id).toBe(u.id);
    const outcome = await sink.waitFor(sender.email, bySubject(/was accepted/));
    expect(outcome.parsed.text).toContain(email);
  });
});

describe('password reset', () => {
  it('answers the same for known and unknown addresses; the link sets a new password once and ends every session', async () => {
    const u = await register(fresh('reset'));
    const second = (
      await t.post('/v1/auth/token', { body: { grant_type: 'password', email: u.email, password: u.password } })
    ).body;
    const known = await t.post('/v1/auth/password-reset', { body: { email: u.email } });
    const unknown = await t.post('/v1/auth/password-reset', { body: { email: fresh('nobody') } });
    expect(known.status).toBe(202);
    expect([unknown.status, unknown.body]).toEqual([known.status, known.body]);

    const mail = await sink.waitFor(u.email, bySubject(/Reset your password/));
    const token = linkIn(mail, `${PORTAL}/reset-password?token=`).searchParams.get('token') as string;
    expect(token).toMatch(/^shp_pr_[A-Za-z0-9_-]{43}$/);
    const short = await t.post('/v1/auth/password-reset/confirm', { body: { token, password: 'short' } });
    expect(short.status).toBe(400);
    const done = await t.post('/v1/auth/password-reset/confirm', { body: { token, password: 'a brand new password' } });
    expect(done.status).toBe(200);

    // every session ended: access tokens at once, refresh tokens too
    expect((await t.get('/v1/account', { token: u.token })).status).toBe(401);
    expect((await t.get('/v1/account', { token: second.access_token })).status).toBe(401);
    expect(
      (await t.post('/v1/auth/token', { body: { grant_type: 'refresh_token', refresh_token: second.refresh_token } }))
        .status,
    ).toBe(401);
    expect(
      (await t.post('/v1/auth/token', { body: { grant_type: 'password', email: u.email, password: u.password } }))
        .status,
    ).toBe(401);
    const signedIn = await t.post('/v1/auth/token', {
      body: { grant_type: 'password', email: u.email, password: 'a brand new password' },
    });
    expect(signedIn.status).toBe(200);
    // the reset link reached the mailbox: the address is verified now
    expect((await t.get('/v1/account', { token: signedIn.body.access_token })).body.email_verified).toBe(true);
    // single use
    expect(
      (await t.post('/v1/auth/password-reset/confirm', { body: { token, password: 'yet another password' } })).status,
    ).toBe(400);
  });

  it('ends the open app and HA WebSockets of the account and revokes every refresh-token family', async () => {
    const u = await register(fresh('sockets'));
    const signIn = async () =>
      (await t.post('/v1/auth/token', { body: { grant_type: 'password', email: u.email, password: u.password } })).body;
    const [phone, laptop] = [await signIn(), await signIn()];
    const other = await register(fresh('bystander'));
    const sockets = [
      await authenticatedSocket('/v1/websocket', u.token),
      await authenticatedSocket('/api/websocket', phone.access_token),
      await authenticatedSocket('/v1/websocket', laptop.access_token),
    ];
    const bystander = await authenticatedSocket('/api/websocket', other.token);
    const families = async (userId: string) =>
      t.sql<{ family_id: string; revoked: number }>(
        `SELECT family_id, MIN(CASE WHEN revoked_at IS NULL THEN 0 ELSE 1 END) AS revoked
         FROM refresh_tokens WHERE user_id = ? GROUP BY family_id`,
        [userId],
      );
    expect((await families(u.id)).map((f) => Number(f.revoked))).toEqual([0, 0, 0]);

    expect((await t.post('/v1/auth/password-reset', { body: { email: u.email } })).status).toBe(202);
    const mail = await sink.waitFor(u.email, bySubject(/Reset your password/));
    const token = linkIn(mail, `${PORTAL}/reset-password?token=`).searchParams.get('token');
    expect(
      (await t.post('/v1/auth/password-reset/confirm', { body: { token, password: 'after the reset' } })).status,
    ).toBe(200);

    for (const socket of sockets) {
      expect(await socket.closed).toEqual({ code: 4001, reason: 'session revoked' });
      expect(socket.messages.at(-1)).toEqual({
        type: 'auth_invalid',
        message: 'session revoked: the password was reset',
      });
    }
    expect((await families(u.id)).map((f) => Number(f.revoked))).toEqual([1, 1, 1]);
    for (const refresh of [u.refresh, phone.refresh_token, laptop.refresh_token]) {
      const res = await t.post('/v1/auth/token', { body: { grant_type: 'refresh_token', refresh_token: refresh } });
      expect(res.status).toBe(401);
    }
    // another account's socket and sessions are untouched
    expect(bystander.open()).toBe(true);
    expect((await families(other.id)).map((f) => Number(f.revoked))).toEqual([0]);
    bystander.close();
  });

  it('is throttled per client address and e-mail (429 past 6 requests in 15 minutes, like sign-in failures), known or not', async () => {
    const email = fresh('flood');
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await t.post('/v1/auth/password-reset', { body: { email } })).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 202, 429]);
    // at most 3 reset mails per account per hour, whatever the answers
    const u = await register(fresh('mails'));
    for (let i = 0; i < 5; i++)
      expect((await t.post('/v1/auth/password-reset', { body: { email: u.email } })).status).toBe(202);
    expect(
      (await t.sql('SELECT id FROM email_tokens WHERE user_id = ? AND purpose = ?', [u.id, 'password_reset'])).length,
    ).toBe(3);
  });
});

describe('optional mails', () => {
  it('a sign-in from a new device is mailed when the account asked for it, a known device is not', async () => {
    const u = await register(fresh('notice'));
    const signIn = (ua: string) =>
      t.post('/v1/auth/token', {
        body: { grant_type: 'password', email: u.email, password: u.password },
        headers: { 'user-agent': ua },
      });
    expect((await signIn('Before/1.0')).status).toBe(200); // not asked for yet: no mail
    const set = await t.put('/v1/account/notifications', { token: u.token, body: { notify_new_sign_in: true } });
    expect(set.body).toEqual({ notify_new_sign_in: true });
    expect((await t.get('/v1/account', { token: u.token })).body.notify_new_sign_in).toBe(true);
    expect((await signIn('Before/1.0')).status).toBe(200); // a device seen before
    expect((await signIn('Stranger/9.9')).status).toBe(200);
    const mail = await sink.waitFor(u.email, bySubject(/New sign-in/));
    expect(mail.parsed.text).toContain('Stranger/9.9');
    await new Promise((r) => setTimeout(r, 500));
    expect(
      sink.received.filter((m) => m.to.includes(u.email) && /New sign-in/.test(m.parsed.subject ?? '')),
    ).toHaveLength(1);
  });

  it('enabling and disabling TOTP are mailed', async () => {
    const u = await t.user(fresh('mfa'));
    const pw = { 'x-account-verification': u.password };
    const { secret } = (await t.post('/v1/account/mfa/totp', { token: u.token, headers: pw })).body;
    const { TOTP, Secret } = await import('otpauth');
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate();
    expect((await t.post('/v1/account/mfa/totp/confirm', { token: u.token, body: { code } })).status).toBe(200);
    expect((await sink.waitFor(u.email, bySubject(/Two-step sign-in enabled/))).parsed.text).toContain(u.email);
    const backup = (await t.post('/v1/account/mfa/backup-codes', { token: u.token, headers: pw })).body.codes;
    const disable = await t.post('/v1/account/mfa/totp/disable', {
      token: u.token,
      headers: pw,
      body: { code: backup[0] },
    });
    expect(disable.status).toBe(200);
    const disabled = await sink.waitFor(u.email, bySubject(/Two-step sign-in disabled/));
    expect(disabled.parsed.text).toContain(`was disabled on your account ${u.email}`);
  });
});
