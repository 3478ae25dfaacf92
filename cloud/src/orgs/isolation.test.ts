import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { orgFixture } from '../testing/fixtures.ts';

/**
 * Tenant isolation: a second organization (A) and its users walk every organization route
 * against organization B's rows. Nothing may succeed, nothing may change, and list
 * endpoints never show foreign rows.
 */
let t: TestCloud;
let a: Awaited<ReturnType<typeof orgFixture>>;
let b: Awaited<ReturnType<typeof orgFixture>>;
let bShare: number;
let bInvitation: { id: string; token: string };
let aShare: number;
let aInvitation: string;

beforeAll(async () => {
  t = await startTestCloud();
  a = await orgFixture(t, 'Org A');
  b = await orgFixture(t, 'Org B');
  bShare = (
    await t.post(`/v1/organizations/${b.org.id}/shares`, {
      token: b.admin.token,
      body: { resource_type: 'entity', resource_id: 'light.b', user_id: b.member.id },
    })
  ).body.id;
  bInvitation = (
    await t.post(`/v1/organizations/${b.org.id}/invitations`, {
      token: b.admin.token,
      body: { email: 'b-guest@example.test' },
    })
  ).body;
  aShare = (
    await t.post(`/v1/organizations/${a.org.id}/shares`, {
      token: a.admin.token,
      body: { resource_type: 'entity', resource_id: 'light.a' },
    })
  ).body.id;
  aInvitation = (
    await t.post(`/v1/organizations/${a.org.id}/invitations`, {
      token: a.admin.token,
      body: { email: 'a-guest@example.test' },
    })
  ).body.id;
});
afterAll(async () => {
  await t.stop();
});

async function snapshot(): Promise<string> {
  return JSON.stringify([
    await t.sql('SELECT * FROM organizations WHERE id = ?', [b.org.id]),
    await t.sql('SELECT * FROM org_members WHERE org_id = ? ORDER BY user_id', [b.org.id]),
    await t.sql('SELECT * FROM shares WHERE org_id = ? ORDER BY id', [b.org.id]),
    await t.sql('SELECT * FROM org_invitations WHERE org_id = ? ORDER BY id', [b.org.id]),
  ]);
}

interface Probe {
  method: string;
  spec: string;
  path: () => string;
  body?: () => unknown;
  allowed: number[];
}

const B = () => b.org.id;
const A = () => a.org.id;
const probes: Probe[] = [
  { method: 'get', spec: '/v1/organizations/{id}', path: () => `/v1/organizations/${B()}`, allowed: [403] },
  {
    method: 'patch',
    spec: '/v1/organizations/{id}',
    path: () => `/v1/organizations/${B()}`,
    body: () => ({ name: 'pwned' }),
    allowed: [403],
  },
  {
    method: 'patch',
    spec: '/v1/organizations/{id}',
    path: () => `/v1/organizations/${B()}`,
    body: () => ({ require_mfa: true }),
    allowed: [403],
  },
  {
    method: 'patch',
    spec: '/v1/organizations/{id}/branding',
    path: () => `/v1/organizations/${B()}/branding`,
    body: () => ({ description: 'pwned' }),
    allowed: [403],
  },
  {
    method: 'get',
    spec: '/v1/organizations/{id}/members',
    path: () => `/v1/organizations/${B()}/members`,
    allowed: [403],
  },
  {
    method: 'patch',
    spec: '/v1/organizations/{id}/members/{user_id}',
    path: () => `/v1/organizations/${B()}/members/${b.member.id}`,
    body: () => ({ role: 'admin' }),
    allowed: [403],
  },
  {
    method: 'patch',
    spec: '/v1/organizations/{id}/members/{user_id}',
    path: () => `/v1/organizations/${A()}/members/${b.member.id}`,
    body: () => ({ role: 'admin' }),
    allowed: [403, 404],
  },
  {
    method: 'delete',
    spec: '/v1/organizations/{id}/members/{user_id}',
    path: () => `/v1/organizations/${B()}/members/${b.member.id}`,
    allowed: [403],
  },
  {
    method: 'delete',
    spec: '/v1/organizations/{id}/members/{user_id}',
    path: () => `/v1/organizations/${A()}/members/${b.admin.id}`,
    allowed: [403, 404],
  },
  {
    method: 'post',
    spec: '/v1/organizations/{id}/invitations',
    path: () => `/v1/organizations/${B()}/invitations`,
    body: () => ({ email: 'spy@example.test', role: 'admin' }),
    allowed: [403],
  },
  {
    method: 'get',
    spec: '/v1/organizations/{id}/invitations',
    path: () => `/v1/organizations/${B()}/invitations`,
    allowed: [403],
  },
  {
    method: 'delete',
    spec: '/v1/organizations/{id}/invitations/{invitation_id}',
    path: () => `/v1/organizations/${B()}/invitations/${bInvitation.id}`,
    allowed: [403],
  },
  {
    method: 'delete',
    spec: '/v1/organizations/{id}/invitations/{invitation_id}',
    path: () => `/v1/organizations/${A()}/invitations/${bInvitation.id}`,
    allowed: [403, 404],
  },
  {
    method: 'post',
    spec: '/v1/invitations/{token}/accept',
    path: () => `/v1/invitations/${bInvitation.token}/accept`,
    allowed: [403],
  },
  {
    method: 'post',
    spec: '/v1/invitations/{token}/decline',
    path: () => `/v1/invitations/${bInvitation.token}/decline`,
    allowed: [403],
  },
  {
    method: 'post',
    spec: '/v1/organizations/{id}/shares',
    path: () => `/v1/organizations/${B()}/shares`,
    body: () => ({ resource_type: 'entity', resource_id: 'light.spy' }),
    allowed: [403],
  },
  {
    method: 'post',
    spec: '/v1/organizations/{id}/shares',
    path: () => `/v1/organizations/${A()}/shares`,
    body: () => ({ resource_type: 'entity', resource_id: 'light.spy', user_id: b.admin.id }),
    allowed: [400, 403],
  },
  {
    method: 'get',
    spec: '/v1/organizations/{id}/shares',
    path: () => `/v1/organizations/${B()}/shares`,
    allowed: [403],
  },
  {
    method: 'patch',
    spec: '/v1/organizations/{id}/shares/{share_id}',
    path: () => `/v1/organizations/${B()}/shares/${bShare}`,
    body: () => ({ can_control: true, can_edit: true, user_id: null }),
    allowed: [403],
  },
  {
    method: 'patch',
    spec: '/v1/organizations/{id}/shares/{share_id}',
    path: () => `/v1/organizations/${A()}/shares/${bShare}`,
    body: () => ({ can_edit: true }),
    allowed: [403, 404],
  },
  {
    method: 'delete',
    spec: '/v1/organizations/{id}/shares/{share_id}',
    path: () => `/v1/organizations/${B()}/shares/${bShare}`,
    allowed: [403],
  },
  {
    method: 'delete',
    spec: '/v1/organizations/{id}/shares/{share_id}',
    path: () => `/v1/organizations/${A()}/shares/${bShare}`,
    allowed: [403, 404],
  },
];

