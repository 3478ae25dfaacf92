import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '@smarthome/protocol';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { makeOrg, sampleSnapshot, subscribe } from '../testing/fixtures.ts';

/**
 * Tenant isolation across every route of edges, billing and smarthomes: user B (with
 * organization B) never sees or changes anything of user A (with organization A).
 */
const FLEET = 'fleet-token-isolation';
let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud({ fleetToken: FLEET });
});
afterAll(async () => {
  await t.stop();
});

describe('tenant isolation', () => {
  it('nothing of user A or organization A leaks to user B or organization B', async () => {
    const a = await t.user();
    const b = await t.user();
    const orgA = await makeOrg(t, a, [], 'A');
    const orgB = await makeOrg(t, b, [], 'B');
    const aPersonal = (await t.post('/v1/edges', { token: a.token, body: { name: 'a-home' } })).body as {
      edge: Edge;
      token: string;
    };
    const aOrg = (await t.post('/v1/edges', { token: a.token, org: orgA, body: { name: 'a-org' } })).body as {
      edge: Edge;
      token: string;
    };
    const bOrg = (await t.post('/v1/edges', { token: b.token, org: orgB, body: { name: 'b-org' } })).body as {
      edge: Edge;
      token: string;
    };
    await t.cloud.services.mirror.replaceSnapshot(
      aPersonal.edge.id,
      sampleSnapshot({ devices: 2, entries: 1, automations: 1 }),
    );
    await t.cloud.services.mirror.replaceSnapshot(
      aOrg.edge.id,
      sampleSnapshot({ devices: 3, entries: 2, automations: 2 }),
    );
    const subA = await subscribe(t, a.id, 2);
    const aIds = [aPersonal.edge.id, aOrg.edge.id];

    // lists: B's views contain none of A's rows
    for (const org of [undefined, orgB]) {
      const list = await t.get('/v1/edges', { token: b.token, org });
      expect(list.status).toBe(200);
      expect(list.body.map((e: Edge) => e.id).filter((id: number) => aIds.includes(id))).toEqual([]);
      const homes = await t.get('/v2/smarthomes', { token: b.token, org });
      expect(homes.body.items.map((i: { id: number }) => i.id).filter((id: number) => aIds.includes(id))).toEqual([]);
      const usage = await t.get('/v1/billing/usage', { token: b.token, org });
      expect(usage.body).toEqual({
        plan: { id: 1, name: 'free' },
        usage: {
          config_entries: { current: 0, limit: 3 },
          devices: { current: 0, limit: 10 },
          automations: { current: 0, limit: 5 },
        },
      });
    }
    expect((await t.get('/v1/edges', { token: b.token, org: orgB })).body.map((e: Edge) => e.id)).toEqual([
      bOrg.edge.id,
    ]);
    const subsB = await t.get('/v1/billing/subscriptions', { token: b.token });
    expect(subsB.body).toEqual([]);
    expect(JSON.stringify(subsB.body)).not.toContain(subA);

    // A's organization header: 403 on every org-context route
    for (const [method, path] of [
      ['GET', '/v1/edges'],
      ['POST', '/v1/edges'],
      ['GET', `/v1/edges/${aOrg.edge.id}`],
      ['DELETE', `/v1/edges/${aOrg.edge.id}`],
      ['GET', '/v2/smarthomes'],
      ['GET', '/v1/billing/usage'],
    ] as const) {
      const res = await t.request(method, path, {
        token: b.token,
        org: orgA,
        body: method === 'POST' ? { name: 'intruder' } : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden' });
    }

    // A's edges by id: 404 (existence not revealed), with or without B's org header
    for (const id of aIds) {
      for (const org of [undefined, orgB]) {
        expect((await t.get(`/v1/edges/${id}`, { token: b.token, org })).status).toBe(404);
        expect((await t.delete(`/v1/edges/${id}`, { token: b.token, org })).status).toBe(404);
      }
    }
    // nothing changed for A
    const aList = await t.get('/v1/edges', { token: a.token, org: orgA });
    expect(aList.body.map((e: Edge) => [e.id, e.status])).toEqual([[aOrg.edge.id, 'pending']]);
    expect((await t.cloud.services.edges.authenticateEdgeToken(aPersonal.token))?.id).toBe(aPersonal.edge.id);
    expect((await t.get('/v1/billing/usage', { token: a.token, org: orgA })).body.usage.devices).toEqual({
      current: 3,
      limit: null,
    });
    expect((await t.get('/v1/billing/usage', { token: a.token })).body.usage.devices).toEqual({
      current: 2,
      limit: null,
    });

    // an edge token authenticates only its own edge, never a user route
    const hb = await t.post('/v1/edge/heartbeat', { token: bOrg.token });
    expect(hb.body.id).toBe(bOrg.edge.id);
    expect((await t.get('/v1/edges', { token: aOrg.token, org: orgA })).status).toBe(401);
    expect((await t.get('/v1/billing/usage', { token: aOrg.token })).status).toBe(401);

    // the fleet is shared and read-only: both see the same list, neither owns a replica
    const replica = (
      await t.post('/v1/edge/register-cloud', { token: FLEET, body: { hostname: 'r1', name: 'r1', capabilities: {} } })
    ).body;
    const fleetA = await t.get('/v1/edges/cloud-fleet', { token: a.token });
    const fleetB = await t.get('/v1/edges/cloud-fleet', { token: b.token });
    expect(fleetA.body).toEqual(fleetB.body);
    expect(fleetB.body.map((e: Edge) => e.id)).toEqual([replica.edge.id]);
    expect(JSON.stringify(fleetB.body)).not.toContain(replica.token);
    expect((await t.get('/v1/edges', { token: b.token })).body.map((e: Edge) => e.id)).not.toContain(replica.edge.id);
    // B's token is no fleet token
    expect(
      (await t.post('/v1/edge/register-cloud', { token: b.token, body: { hostname: 'r1', name: 'x' } })).status,
    ).toBe(401);
  });
});
