import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { makeOrg, share } from '../testing/fixtures.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

const zoneBody = { name: 'Home', icon: 'mdi:home', latitude: 1, longitude: 2, radius: 50 };
const config = { views: [{ title: 'v', cards: [] }] };
const DAY = 24 * 3600 * 1000;

async function zoneOf(u: { token: string }, org?: string) {
  return (await t.post('/v1/zones', { token: u.token, org, body: zoneBody })).body;
}
const offer = (from: { token: string }, to: string, type: string, id: string | number, extra: object = {}) =>
  t.post('/v1/transfers', {
    token: from.token,
    body: { to_email: to, resource_type: type, resource_id: String(id), ...extra },
  });

describe('POST /v1/transfers', () => {
  it('creates a pending transfer that expires in 7 days', async () => {
    const a = await t.user();
    const b = await t.user();
    const zone = await zoneOf(a);
    const before = Date.now();
    const res = await offer(a, b.email.toUpperCase(), 'zone', zone.id, { metadata: { note: 'for you' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      from_user_id: a.id,
      to_email: b.email,
      resource_type: 'zone',
      resource_id: String(zone.id),
      status: 'pending',
      metadata: { note: 'for you' },
      created_at: expect.any(String),
      expires_at: expect.any(String),
      responded_at: null,
      direction: 'sent',
    });
    const ttl = Date.parse(res.body.expires_at) - Date.parse(res.body.created_at);
    expect(ttl).toBe(7 * DAY);
    expect(Date.parse(res.body.created_at)).toBeGreaterThanOrEqual(before - 1000);
    // one pending transfer per resource
    const again = await offer(a, b.email, 'zone', zone.id);
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/already pending/);
  });

  it('answers 400 {message} for resources the caller does not own, unknown ones, unregistered types and self-transfers', async () => {
    const a = await t.user();
    const b = await t.user();
    const bZone = await zoneOf(b);
    const notOwned = await offer(a, b.email, 'zone', bZone.id);
    expect(notOwned.status).toBe(400);
    expect(notOwned.body).toEqual({ message: 'resource not found or not owned' });
    expect((await offer(a, b.email, 'zone', 999999)).body).toEqual({ message: 'resource not found or not owned' });
    expect((await offer(a, b.email, 'zone', 'abc')).body).toEqual({ message: 'resource not found or not owned' });
    expect((await offer(a, b.email, 'physical_device', 1)).body).toEqual({
      message: 'resource not found or not owned',
    });
    expect((await offer(a, b.email, 'organization', 'x')).status).toBe(400);
    const myZone = await zoneOf(a);
    const self = await offer(a, a.email, 'zone', myZone.id);
    expect(self.status).toBe(400);
    expect(self.body.message).toMatch(/^to_email: .*yourself/);
  });

  it("requires manage rights: an org member cannot transfer another member's org zone, the admin can", async () => {
    const admin = await t.user();
    const member = await t.user();
    const org = await makeOrg(t, admin, [member]);
    const zone = await zoneOf(admin, org);
    expect((await offer(member, admin.email, 'zone', zone.id)).status).toBe(400);
    const memberZone = await zoneOf(member, org);
    const byAdmin = await offer(admin, member.email, 'zone', memberZone.id);
    expect(byAdmin.status).toBe(201);
  });

  it('validates the body with 400 {message} naming the field, and needs auth', async () => {
    const a = await t.user();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ to_email: 'not-mail', resource_type: 'zone', resource_id: '1' }, /^to_email: /],
      [{ resource_type: 'zone', resource_id: '1' }, /^to_email: /],
      [{ to_email: 'b@example.test', resource_type: 'car', resource_id: '1' }, /^resource_type: /],
      [{ to_email: 'b@example.test', resource_type: 'zone', resource_id: '' }, /^resource_id: /],
      [{ to_email: 'b@example.test', resource_type: 'zone', resource_id: 1 }, /^resource_id: /],
      [{ to_email: 'b@example.test', resource_type: 'zone', resource_id: '1', metadata: 'x' }, /^metadata: /],
    ];
    for (const [body, message] of cases) {
      const res = await t.post('/v1/transfers', { token: a.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    const noAuth = await t.post('/v1/transfers', {
      body: { to_email: 'b@example.test', resource_type: 'zone', resource_id: '1' },
    });
    expect(noAuth.status).toBe(401);
    expect(noAuth.body).toEqual({ error: 'unauthorized' });
    expect((await t.get('/v1/transfers')).status).toBe(401);
    expect((await t.post('/v1/transfers/1/accept')).status).toBe(401);
    expect((await t.post('/v1/transfers/1/decline')).status).toBe(401);
    expect((await t.post('/v1/transfers/1/cancel')).body).toEqual({ error: 'unauthorized' });
  });
});