describe('tenant isolation of organization routes', () => {
  it("refuses every route on another organization's rows, for its admin and its member, and changes nothing", async () => {
    const before = await snapshot();
    for (const who of [a.admin, a.member, a.outsider]) {
      for (const p of probes) {
        const res = await t.request(p.method.toUpperCase(), p.path(), { token: who.token, body: p.body?.() });
        expect(p.allowed, `${p.method} ${p.path()} → ${res.status} ${res.text}`).toContain(res.status);
        expect(JSON.stringify(res.body)).not.toContain(b.member.email);
        expect(JSON.stringify(res.body)).not.toContain('light.b');
      }
    }
    expect(await snapshot()).toBe(before);
  });

  it('list endpoints never show foreign rows', async () => {
    const orgs = (await t.get('/v1/organizations', { token: a.admin.token })).body;
    expect(orgs.map((o: { id: string }) => o.id)).toEqual([a.org.id]);
    const members = (await t.get(`/v1/organizations/${a.org.id}/members`, { token: a.admin.token })).body;
    expect(members.map((m: { user_id: string }) => m.user_id).sort()).toEqual([a.admin.id, a.member.id].sort());
    const shares = (await t.get(`/v1/organizations/${a.org.id}/shares`, { token: a.admin.token })).body;
    expect(shares.map((s: { id: number }) => s.id)).toEqual([aShare]);
    const invitations = (await t.get(`/v1/organizations/${a.org.id}/invitations`, { token: a.admin.token })).body;
    expect(invitations.map((i: { id: string }) => i.id)).toEqual([aInvitation]);
    expect((await t.get('/v1/organizations', { token: a.outsider.token })).body).toEqual([]);
    const account = (await t.get('/v1/account', { token: a.member.token })).body;
    expect(account.organizations).toEqual([{ id: a.org.id, name: 'Org A', role: 'member' }]);
  });

  it('covers every mounted organization route (probes above plus the list/create/public routes tested here)', () => {
    const orgRoutes = t.cloud.routes.filter((r) => r.tag === 'organizations').map((r) => `${r.method} ${r.path}`);
    const covered = new Set([
      ...probes.map((p) => `${p.method} ${p.spec}`),
      'get /v1/organizations', // list endpoints test
      'post /v1/organizations', // creates only in the caller's own scope
      'get /v1/invitations/{token}', // public by design: the token is the secret (below)
    ]);
    for (const r of orgRoutes) expect(covered, r).toContain(r);
    expect(orgRoutes).toHaveLength(18);
  });

  it("the public invitation page answers only for the exact token, and creating an organization does not touch another's", async () => {
    expect((await t.get(`/v1/invitations/${bInvitation.token}x`)).status).toBe(404);
    expect((await t.get(`/v1/invitations/${bInvitation.id}`)).status).toBe(404);
    const before = await snapshot();
    const created = await t.post('/v1/organizations', { token: a.admin.token, body: { name: 'Org A2' } });
    expect(created.status).toBe(201);
    expect(created.body.id).not.toBe(b.org.id);
    expect(await snapshot()).toBe(before);
  });
});
