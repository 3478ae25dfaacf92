import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '@smarthome/protocol';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { addMember, makeOrg, sampleSnapshot } from '../testing/fixtures.ts';
import { MemoryWebhookRateLimiter } from './rate-limit.ts';

/**
 * The cloud's automation routes without a live edge: everything the cloud decides itself
 * (auth, scope, visibility, validation, plan limits, the mirror, webhook lookup and rate
 * limiting, offline edges). Relays to a live edge are in tools/src/e2e/automations.test.ts.
 */
let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

const WEBHOOK = 'w'.repeat(43);
const valid = {
  alias: 'Lights on',
  trigger: [{ platform: 'state', entity_id: 'light.a', to: 'on' }],
  action: [{ service: 'light.turn_on', target: { entity_id: 'light.b' } }],
};

async function edgeOf(token: string, name: string, org?: string): Promise<Edge> {
  const res = await t.post('/v1/edges', { token, org, body: { name } });
  expect(res.status).toBe(201);
  return res.body.edge as Edge;
}

/** Mirrors n automations for an (offline) edge; the first carries `webhook` when given. */
async function mirror(
  edgeId: number,
  n: number,
  prefix: string,
  webhook: string | null = null,
  enabled = true,
): Promise<void> {
  const snap = sampleSnapshot({ automations: n });
  snap.automations = snap.automations.map((a, i) => ({
    ...a,
    id: `${prefix}-${i + 1}`,
    enabled,
    webhook_id: i === 0 ? webhook : null,
  }));
  await t.cloud.services.mirror.replaceSnapshot(edgeId, snap);
}

