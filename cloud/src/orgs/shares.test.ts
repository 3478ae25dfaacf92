import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { UNKNOWN_ORG, addMember, orgFixture } from '../testing/fixtures.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

async function dashboard(token: string, name: string, org?: string): Promise<string> {
  const res = await t.put('/v1/ui-dashboard', { token, org, body: { name, config: { views: [] } } });
  expect(res.status).toBe(200);
  return String(res.body.id);
}

const TYPES = [
  'entity',
  'device',
  'dashboard',
  'lock_access_group',
  'lock_schedule',
  'lock_appointment',
  'lock_credential',
  'lock_visitor',
];

describe('POST /v1/organizations/{id}/shares', () => {
  it('creates a share of every resource type with defaults can_view=true, others false, user_id=null', async () => {
    const { admin, org } = await orgFixture(t);
    const dash = await dashboard(admin.token, 'mine');
    for (const type of TYPES) {
      const id = type === 'dashboard' ? dash : `${type}-1`;
      const res = await t.post(`/v1/organizations/${org.id}/shares`, {
        token: admin.token,
        body: { resource_type: type, resource_id: id },
      });
      expect(res.status, type).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        org_id: org.id,
        resource_type: type,
        resource_id: id,
        can_view: true,
        can_control: false,
        can_edit: false,
        user_id: null,
        created_at: expect.any(String),
      });
    }
    const listed = (await t.get(`/v1/organizations/${org.id}/shares`, { token: admin.token })).body;
    expect(listed.map((s: { resource_type: string }) => s.resource_type)).toEqual(TYPES);
  });
  it('scopes a share to one member with user_id and keeps the flags given', async () => {
    const { admin, member, org } = await orgFixture(t);
    const res = await t.post(`/v1/organizations/${org.id}/shares`, {
      token: admin.token,
      body: {
        resource_type: 'device',
        resource_id: 'dev-42',
        can_view: true,
        can_control: true,
        can_edit: true,
        user_id: member.id,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      resource_type: 'device',
      resource_id: 'dev-42',
      can_view: true,
      can_control: true,
      can_edit: true,
      user_id: member.id,
    });
  });
  it('answers 400 {message} for a non-member user_id, a bad type, missing id, non-boolean flags or no flag at all', async () => {
    const { admin, outsider, org } = await orgFixture(t);
    const cases: Array<[unknown, RegExp]> = [
      [{ resource_type: 'entity', resource_id: 'x', user_id: outsider.id }, /^user_id: not a member/],
      [{ resource_type: 'zone', resource_id: 'x' }, /^resource_type: /],
      [{ resource_type: 'entity' }, /^resource_id: /],
      [{ resource_type: 'entity', resource_id: '' }, /^resource_id: /],
      [{ resource_type: 'entity', resource_id: 'x', can_view: 'yes' }, /^can_view: /],
      [{ resource_type: 'entity', resource_id: 'x', can_view: false }, /at least one of/],
    ];
    for (const [body, message] of cases) {
      const res = await t.post(`/v1/organizations/${org.id}/shares`, { token: admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect((await t.get(`/v1/organizations/${org.id}/shares`, { token: admin.token })).body).toEqual([]);
  });
  it('answers 409 for a second share of the same resource with the same scope', async () => {
    const { admin, member, org } = await orgFixture(t);
    const body = { resource_type: 'entity', resource_id: 'light.hall' };
    expect((await t.post(`/v1/organizations/${org.id}/shares`, { token: admin.token, body })).status).toBe(201);
    const dup = await t.post(`/v1/organizations/${org.id}/shares`, { token: admin.token, body });
    expect(dup.status).toBe(409);
    expect(dup.body.message).toMatch(/already shared/);
    // A different scope (one member) is a different share.
    expect(
      (
        await t.post(`/v1/organizations/${org.id}/shares`, {
          token: admin.token,
          body: { ...body, user_id: member.id, can_control: true },
        })
      ).status,
    ).toBe(201);
  });
  it('answers 403 to a member and an outsider, 404 for an unknown organization, 401 without auth', async () => {
    const { admin, member, outsider, org } = await orgFixture(t);
    const body = { resource_type: 'entity', resource_id: 'light.x' };
    const byMember = await t.post(`/v1/organizations/${org.id}/shares`, { token: member.token, body });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual({ error: 'forbidden' });
    expect((await t.post(`/v1/organizations/${org.id}/shares`, { token: outsider.token, body })).status).toBe(403);
    const unknown = await t.post(`/v1/organizations/${UNKNOWN_ORG}/shares`, { token: admin.token, body });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'organization not found' });
    const anon = await t.post(`/v1/organizations/${org.id}/shares`, { body });
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ error: 'unauthorized' });
  });
});

