import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { makeOrg } from '../testing/fixtures.ts';

/**
 * Walks every zone, dashboard, transfer and VoIP route as a second user with a second
 * organization against the first tenant's rows: nothing is readable, changeable or listed.
 */
let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

const zoneBody = { name: 'Home', icon: 'mdi:home', latitude: 1, longitude: 2, radius: 50 };
const config = { views: [{ title: 'v', cards: [{ type: 'x' }] }] };
const sip = { name: 'sip', server: 'sip.example.test', username: 'u', password: 'pw-secret-1' };

describe('tenant isolation', () => {
  it("keeps tenant A's zones, dashboards, transfers and VoIP accounts away from tenant B", async () => {
    const a = await t.user();
    const aMember = await t.user();
    const recipient = await t.user();
    const b = await t.user();
    const orgA = await makeOrg(t, a, [aMember], 'A');
    const orgB = await makeOrg(t, b, [], 'B');

    // tenant A: one personal and one org row of each kind, plus a transfer
    const ids = { zone: [] as number[], dash: [] as number[], voip: [] as number[] };
    for (const org of [undefined, orgA]) {
      ids.zone.push((await t.post('/v1/zones', { token: a.token, org, body: zoneBody })).body.id);
      ids.dash.push((await t.put('/v1/ui-dashboard', { token: a.token, org, body: { name: 'main', config } })).body.id);
      ids.voip.push((await t.post('/v1/voip-accounts', { token: a.token, org, body: sip })).body.id);
    }
    const transfer = (
      await t.post('/v1/transfers', {
        token: a.token,
        body: { to_email: recipient.email, resource_type: 'zone', resource_id: String(ids.zone[0]) },
      })
    ).body;
    expect(transfer.status).toBe('pending');

    // tenant B has rows of its own, so lists are not trivially empty
    const bZone = (await t.post('/v1/zones', { token: b.token, org: orgB, body: zoneBody })).body.id;
    const bDash = (await t.put('/v1/ui-dashboard', { token: b.token, org: orgB, body: { name: 'main', config } })).body
      .id;
    const bVoip = (await t.post('/v1/voip-accounts', { token: b.token, org: orgB, body: sip })).body.id;

    // lists: personal scope and B's organization never show A's rows; A's organization is 403
    for (const org of [undefined, orgB]) {
      const zones = (await t.get('/v1/zones', { token: b.token, org })).body.map((x: any) => x.id);
      const dashes = (await t.get('/v1/ui-dashboard', { token: b.token, org })).body.map((x: any) => x.id);
      const voips = (await t.get('/v1/voip-accounts', { token: b.token, org })).body.map((x: any) => x.id);
      expect(zones).toEqual(org ? [bZone] : []);
      expect(dashes).toEqual(org ? [bDash] : []);
      expect(voips).toEqual(org ? [bVoip] : []);
    }
    for (const p of ['/v1/zones', '/v1/ui-dashboard', '/v1/voip-accounts']) {
      const res = await t.get(p, { token: b.token, org: orgA });
      expect(res.status, p).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden' });
    }
    expect((await t.get('/v1/transfers', { token: b.token })).body).toEqual([]);

    // by id: 404 from B's own scopes, 403 with A's organization header
    const byId: [string, string, object?][] = [];
    for (const id of ids.zone) {
      byId.push(['GET', `/v1/zones/${id}`], ['PATCH', `/v1/zones/${id}`, { radius: 1 }], ['DELETE', `/v1/zones/${id}`]);
    }
    for (const id of ids.dash) {
      byId.push(
        ['GET', `/v1/ui-dashboard/${id}`],
        ['DELETE', `/v1/ui-dashboard/${id}`],
        ['PUT', '/v1/ui-dashboard', { id, name: 'pwned', config }],
      );
    }
    for (const id of ids.voip) byId.push(['DELETE', `/v1/voip-accounts/${id}`]);
    for (const [method, p, body] of byId) {
      for (const org of [undefined, orgB]) {
        const res = await t.request(method, p, { token: b.token, org, body });
        expect(res.status, `${method} ${p} org=${org}`).toBe(404);
        expect(res.body).toEqual({ message: expect.any(String) });
      }
      const withA = await t.request(method, p, { token: b.token, org: orgA, body });
      expect(withA.status, `${method} ${p} org=A`).toBe(403);
    }
    // replacing by name only touches B's own scope
    const sameName = await t.put('/v1/ui-dashboard', { token: b.token, body: { name: 'main', config: { views: [] } } });
    expect(sameName.body.id).not.toBe(ids.dash[0]);

    // transfers: B can neither offer A's resources nor act on A's transfer
    for (const [type, id] of [
      ['zone', ids.zone[1]],
      ['ui_dashboard', ids.dash[0]],
      ['ui_dashboard', ids.dash[1]],
    ] as const) {
      const res = await t.post('/v1/transfers', {
        token: b.token,
        body: { to_email: b.email.replace('@', '+x@'), resource_type: type, resource_id: String(id) },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: 'resource not found or not owned' });
    }
    for (const action of ['accept', 'decline', 'cancel']) {
      expect((await t.post(`/v1/transfers/${transfer.id}/${action}`, { token: b.token })).status).toBe(404);
    }

    // and A's data is untouched
    expect((await t.get('/v1/zones', { token: a.token })).body.map((x: any) => [x.id, x.radius])).toEqual([
      [ids.zone[0], 50],
    ]);
    expect((await t.get('/v1/zones', { token: aMember.token, org: orgA })).body.map((x: any) => x.id)).toEqual([
      ids.zone[1],
    ]);
    expect(
      (await t.get('/v1/ui-dashboard', { token: a.token })).body.map((x: any) => [x.id, x.name, x.config]),
    ).toEqual([[ids.dash[0], 'main', config]]);
    expect((await t.get('/v1/ui-dashboard', { token: a.token, org: orgA })).body.map((x: any) => x.id)).toEqual([
      ids.dash[1],
    ]);
    expect((await t.get('/v1/voip-accounts', { token: a.token })).body.map((x: any) => x.id)).toEqual([ids.voip[0]]);
    expect((await t.get('/v1/voip-accounts', { token: a.token, org: orgA })).body.map((x: any) => x.id)).toEqual([
      ids.voip[1],
    ]);
    expect((await t.get('/v1/transfers', { token: a.token })).body.map((x: any) => [x.id, x.status])).toEqual([
      [transfer.id, 'pending'],
    ]);
  });
});
