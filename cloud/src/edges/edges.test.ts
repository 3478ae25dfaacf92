import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '@smarthome/protocol';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { sha256 } from '../auth/secrets.ts';
import { addMember, makeOrg } from '../testing/fixtures.ts';

const FLEET = 'fleet-secret-token-for-tests';
let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud({ fleetToken: FLEET });
});
afterAll(async () => {
  await t.stop();
});

describe('POST /v1/edges', () => {
  it('creates a pending home edge in the personal scope and shows the token once', async () => {
    const u = await t.user();
    const res = await t.post('/v1/edges', { token: u.token, body: { name: '  Home  ' } });
    expect(res.status).toBe(201);
    expect(res.body.edge).toEqual({
      id: expect.any(Number),
      name: 'Home',
      org_id: null,
      user_id: u.id,
      location: 'home',
      status: 'pending',
      capabilities: {},
      hostname: null,
      last_seen_at: null,
      paired_at: null,
      created_at: expect.any(String),
    });
    expect(res.body.token).toMatch(/^shp_edge_[A-Za-z0-9_-]{43}$/);
    const stored = await t.sqlOne<{ token_hash: string }>('SELECT token_hash FROM edges WHERE id = ?', [
      res.body.edge.id,
    ]);
    expect(stored?.token_hash).toBe(sha256(res.body.token));
    const dump = JSON.stringify(await t.sql('SELECT * FROM edges'));
    expect(dump).not.toContain(res.body.token);
    // the list never shows the token
    const list = await t.get('/v1/edges', { token: u.token });
    expect(JSON.stringify(list.body)).not.toContain(res.body.token);
  });

  it('creates in the organization of X-Organization-Id', async () => {
    const u = await t.user();
    const org = await makeOrg(t, u);
    const res = await t.post('/v1/edges', {
      token: u.token,
      org,
      body: { name: 'Office', capabilities: { zigbee: true } },
    });
    expect(res.status).toBe(201);
    expect(res.body.edge).toMatchObject({ org_id: org, user_id: u.id, capabilities: { zigbee: true } });
  });

  it('validates the body with 400 {message}', async () => {
    const u = await t.user();
    for (const body of [{}, { name: '' }, { name: 5 }, { name: 'x'.repeat(201) }, { name: 'ok', capabilities: [] }]) {
      const res = await t.post('/v1/edges', { token: u.token, body });
      expect(res.status).toBe(400);
      expect(typeof res.body.message).toBe('string');
    }
    const notJson = await t.post('/v1/edges', { token: u.token, raw: '{nope' });
    expect(notJson.status).toBe(400);
  });

  it('answers 401 {error} without auth and 403 {error} for a foreign organization', async () => {
    const none = await t.post('/v1/edges', { body: { name: 'x' } });
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: 'unauthorized' });
    const owner = await t.user();
    const other = await t.user();
    const org = await makeOrg(t, owner);
    const res = await t.post('/v1/edges', { token: other.token, org, body: { name: 'x' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden' });
  });
});

describe('GET /v1/edges and /v1/edges/{id}', () => {
  it("lists the scope: personal edges without the header, the organization's with it", async () => {
    const u = await t.user();
    const org = await makeOrg(t, u);
    const mine = (await t.post('/v1/edges', { token: u.token, body: { name: 'Mine' } })).body.edge as Edge;
    const orgs = (await t.post('/v1/edges', { token: u.token, org, body: { name: 'Org' } })).body.edge as Edge;
    const personal = await t.get('/v1/edges', { token: u.token });
    expect(personal.status).toBe(200);
    expect(personal.body.map((e: Edge) => e.id)).toEqual([mine.id]);
    const inOrg = await t.get('/v1/edges', { token: u.token, org });
    expect(inOrg.body.map((e: Edge) => e.id)).toEqual([orgs.id]);
    // a member sees the organization's edges too
    const member = await t.user();
    await addMember(t, org, member.id, 'member');
    expect((await t.get('/v1/edges', { token: member.token, org })).body.map((e: Edge) => e.id)).toEqual([orgs.id]);
    expect((await t.get(`/v1/edges/${orgs.id}`, { token: member.token })).body).toEqual(orgs);
    expect((await t.get(`/v1/edges/${mine.id}`, { token: u.token })).body).toEqual(mine);
  });

  it('401 without auth, 403 foreign org, 404 unknown / malformed / invisible / outside the org header', async () => {
    const u = await t.user();
    const stranger = await t.user();
    const org = await makeOrg(t, u);
    const edge = (await t.post('/v1/edges', { token: u.token, body: { name: 'E' } })).body.edge as Edge;
    expect((await t.get('/v1/edges')).status).toBe(401);
    expect((await t.get(`/v1/edges/${edge.id}`)).status).toBe(401);
    expect((await t.get('/v1/edges', { token: stranger.token, org })).status).toBe(403);
    expect((await t.get('/v1/edges', { token: stranger.token, org })).body).toEqual({ error: 'forbidden' });
    for (const path of ['/v1/edges/999999', '/v1/edges/abc']) {
      const res = await t.get(path, { token: u.token });
      expect(res.status).toBe(404);
      expect(typeof res.body.message).toBe('string');
    }
    expect((await t.get(`/v1/edges/${edge.id}`, { token: stranger.token })).status).toBe(404);
    expect((await t.get(`/v1/edges/${edge.id}`, { token: u.token, org })).status).toBe(404);
  });
});

describe('DELETE /v1/edges/{id}', () => {
  it('revokes: status revoked, token refused, revoked event emitted', async () => {
    const u = await t.user();
    const created = (await t.post('/v1/edges', { token: u.token, body: { name: 'Gone' } })).body;
    const registry = t.cloud.services.edges;
    expect((await registry.authenticateEdgeToken(created.token))?.id).toBe(created.edge.id);
    expect((await t.post('/v1/edge/heartbeat', { token: created.token })).status).toBe(200);
    const events: Edge[] = [];
    const onRevoked = (e: Edge) => events.push(e);
    registry.on('revoked', onRevoked);
    const res = await t.delete(`/v1/edges/${created.edge.id}`, { token: u.token });
    registry.off('revoked', onRevoked);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'edge revoked' });
    expect(events.map((e) => [e.id, e.status])).toEqual([[created.edge.id, 'revoked']]);
    expect(await registry.authenticateEdgeToken(created.token)).toBeNull();
    expect((await t.post('/v1/edge/heartbeat', { token: created.token })).status).toBe(401);
    expect((await t.get(`/v1/edges/${created.edge.id}`, { token: u.token })).body.status).toBe('revoked');
  });

  it('org admins may revoke, members may not (403), strangers get 404, 401 without auth', async () => {
    const owner = await t.user();
    const admin = await t.user();
    const member = await t.user();
    const stranger = await t.user();
    const org = await makeOrg(t, owner);
    await addMember(t, org, admin.id, 'admin');
    await addMember(t, org, member.id, 'member');
    const edge = (await t.post('/v1/edges', { token: owner.token, org, body: { name: 'Shared' } })).body.edge as Edge;
    expect((await t.delete(`/v1/edges/${edge.id}`)).status).toBe(401);
    expect((await t.delete(`/v1/edges/${edge.id}`, { token: stranger.token })).status).toBe(404);
    expect((await t.delete(`/v1/edges/${edge.id}`, { token: stranger.token, org })).status).toBe(403);
    const denied = await t.delete(`/v1/edges/${edge.id}`, { token: member.token, org });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden' });
    expect((await t.delete('/v1/edges/424242', { token: admin.token })).status).toBe(404);
    expect((await t.delete(`/v1/edges/${edge.id}`, { token: admin.token, org })).status).toBe(200);
  });

  it('edge tokens are refused in place of user tokens and vice versa', async () => {
    const u = await t.user();
    const created = (await t.post('/v1/edges', { token: u.token, body: { name: 'E' } })).body;
    expect((await t.get('/v1/edges', { token: created.token })).status).toBe(401);
    expect((await t.post('/v1/edge/heartbeat', { token: u.token })).status).toBe(401);
    expect((await t.post('/v1/edge/heartbeat', { token: 'shp_edge_forged' })).status).toBe(401);
    expect((await t.post('/v1/edge/heartbeat')).status).toBe(401);
  });
});

