import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { makeOrg } from '../testing/fixtures.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

const home = { name: 'Home', icon: 'mdi:home', latitude: 52.37, longitude: 4.89, radius: 100 };

describe('POST /v1/zones', () => {
  it('creates a personal zone with passive defaulting to false', async () => {
    const u = await t.user();
    const res = await t.post('/v1/zones', { token: u.token, body: home });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'Home',
      icon: 'mdi:home',
      latitude: 52.37,
      longitude: 4.89,
      radius: 100,
      passive: false,
      user_id: u.id,
      org_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const passive = await t.post('/v1/zones', { token: u.token, body: { ...home, name: 'Work', passive: true } });
    expect(passive.body.passive).toBe(true);
  });

  it('validates every field with 400 {message} naming it', async () => {
    const u = await t.user();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...home, radius: 0 }, /^radius: /],
      [{ ...home, radius: -5 }, /^radius: /],
      [{ ...home, latitude: 91 }, /^latitude: /],
      [{ ...home, longitude: -180.5 }, /^longitude: /],
      [{ ...home, icon: 'home' }, /^icon: /],
      [{ ...home, icon: 'MDI:Home' }, /^icon: /],
      [{ ...home, name: '  ' }, /^name: /],
      [{ ...home, latitude: '52' }, /^latitude: /],
      [{ ...home, passive: 'yes' }, /^passive: /],
      [{ icon: 'mdi:home', latitude: 1, longitude: 1, radius: 1 }, /^name: /],
    ];
    for (const [body, message] of cases) {
      const res = await t.post('/v1/zones', { token: u.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    const notJson = await t.post('/v1/zones', { token: u.token, raw: '{nope' });
    expect(notJson.status).toBe(400);
    expect(notJson.body).toEqual({ message: expect.any(String) });
    expect(notJson.text).not.toMatch(/at .*\.ts/);
  });

  it('answers 401 {error} without a token and 403 {error} for a foreign organization', async () => {
    const res = await t.post('/v1/zones', { body: home });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized' });
    const owner = await t.user();
    const stranger = await t.user();
    const org = await makeOrg(t, owner);
    const foreign = await t.post('/v1/zones', { token: stranger.token, org, body: home });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'forbidden' });
    const unknownOrg = await t.post('/v1/zones', { token: stranger.token, org: 'no-such-org', body: home });
    expect(unknownOrg.status).toBe(403);
  });
});

describe('org scoping', () => {
  it('sets org_id, shows org zones to members and keeps them out of personal lists', async () => {
    const admin = await t.user();
    const member = await t.user();
    const org = await makeOrg(t, admin, [member]);
    const created = await t.post('/v1/zones', { token: admin.token, org, body: home });
    expect(created.status).toBe(201);
    expect(created.body.org_id).toBe(org);
    expect(created.body.user_id).toBe(admin.id);
    const personal = await t.post('/v1/zones', { token: admin.token, body: { ...home, name: 'Mine' } });

    const memberList = await t.get('/v1/zones', { token: member.token, org });
    expect(memberList.status).toBe(200);
    expect(memberList.body.map((z: any) => z.id)).toEqual([created.body.id]);
    const adminPersonal = await t.get('/v1/zones', { token: admin.token });
    expect(adminPersonal.body.map((z: any) => z.id)).toEqual([personal.body.id]);
    expect((await t.get('/v1/zones', { token: member.token })).body).toEqual([]);

    const memberGet = await t.get(`/v1/zones/${created.body.id}`, { token: member.token, org });
    expect(memberGet.status).toBe(200);
    expect(memberGet.body).toEqual(created.body);
    // the org zone is not reachable from the personal scope
    const outOfScope = await t.get(`/v1/zones/${created.body.id}`, { token: admin.token });
    expect(outOfScope.status).toBe(404);
    expect(outOfScope.body).toEqual({ message: 'zone not found' });
  });

  it("lets a member view but not change another member's org zone (403), and the admin change it", async () => {
    const admin = await t.user();
    const member = await t.user();
    const org = await makeOrg(t, admin, [member]);
    const zone = (await t.post('/v1/zones', { token: admin.token, org, body: home })).body;
    const patch = await t.patch(`/v1/zones/${zone.id}`, { token: member.token, org, body: { radius: 5 } });
    expect(patch.status).toBe(403);
    expect(patch.body).toEqual({ error: 'forbidden' });
    const del = await t.delete(`/v1/zones/${zone.id}`, { token: member.token, org });
    expect(del.status).toBe(403);

    const own = (await t.post('/v1/zones', { token: member.token, org, body: { ...home, name: 'Member' } })).body;
    const ownPatch = await t.patch(`/v1/zones/${own.id}`, { token: member.token, org, body: { name: 'Renamed' } });
    expect(ownPatch.status).toBe(200);
    expect(ownPatch.body.name).toBe('Renamed');
    const adminPatch = await t.patch(`/v1/zones/${own.id}`, { token: admin.token, org, body: { passive: true } });
    expect(adminPatch.status).toBe(200);
    expect(adminPatch.body.passive).toBe(true);
    const adminDelete = await t.delete(`/v1/zones/${own.id}`, { token: admin.token, org });
    expect(adminDelete.status).toBe(200);
  });
});