describe('cloud automations without an edge online', () => {
  it('needs a bearer token everywhere but on the webhook receiver', async () => {
    for (const [method, path] of [
      ['GET', '/v1/automations'],
      ['POST', '/v1/automations'],
      ['GET', '/v1/automations/abc'],
      ['PUT', '/v1/automations/abc'],
      ['DELETE', '/v1/automations/abc'],
      ['GET', '/v1/automations/abc/traces'],
      ['GET', '/v1/automation/cloud-bootstrap'],
    ] as const) {
      const res = await t.request(method, path, { body: method === 'POST' || method === 'PUT' ? valid : undefined });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
    }
    const hook = await t.post(`/v1/automations/webhook/${WEBHOOK}`, { body: {} });
    expect(hook.status).toBe(404);
    expect(hook.body).toEqual({ message: 'webhook not found' });
  });

  it('answers 400 pointing at the bad field, before looking for an edge', async () => {
    const u = await t.user();
    const cases: [unknown, string][] = [
      [{ ...valid, trigger: [{ platform: 'state' }] }, 'trigger[0].entity_id:'],
      [{ ...valid, alias: '' }, 'alias:'],
      [{ ...valid, mode: 'sometimes' }, 'mode:'],
      [
        { ...valid, action: [{ delay: 'soon-ish' }, { service: 'nope' }] },
        'action[1].service: service must be <domain>.<service>',
      ],
      [{ ...valid, action: [{ bogus: 1 }] }, 'action[0]: action needs one of'],
    ];
    for (const [body, prefix] of cases) {
      const res = await t.post('/v1/automations', { token: u.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(Object.keys(res.body)).toEqual(['message']);
      expect(res.body.message.startsWith(prefix), res.body.message).toBe(true);
    }
    const raw = await t.post('/v1/automations', { token: u.token, raw: '{"alias":' });
    expect(raw.status).toBe(400);
    expect(raw.body).toEqual({ message: 'malformed JSON body' });
    // HA's newer spelling is accepted: it fails only because the user has no edge
    const ha = await t.post('/v1/automations', {
      token: u.token,
      body: {
        alias: 'HA',
        triggers: [{ trigger: 'state', entity_id: 'light.a' }],
        actions: [{ action: 'light.turn_on' }],
      },
    });
    expect(ha.status).toBe(404);
    expect(ha.body).toEqual({ message: 'no edge in scope' });
  });

  it('picks the only home edge, asks for edge_id among several, and refuses edges the caller cannot edit', async () => {
    const owner = await t.user();
    const member = await t.user();
    const stranger = await t.user();
    const org = await makeOrg(t, owner, [], 'Home org');
    await addMember(t, org, member.id, 'member');
    const one = await edgeOf(owner.token, 'one');
    // only edge → it is picked; it is offline → 503
    const picked = await t.post('/v1/automations', { token: owner.token, body: valid });
    expect(picked.status).toBe(503);
    expect(picked.body).toEqual({ error: 'edge_offline' });
    await edgeOf(owner.token, 'two');
    const several = await t.post('/v1/automations', { token: owner.token, body: valid });
    expect(several.status).toBe(400);
    expect(several.body).toEqual({ message: 'edge_id: required when the scope has several edges' });
    expect((await t.post('/v1/automations', { token: owner.token, body: { ...valid, edge_id: one.id } })).status).toBe(
      503,
    );
    // another user's edge: not found; an org edge for a member: forbidden
    const other = await t.post('/v1/automations', { token: stranger.token, body: { ...valid, edge_id: one.id } });
    expect(other.status).toBe(404);
    expect(other.body).toEqual({ message: 'edge not found' });
    const orgEdge = await edgeOf(owner.token, 'org edge', org);
    const asMember = await t.post('/v1/automations', {
      token: member.token,
      org,
      body: { ...valid, edge_id: orgEdge.id },
    });
    expect(asMember.status).toBe(403);
    expect(asMember.body).toEqual({ error: 'forbidden' });
    const asMemberPicked = await t.post('/v1/automations', { token: member.token, org, body: valid });
    expect(asMemberPicked.status).toBe(403);
    // the org edge outside the org in scope: not found
    const wrongScope = await t.post('/v1/automations', {
      token: owner.token,
      org,
      body: { ...valid, edge_id: one.id },
    });
    expect(wrongScope.status).toBe(404);
    // a foreign organization header: 403 on every org-context route
    for (const [method, path] of [
      ['GET', '/v1/automations'],
      ['POST', '/v1/automations'],
      ['GET', '/v1/automation/cloud-bootstrap'],
      ['GET', '/v1/automations/x'],
    ] as const) {
      const res = await t.request(method, path, {
        token: stranger.token,
        org,
        body: method === 'POST' ? valid : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden' });
    }
  });

  it('enforces the free plan: 5 automations, then 403 plan_limit_reached (counted where the edge belongs)', async () => {
    const u = await t.user();
    const edge = await edgeOf(u.token, 'home');
    await mirror(edge.id, 5, `limit-${edge.id}`);
    const res = await t.post('/v1/automations', { token: u.token, body: { ...valid, edge_id: edge.id } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'plan_limit_reached' });
    await mirror(edge.id, 4, `limit-${edge.id}`);
    // within the limit the request goes on to the edge (offline here)
    const ok = await t.post('/v1/automations', { token: u.token, body: { ...valid, edge_id: edge.id } });
    expect(ok.status).toBe(503);
    // an organization edge counts in the organization's plan even without the header
    const org = await makeOrg(t, u, [], 'Limits');
    const orgEdge = await edgeOf(u.token, 'org home', org);
    await mirror(orgEdge.id, 5, `limit-${orgEdge.id}`);
    const full = await t.post('/v1/automations', { token: u.token, body: { ...valid, edge_id: orgEdge.id } });
    expect(full.status).toBe(403);
    expect(full.body).toEqual({ error: 'plan_limit_reached' });
  });

  it('lists the mirror (last known while the edge is offline), scoped and isolated per tenant', async () => {
    const a = await t.user();
    const b = await t.user();
    const member = await t.user();
    const orgA = await makeOrg(t, a, [], 'A');
    await addMember(t, orgA, member.id, 'member');
    const personal = await edgeOf(a.token, 'a-home');
    const orgEdge = await edgeOf(a.token, 'a-org', orgA);
    await mirror(personal.id, 2, 'pa');
    await mirror(orgEdge.id, 1, 'oa', 'x'.repeat(43));

    const mine = await t.get('/v1/automations', { token: a.token });
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual([
      { id: 'pa-1', edge_id: personal.id, alias: 'Auto 1', enabled: true, mode: 'single', webhook_id: null },
      { id: 'pa-2', edge_id: personal.id, alias: 'Auto 2', enabled: true, mode: 'single', webhook_id: null },
      { id: 'oa-1', edge_id: orgEdge.id, alias: 'Auto 1', enabled: true, mode: 'single', webhook_id: 'x'.repeat(43) },
    ]);
    const inOrg = await t.get('/v1/automations', { token: a.token, org: orgA });
    expect(inOrg.body.map((x: { id: string }) => x.id)).toEqual(['oa-1']);
    const filtered = await t.get(`/v1/automations?edge_id=${personal.id}`, { token: a.token });
    expect(filtered.body.map((x: { id: string }) => x.id)).toEqual(['pa-1', 'pa-2']);
    expect(
      (await t.get('/v1/automations', { token: member.token, org: orgA })).body.map((x: { id: string }) => x.id),
    ).toEqual(['oa-1']);

    // B sees none of A's and cannot reach them by id (404, existence not revealed)
    expect((await t.get('/v1/automations', { token: b.token })).body).toEqual([]);
    for (const [method, path] of [
      ['GET', '/v1/automations/pa-1'],
      ['PUT', '/v1/automations/pa-1'],
      ['DELETE', '/v1/automations/pa-1'],
      ['GET', '/v1/automations/oa-1/traces'],
      ['GET', '/v1/automations/unknown-id'],
      ['GET', '/v1/automations/not%20an%20id'],
    ] as const) {
      const res = await t.request(method, path, { token: b.token, body: method === 'PUT' ? valid : undefined });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toEqual({
        message: method === 'GET' && path.includes('%20') ? 'not found' : 'automation not found',
      });
    }
    // A's own: found, relayed to the (offline) edge → 503; A's org header hides personal ones
    expect((await t.get('/v1/automations/pa-1', { token: a.token })).body).toEqual({ error: 'edge_offline' });
    expect((await t.get('/v1/automations/pa-1/traces', { token: a.token })).status).toBe(503);
    expect((await t.get('/v1/automations/pa-1', { token: a.token, org: orgA })).status).toBe(404);
    // an org member may view (→ 503 offline) but not change
    expect((await t.get('/v1/automations/oa-1', { token: member.token })).status).toBe(503);
    for (const method of ['PUT', 'DELETE'] as const) {
      const res = await t.request(method, '/v1/automations/oa-1', {
        token: member.token,
        org: orgA,
        body: method === 'PUT' ? valid : undefined,
      });
      expect(res.status, method).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden' });
    }
    expect(
      (await t.put('/v1/automations/oa-1', { token: a.token, body: { ...valid, edge_id: personal.id } })).body,
    ).toEqual({ message: 'edge_id: an automation cannot move to another edge' });
    expect((await t.delete('/v1/automations/oa-1', { token: a.token })).status).toBe(503);
  });

  it('webhook receiver: 404 unknown, disabled or on a revoked edge; 503 when the edge is offline; 429 with Retry-After when flooded', async () => {
    const u = await t.user();
    const edge = await edgeOf(u.token, 'hooks');
    const hook = 'h'.repeat(43);
    await mirror(edge.id, 1, 'hook', hook);
    const offline = await t.post(`/v1/automations/webhook/${hook}`, { body: { x: 1 } });
    expect(offline.status).toBe(503);
    expect(offline.body).toEqual({ error: 'edge_offline' });
    expect((await t.post(`/v1/automations/webhook/${'u'.repeat(43)}`, { body: { x: 1 } })).body).toEqual({
      message: 'webhook not found',
    });
    expect((await t.post('/v1/automations/webhook/bad!id', { body: { x: 1 } })).status).toBe(404);

    // concurrent, so refills (10/s) hardly matter: the burst (20, one taken above) is relayed (503: offline), the rest limited
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => t.post(`/v1/automations/webhook/${hook}`, { body: { i } })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(19);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
    expect(statuses.every((s) => s === 503 || s === 429)).toBe(true);
    const limited = results.find((r) => r.status === 429);
    expect(limited?.body).toEqual({ error: 'rate_limited' });
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    await mirror(edge.id, 1, 'hook', hook, false);
    expect((await t.post(`/v1/automations/webhook/${hook}`, { body: {} })).status).toBe(404);
    await mirror(edge.id, 1, 'hook', hook, true);
    expect(await t.delete(`/v1/edges/${edge.id}`, { token: u.token })).toMatchObject({ status: 200 });
    const revoked = await t.post(`/v1/automations/webhook/${hook}`, { body: {} });
    expect(revoked.status).toBe(404);
    expect(revoked.body).toEqual({ message: 'webhook not found' });
  });

  it('webhook receiver: OpenAPI documents the free-form JSON object body and no security', async () => {
    const doc = (await t.get('/openapi.json')).body;
    const op = doc.paths['/v1/automations/webhook/{webhook_id}'].post;
    expect(op.security).toEqual([]);
    expect(op.requestBody.required).toBe(true);
    expect(op.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/WebhookBody');
    expect(doc.components.schemas.WebhookBody).toMatchObject({ type: 'object', additionalProperties: {} });
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '404', '413', '429', '503', '504']);
  });

  it('cloud-bootstrap answers the scope with offline edges skipped', async () => {
    const u = await t.user();
    const org = await makeOrg(t, u, [], 'Boot');
    const edge = await edgeOf(u.token, 'boot', org);
    await mirror(edge.id, 2, 'boot');
    const personal = await t.get('/v1/automation/cloud-bootstrap', { token: u.token });
    expect(personal.status).toBe(200);
    expect(personal.body).toEqual({ organization_id: null, automations: [] });
    const inOrg = await t.get('/v1/automation/cloud-bootstrap', { token: u.token, org });
    expect(inOrg.body).toEqual({ organization_id: org, automations: [] });
  });
});

describe('MemoryWebhookRateLimiter', () => {
  it('allows the burst, then refills at the rate, per key', () => {
    let now = 1_000_000;
    const rl = new MemoryWebhookRateLimiter({ perSecond: 10, burst: 20, clock: { now: () => now } });
    for (let i = 0; i < 20; i++) expect(rl.takeNow('a')).toBe(0);
    expect(rl.takeNow('a')).toBeCloseTo(0.1, 5);
    expect(rl.takeNow('b')).toBe(0);
    now += 100;
    expect(rl.takeNow('a')).toBe(0);
    expect(rl.takeNow('a')).toBeCloseTo(0.1, 5);
    now += 10_000;
    for (let i = 0; i < 20; i++) expect(rl.takeNow('a')).toBe(0);
    expect(rl.takeNow('a')).toBeGreaterThan(0);
  });

  it('forgets keys and prunes idle buckets when full', async () => {
    let now = 0;
    const rl = new MemoryWebhookRateLimiter({ perSecond: 1, burst: 2, maxKeys: 3, clock: { now: () => now } });
    rl.takeNow('a');
    rl.takeNow('b');
    rl.takeNow('c');
    expect(rl.size).toBe(3);
    now += 5_000;
    rl.takeNow('d');
    expect(rl.size).toBe(1);
    await rl.forget('d');
    expect(rl.size).toBe(0);
    expect(await rl.take('e')).toBe(0);
  });
});