describe('tunnel hooks', () => {
  it('markOnline sets paired_at once, markOffline keeps revoked edges revoked', async () => {
    const u = await t.user();
    const registry = t.cloud.services.edges;
    const { edge } = await registry.create({ kind: 'personal', userId: u.id, orgId: null }, { name: 'T' });
    const first = await registry.markOnline(edge.id);
    expect(first).toMatchObject({ status: 'online', paired_at: expect.any(String), last_seen_at: expect.any(String) });
    const off = await registry.markOffline(edge.id);
    expect(off?.status).toBe('offline');
    const again = await registry.markOnline(edge.id);
    expect(again?.paired_at).toBe(first?.paired_at);
    await registry.revoke(edge.id);
    expect(await registry.markOffline(edge.id)).toBeNull();
    expect(await registry.markOnline(edge.id)).toBeNull();
    expect((await registry.get(edge.id))?.status).toBe('revoked');
  });

  it('online/offline marks leave the access cache (and open sockets) alone; a revocation empties it', async () => {
    const u = await t.user();
    const { edges: registry, accessCache } = t.cloud.services;
    const { edge } = await registry.create({ kind: 'personal', userId: u.id, orgId: null }, { name: 'T' });
    let invalidations = 0;
    accessCache.onInvalidate(() => invalidations++);
    await registry.markOnline(edge.id);
    await registry.markOffline(edge.id);
    await registry.markOnline(edge.id);
    expect(invalidations).toBe(0);
    await registry.revoke(edge.id);
    expect(invalidations).toBeGreaterThan(0);
  });
});
