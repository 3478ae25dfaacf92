import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { UNKNOWN_ORG as UNKNOWN, addMember } from '../testing/fixtures.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

async function orgWithMember() {
  const admin = await t.user();
  const member = await t.user();
  const outsider = await t.user();
  const org = (
    await t.post('/v1/organizations', { token: admin.token, body: { name: 'Acme', description: 'Home of Acme' } })
  ).body;
  await addMember(t, org.id, member.id);
  return { admin, member, outsider, org };
}

describe('POST /v1/organizations', () => {
  it('creates an organization and makes the caller its admin', async () => {
    const u = await t.user();
    const res = await t.post('/v1/organizations', {
      token: u.token,
      body: { name: '  Family  ', description: 'our house' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Family',
      description: 'our house',
      branding: {},
      inviteBranding: {},
      require_mfa: false,
      created_at: expect.any(String),
    });
    const account = await t.get('/v1/account', { token: u.token });
    expect(account.body.organizations).toEqual([{ id: res.body.id, name: 'Family', role: 'admin' }]);
  });
  it('defaults description to null', async () => {
    const u = await t.user();
    const res = await t.post('/v1/organizations', { token: u.token, body: { name: 'Plain' } });
    expect(res.status).toBe(201);
    expect(res.body.description).toBeNull();
  });
  it('answers 400 {message} for a missing or empty name and for a non-object body', async () => {
    const u = await t.user();
    const missing = await t.post('/v1/organizations', { token: u.token, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/^name: /);
    const empty = await t.post('/v1/organizations', { token: u.token, body: { name: '   ' } });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/^name: /);
    const tooLong = await t.post('/v1/organizations', { token: u.token, body: { name: 'x'.repeat(201) } });
    expect(tooLong.status).toBe(400);
    const notJson = await t.post('/v1/organizations', { token: u.token, raw: 'nope' });
    expect(notJson.status).toBe(400);
    expect(typeof notJson.body.message).toBe('string');
  });
  it('answers 401 {error} without a bearer token', async () => {
    const res = await t.post('/v1/organizations', { body: { name: 'x' } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized' });
  });
});

describe('GET /v1/organizations', () => {
  it("lists only the caller's organizations, each with the caller's role", async () => {
    const { admin, member, outsider, org } = await orgWithMember();
    const own = await t.post('/v1/organizations', { token: member.token, body: { name: 'Mine' } });
    const forMember = await t.get('/v1/organizations', { token: member.token });
    expect(forMember.status).toBe(200);
    const pairs = forMember.body.map((o: { id: string; role: string }) => [o.id, o.role]);
    expect(pairs).toHaveLength(2);
    expect(pairs).toEqual(
      expect.arrayContaining([
        [org.id, 'member'],
        [own.body.id, 'admin'],
      ]),
    );
    expect(forMember.body.find((o: { id: string }) => o.id === org.id)).toMatchObject({
      name: 'Acme',
      description: 'Home of Acme',
      branding: {},
      inviteBranding: {},
    });
    const forAdmin = await t.get('/v1/organizations', { token: admin.token });
    expect(forAdmin.body.map((o: { id: string }) => o.id)).toEqual([org.id]);
    expect((await t.get('/v1/organizations', { token: outsider.token })).body).toEqual([]);
  });
  it('answers 401 without auth', async () => {
    expect((await t.get('/v1/organizations')).status).toBe(401);
  });
});

describe('GET /v1/organizations/{id}', () => {
  it('returns the organization to members', async () => {
    const { member, org } = await orgWithMember();
    const res = await t.get(`/v1/organizations/${org.id}`, { token: member.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(org);
  });
  it('answers 403 {error} to a non-member, 404 {message} for an unknown id, 401 without auth', async () => {
    const { outsider, org } = await orgWithMember();
    const denied = await t.get(`/v1/organizations/${org.id}`, { token: outsider.token });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden' });
    const unknown = await t.get(`/v1/organizations/${UNKNOWN}`, { token: outsider.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'organization not found' });
    expect((await t.get(`/v1/organizations/${org.id}`)).status).toBe(401);
  });
});

describe('PATCH /v1/organizations/{id}', () => {
  it('lets an admin change name and description', async () => {
    const { admin, org } = await orgWithMember();
    const res = await t.patch(`/v1/organizations/${org.id}`, {
      token: admin.token,
      body: { name: 'Acme Two', description: null },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...org, name: 'Acme Two', description: null });
    const onlyDesc = await t.patch(`/v1/organizations/${org.id}`, {
      token: admin.token,
      body: { description: 'back' },
    });
    expect(onlyDesc.body).toMatchObject({ name: 'Acme Two', description: 'back' });
    expect((await t.get(`/v1/organizations/${org.id}`, { token: admin.token })).body.name).toBe('Acme Two');
  });
  it('answers 403 to a member and a non-member, 404 for an unknown id, 400 for a bad body, 401 without auth', async () => {
    const { admin, member, outsider, org } = await orgWithMember();
    const byMember = await t.patch(`/v1/organizations/${org.id}`, { token: member.token, body: { name: 'Hijack' } });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual({ error: 'forbidden' });
    expect(
      (await t.patch(`/v1/organizations/${org.id}`, { token: outsider.token, body: { name: 'Hijack' } })).status,
    ).toBe(403);
    const unknown = await t.patch(`/v1/organizations/${UNKNOWN}`, { token: admin.token, body: { name: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('organization not found');
    const bad = await t.patch(`/v1/organizations/${org.id}`, { token: admin.token, body: { name: 42 } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^name: /);
    expect((await t.patch(`/v1/organizations/${org.id}`, { body: { name: 'x' } })).status).toBe(401);
    expect((await t.get(`/v1/organizations/${org.id}`, { token: admin.token })).body.name).toBe('Acme');
  });
});

describe('PATCH /v1/organizations/{id}/branding', () => {
  it('merges branding: present fields replace, null clears, absent fields stay', async () => {
    const { admin, org } = await orgWithMember();
    const first = await t.patch(`/v1/organizations/${org.id}/branding`, {
      token: admin.token,
      body: {
        description: 'Branded',
        branding: { logoUrl: 'https://cdn.example.test/logo.png', color: '#112233' },
        inviteBranding: { headline: 'Join us', pageBackgroundColor: 'rgb(1, 2, 3)' },
      },
    });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ ok: true });
    const second = await t.patch(`/v1/organizations/${org.id}/branding`, {
      token: admin.token,
      body: { branding: { color: null, darkColor: 'navy' }, inviteBranding: { subheadline: 'Welcome' } },
    });
    expect(second.body).toEqual({ ok: true });
    const got = (await t.get(`/v1/organizations/${org.id}`, { token: admin.token })).body;
    expect(got.description).toBe('Branded');
    expect(got.branding).toEqual({ logoUrl: 'https://cdn.example.test/logo.png', darkColor: 'navy' });
    expect(got.inviteBranding).toEqual({
      headline: 'Join us',
      subheadline: 'Welcome',
      pageBackgroundColor: 'rgb(1, 2, 3)',
    });
    await t.patch(`/v1/organizations/${org.id}/branding`, { token: admin.token, body: { inviteBranding: null } });
    const cleared = (await t.get(`/v1/organizations/${org.id}`, { token: admin.token })).body;
    expect(cleared.inviteBranding).toEqual({});
    expect(cleared.branding).toEqual({ logoUrl: 'https://cdn.example.test/logo.png', darkColor: 'navy' });
  });
  it('refuses non-http URLs and style-breaking colours with 400 {message}', async () => {
    const { admin, org } = await orgWithMember();
    const js = await t.patch(`/v1/organizations/${org.id}/branding`, {
      token: admin.token,
      body: { branding: { logoUrl: 'javascript:alert(1)' } },
    });
    expect(js.status).toBe(400);
    expect(js.body.message).toMatch(/^branding\.logoUrl: /);
    const color = await t.patch(`/v1/organizations/${org.id}/branding`, {
      token: admin.token,
      body: { inviteBranding: { pageBackgroundColor: 'red;}</style>' } },
    });
    expect(color.status).toBe(400);
    expect(color.body.message).toMatch(/^inviteBranding\.pageBackgroundColor: /);
    const type = await t.patch(`/v1/organizations/${org.id}/branding`, {
      token: admin.token,
      body: { branding: 'blue' },
    });
    expect(type.status).toBe(400);
    expect((await t.get(`/v1/organizations/${org.id}`, { token: admin.token })).body.branding).toEqual({});
  });
  it('answers 403 to a member, 404 for an unknown id, 401 without auth', async () => {
    const { admin, member, org } = await orgWithMember();
    const denied = await t.patch(`/v1/organizations/${org.id}/branding`, {
      token: member.token,
      body: { description: 'x' },
    });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden' });
    const unknown = await t.patch(`/v1/organizations/${UNKNOWN}/branding`, {
      token: admin.token,
      body: { description: 'x' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'organization not found' });
    expect((await t.patch(`/v1/organizations/${org.id}/branding`, { body: {} })).status).toBe(401);
  });
});