describe('lifecycle', () => {
  it('accept moves an org zone to the recipient as a personal zone', async () => {
    const a = await t.user();
    const b = await t.user();
    const org = await makeOrg(t, a);
    const zone = await zoneOf(a, org);
    const tr = (await offer(a, b.email, 'zone', zone.id)).body;

    const received = await t.get('/v1/transfers', { token: b.token });
    expect(received.status).toBe(200);
    expect(received.body).toEqual([{ ...tr, direction: 'received' }]);
    expect((await t.get('/v1/transfers', { token: a.token })).body).toEqual([tr]);

    const senderAccept = await t.post(`/v1/transfers/${tr.id}/accept`, { token: a.token });
    expect(senderAccept.status).toBe(403);
    expect(senderAccept.body).toEqual({ error: expect.stringMatching(/recipient/) });

    const accepted = await t.post(`/v1/transfers/${tr.id}/accept`, { token: b.token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      id: tr.id,
      status: 'accepted',
      direction: 'received',
      responded_at: expect.any(String),
    });

    const bZones = (await t.get('/v1/zones', { token: b.token })).body;
    expect(bZones).toEqual([expect.objectContaining({ id: zone.id, user_id: b.id, org_id: null, name: 'Home' })]);
    expect((await t.get('/v1/zones', { token: a.token, org })).body).toEqual([]);
    expect((await t.get(`/v1/zones/${zone.id}`, { token: a.token, org })).status).toBe(404);

    const twice = await t.post(`/v1/transfers/${tr.id}/accept`, { token: b.token });
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual({ message: 'transfer is accepted' });
    expect((await t.post(`/v1/transfers/${tr.id}/cancel`, { token: a.token })).status).toBe(409);
    // the former owner can no longer offer it
    expect((await offer(a, b.email, 'zone', zone.id)).status).toBe(400);
  });

  it('accept moves a dashboard and drops its old shares; a name clash answers 409 and changes nothing', async () => {
    const a = await t.user();
    const b = await t.user();
    const viewer = await t.user();
    const org = await makeOrg(t, a, [viewer]);
    const dash = (await t.put('/v1/ui-dashboard', { token: a.token, body: { name: 'home', config } })).body;
    await share(t, org, 'dashboard', dash.id, { view: true }, a.id);
    const mine = (await t.put('/v1/ui-dashboard', { token: b.token, body: { name: 'home', config } })).body;

    const tr = (await offer(a, b.email, 'ui_dashboard', dash.id)).body;
    const clash = await t.post(`/v1/transfers/${tr.id}/accept`, { token: b.token });
    expect(clash.status).toBe(409);
    expect(clash.body.message).toMatch(/already have a dashboard named "home"/);
    expect((await t.get(`/v1/ui-dashboard/${dash.id}`, { token: a.token })).body.user_id).toBe(a.id);
    expect((await t.get('/v1/transfers', { token: b.token })).body[0].status).toBe('pending');

    await t.delete(`/v1/ui-dashboard/${mine.id}`, { token: b.token });
    const ok = await t.post(`/v1/transfers/${tr.id}/accept`, { token: b.token });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('accepted');
    const got = await t.get(`/v1/ui-dashboard/${dash.id}`, { token: b.token });
    expect(got.body).toMatchObject({ id: dash.id, user_id: b.id, org_id: null, config });
    expect((await t.get('/v1/ui-dashboard', { token: viewer.token, org })).body).toEqual([]);
    expect((await t.get(`/v1/ui-dashboard/${dash.id}`, { token: a.token })).status).toBe(404);
  });

  it('decline (recipient only) leaves the resource with the sender', async () => {
    const a = await t.user();
    const b = await t.user();
    const zone = await zoneOf(a);
    const tr = (await offer(a, b.email, 'zone', zone.id)).body;
    expect((await t.post(`/v1/transfers/${tr.id}/decline`, { token: a.token })).status).toBe(403);
    const declined = await t.post(`/v1/transfers/${tr.id}/decline`, { token: b.token });
    expect(declined.status).toBe(200);
    expect(declined.body).toMatchObject({ status: 'declined', responded_at: expect.any(String) });
    expect((await t.get(`/v1/zones/${zone.id}`, { token: a.token })).body.user_id).toBe(a.id);
    expect((await t.post(`/v1/transfers/${tr.id}/accept`, { token: b.token })).body).toEqual({
      message: 'transfer is declined',
    });
    // a new offer is possible once the old one is settled
    expect((await offer(a, b.email, 'zone', zone.id)).status).toBe(201);
  });

  it('cancel (sender only) stops the recipient from accepting', async () => {
    const a = await t.user();
    const b = await t.user();
    const zone = await zoneOf(a);
    const tr = (await offer(a, b.email, 'zone', zone.id)).body;
    const byRecipient = await t.post(`/v1/transfers/${tr.id}/cancel`, { token: b.token });
    expect(byRecipient.status).toBe(403);
    expect(byRecipient.body).toEqual({ error: 'only the sender can cancel a transfer' });
    const cancelled = await t.post(`/v1/transfers/${tr.id}/cancel`, { token: a.token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', direction: 'sent' });
    const late = await t.post(`/v1/transfers/${tr.id}/accept`, { token: b.token });
    expect(late.status).toBe(409);
    expect(late.body).toEqual({ message: 'transfer is cancelled' });
    expect((await t.get(`/v1/zones/${zone.id}`, { token: a.token })).body.user_id).toBe(a.id);
  });

  it('expires after expires_at: listed as expired and no longer actionable (409)', async () => {
    const a = await t.user();
    const b = await t.user();
    const zone = await zoneOf(a);
    const tr = (await offer(a, b.email, 'zone', zone.id)).body;
    await t.sql('UPDATE transfers SET expires_at = ? WHERE id = ?', [new Date(Date.now() - 1000).toISOString(), tr.id]);
    const list = await t.get('/v1/transfers', { token: b.token });
    expect(list.body.find((x: any) => x.id === tr.id).status).toBe('expired');
    const accept = await t.post(`/v1/transfers/${tr.id}/accept`, { token: b.token });
    expect(accept.status).toBe(409);
    expect(accept.body).toEqual({ message: 'transfer is expired' });
    expect((await t.post(`/v1/transfers/${tr.id}/decline`, { token: b.token })).status).toBe(409);
    expect((await t.post(`/v1/transfers/${tr.id}/cancel`, { token: a.token })).status).toBe(409);
    expect((await t.get(`/v1/zones/${zone.id}`, { token: a.token })).body.user_id).toBe(a.id);
    // an expired offer does not block a new one
    expect((await offer(a, b.email, 'zone', zone.id)).status).toBe(201);
  });

  it('re-checks ownership at accept: a resource gone meanwhile cancels the transfer with 409', async () => {
    const a = await t.user();
    const b = await t.user();
    const zone = await zoneOf(a);
    const tr = (await offer(a, b.email, 'zone', zone.id)).body;
    await t.delete(`/v1/zones/${zone.id}`, { token: a.token });
    const res = await t.post(`/v1/transfers/${tr.id}/accept`, { token: b.token });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/no longer owns/);
    expect((await t.get('/v1/transfers', { token: a.token })).body[0].status).toBe('cancelled');
  });

  it('hides transfers from third parties (404) and answers 404 {message} for unknown ids', async () => {
    const a = await t.user();
    const b = await t.user();
    const c = await t.user();
    const zone = await zoneOf(a);
    const tr = (await offer(a, b.email, 'zone', zone.id)).body;
    for (const action of ['accept', 'decline', 'cancel']) {
      const res = await t.post(`/v1/transfers/${tr.id}/${action}`, { token: c.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'transfer not found' });
      expect((await t.post(`/v1/transfers/999999/${action}`, { token: b.token })).status).toBe(404);
      expect((await t.post(`/v1/transfers/abc/${action}`, { token: b.token })).status).toBe(404);
    }
    expect((await t.get('/v1/transfers', { token: c.token })).body).toEqual([]);
  });
});

describe('who may claim a transfer: the account whose verified address it was sent to', () => {
  it('an account with that address unverified neither sees nor claims it; once verified, it does', async () => {
    const a = await t.user();
    const zone = await zoneOf(a);
    const address = `late-${Math.random().toString(36).slice(2)}@example.test`;
    const tr = (await offer(a, address, 'zone', zone.id)).body;
    const late = await t.user(address.toUpperCase(), undefined, { verified: false });

    expect((await t.get('/v1/transfers', { token: late.token })).body).toEqual([]);
    for (const action of ['accept', 'decline']) {
      const res = await t.post(`/v1/transfers/${tr.id}/${action}`, { token: late.token });
      expect(res.status, action).toBe(404);
      expect(res.body).toEqual({ message: 'transfer not found' });
    }
    expect((await t.get(`/v1/zones/${zone.id}`, { token: a.token })).body.user_id).toBe(a.id);
    expect((await t.get('/v1/transfers', { token: a.token })).body).toEqual([tr]);

    await t.sql('UPDATE users SET email_verified = 1 WHERE id = ?', [late.id]);
    expect((await t.get('/v1/transfers', { token: late.token })).body.map((x: any) => [x.id, x.direction])).toEqual([
      [tr.id, 'received'],
    ]);
    const accepted = await t.post(`/v1/transfers/${tr.id}/accept`, { token: late.token });
    expect(accepted.status).toBe(200);
    expect((await t.get(`/v1/zones/${zone.id}`, { token: late.token })).body.user_id).toBe(late.id);
  });

  it('a verified account matches case-insensitively, whatever the case it registered or is stored with', async () => {
    const a = await t.user();
    const b = await t.user(`Mixed.Case-${Math.random().toString(36).slice(2)}@Example.test`);
    const legacy = await t.user();
    // a row written before addresses were lower-cased on the way in
    await t.sql('UPDATE users SET email = ? WHERE id = ?', [legacy.email.toUpperCase(), legacy.id]);
    for (const [recipient, address] of [
      [b, b.email.toUpperCase()],
      [legacy, legacy.email],
    ] as const) {
      const zone = await zoneOf(a);
      const tr = (await offer(a, address, 'zone', zone.id)).body;
      expect(tr.to_email).toBe(address.toLowerCase());
      expect(
        (await t.get('/v1/transfers', { token: recipient.token })).body.map((x: any) => [x.id, x.direction]),
      ).toEqual([[tr.id, 'received']]);
      const accepted = await t.post(`/v1/transfers/${tr.id}/accept`, { token: recipient.token });
      expect(accepted.status).toBe(200);
      expect((await t.get(`/v1/zones/${zone.id}`, { token: recipient.token })).body.user_id).toBe(recipient.id);
    }
  });
});