describe('sharing a dashboard', () => {
  it('requires the dashboard to exist (404) and the admin to be allowed to manage it (403)', async () => {
    const { admin, member, org } = await orgFixture(t);
    const stranger = await t.user();
    const own = await dashboard(admin.token, 'own');
    const orgDash = await dashboard(member.token, 'team', org.id);
    const foreign = await dashboard(stranger.token, 'private');
    const post = (id: string) =>
      t.post(`/v1/organizations/${org.id}/shares`, {
        token: admin.token,
        body: { resource_type: 'dashboard', resource_id: id, can_edit: true },
      });
    expect((await post(own)).status).toBe(201);
    // an admin of the dashboard's organization may manage it
    expect((await post(orgDash)).status).toBe(201);
    const unknown = await post('999999');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'dashboard not found' });
    expect((await post('not-a-number')).status).toBe(404);
    // someone else's personal dashboard looks exactly like a missing one
    const hidden = await post(foreign);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({ message: 'dashboard not found' });

    // visible but not manageable: a dashboard of an organization where the caller is only a member
    const other = await orgFixture(t, 'Other');
    await addMember(t, other.org.id, admin.id);
    const visible = await dashboard(other.admin.token, 'theirs', other.org.id);
    const denied = await post(visible);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden' });
    const ids = (await t.get(`/v1/organizations/${org.id}/shares`, { token: admin.token })).body.map(
      (s: { resource_id: string }) => s.resource_id,
    );
    expect(ids).toEqual([own, orgDash]);
  });
});

describe('GET /v1/organizations/{id}/shares', () => {
  it('shows admins every share and members only the shares that apply to them', async () => {
    const { admin, member, org } = await orgFixture(t);
    const second = await t.user();
    await addMember(t, org.id, second.id);
    const post = (body: object) =>
      t.post(`/v1/organizations/${org.id}/shares`, { token: admin.token, body }).then((r) => r.body.id as number);
    const everyone = await post({ resource_type: 'entity', resource_id: 'light.a' });
    const forMember = await post({ resource_type: 'entity', resource_id: 'light.b', user_id: member.id });
    const forSecond = await post({ resource_type: 'entity', resource_id: 'light.c', user_id: second.id });
    const ids = async (token: string) =>
      (await t.get(`/v1/organizations/${org.id}/shares`, { token })).body.map((s: { id: number }) => s.id);
    expect(await ids(admin.token)).toEqual([everyone, forMember, forSecond]);
    expect(await ids(member.token)).toEqual([everyone, forMember]);
    expect(await ids(second.token)).toEqual([everyone, forSecond]);
  });
  it('answers 403 to an outsider, 404 for an unknown organization, 401 without auth', async () => {
    const { admin, outsider, org } = await orgFixture(t);
    const denied = await t.get(`/v1/organizations/${org.id}/shares`, { token: outsider.token });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden' });
    expect((await t.get(`/v1/organizations/${UNKNOWN_ORG}/shares`, { token: admin.token })).status).toBe(404);
    expect((await t.get(`/v1/organizations/${org.id}/shares`)).status).toBe(401);
  });
});

describe('DELETE /v1/organizations/{id}/shares/{share_id}', () => {
  it('deletes a share (admin only); it is gone afterwards', async () => {
    const { admin, member, org } = await orgFixture(t);
    const share = (
      await t.post(`/v1/organizations/${org.id}/shares`, {
        token: admin.token,
        body: { resource_type: 'lock_visitor', resource_id: '7' },
      })
    ).body;
    const byMember = await t.delete(`/v1/organizations/${org.id}/shares/${share.id}`, { token: member.token });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual({ error: 'forbidden' });
    expect((await t.delete(`/v1/organizations/${org.id}/shares/${share.id}`)).status).toBe(401);
    const res = await t.delete(`/v1/organizations/${org.id}/shares/${share.id}`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'share deleted' });
    expect((await t.get(`/v1/organizations/${org.id}/shares`, { token: admin.token })).body).toEqual([]);
    const again = await t.delete(`/v1/organizations/${org.id}/shares/${share.id}`, { token: admin.token });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: 'share not found' });
  });
  it("answers 404 for another organization's share, a malformed id and an unknown organization", async () => {
    const a = await orgFixture(t, 'A');
    const b = await orgFixture(t, 'B');
    const shareOfB = (
      await t.post(`/v1/organizations/${b.org.id}/shares`, {
        token: b.admin.token,
        body: { resource_type: 'entity', resource_id: 'light.b' },
      })
    ).body;
    const cross = await t.delete(`/v1/organizations/${a.org.id}/shares/${shareOfB.id}`, { token: a.admin.token });
    expect(cross.status).toBe(404);
    expect(cross.body).toEqual({ message: 'share not found' });
    expect((await t.delete(`/v1/organizations/${a.org.id}/shares/abc`, { token: a.admin.token })).status).toBe(404);
    expect(
      (await t.delete(`/v1/organizations/${UNKNOWN_ORG}/shares/${shareOfB.id}`, { token: a.admin.token })).status,
    ).toBe(404);
    expect((await t.get(`/v1/organizations/${b.org.id}/shares`, { token: b.admin.token })).body).toHaveLength(1);
  });
});