describe('GET / PATCH / DELETE /v1/zones/{id}', () => {
  it('reads, changes only the fields sent, and deletes', async () => {
    const u = await t.user();
    const zone = (await t.post('/v1/zones', { token: u.token, body: home })).body;
    const got = await t.get(`/v1/zones/${zone.id}`, { token: u.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(zone);

    const patched = await t.patch(`/v1/zones/${zone.id}`, {
      token: u.token,
      body: { radius: 250.5, icon: 'mdi:office-building' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id: zone.id,
      name: 'Home',
      radius: 250.5,
      icon: 'mdi:office-building',
      latitude: 52.37,
      passive: false,
    });
    expect(patched.body.created_at).toBe(zone.created_at);
    expect((await t.get(`/v1/zones/${zone.id}`, { token: u.token })).body.radius).toBe(250.5);

    const del = await t.delete(`/v1/zones/${zone.id}`, { token: u.token });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: 'zone deleted' });
    const gone = await t.get(`/v1/zones/${zone.id}`, { token: u.token });
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ message: 'zone not found' });
    expect((await t.delete(`/v1/zones/${zone.id}`, { token: u.token })).status).toBe(404);
  });

  it('validates PATCH bodies with 400 {message}', async () => {
    const u = await t.user();
    const zone = (await t.post('/v1/zones', { token: u.token, body: home })).body;
    const bad = await t.patch(`/v1/zones/${zone.id}`, { token: u.token, body: { radius: 0 } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^radius: /);
    const badIcon = await t.patch(`/v1/zones/${zone.id}`, { token: u.token, body: { icon: 'no colon' } });
    expect(badIcon.status).toBe(400);
    expect(badIcon.body.message).toMatch(/^icon: /);
    const badLat = await t.patch(`/v1/zones/${zone.id}`, { token: u.token, body: { latitude: -90.01 } });
    expect(badLat.body.message).toMatch(/^latitude: /);
  });

  it('answers 404 {message} for unknown and malformed ids, 401 without a token, 403 for a foreign organization', async () => {
    const u = await t.user();
    for (const id of ['999999', 'abc', '1.5', '99999999999999999999']) {
      const res = await t.get(`/v1/zones/${id}`, { token: u.token });
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
    expect((await t.patch('/v1/zones/999999', { token: u.token, body: { radius: 3 } })).status).toBe(404);
    expect((await t.delete('/v1/zones/999999', { token: u.token })).status).toBe(404);

    const zone = (await t.post('/v1/zones', { token: u.token, body: home })).body;
    for (const [method, opts] of [
      ['GET', {}],
      ['PATCH', { body: { radius: 1 } }],
      ['DELETE', {}],
    ] as const) {
      const res = await t.request(method, `/v1/zones/${zone.id}`, opts);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
    }
    const other = await t.user();
    const otherOrg = await makeOrg(t, other);
    for (const [method, opts] of [
      ['GET', {}],
      ['PATCH', { body: { radius: 1 } }],
      ['DELETE', {}],
    ] as const) {
      const res = await t.request(method, `/v1/zones/${zone.id}`, { ...opts, token: u.token, org: otherOrg });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden' });
    }
    expect((await t.get('/v1/zones', { token: u.token, org: otherOrg })).status).toBe(403);
    expect((await t.get('/v1/zones')).status).toBe(401);
  });
});
