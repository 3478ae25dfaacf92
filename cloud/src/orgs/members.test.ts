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

const GHOST = '11111111-1111-4111-8111-111111111111';

describe('GET /v1/organizations/{id}/members', () => {
  it('lists members with e-mail, name and role to any member', async () => {
    const { admin, member, org } = await orgFixture(t);
    const res = await t.get(`/v1/organizations/${org.id}/members`, { token: member.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        user_id: admin.id,
        email: admin.email,
        name: admin.email.split('@')[0],
        role: 'admin',
        joined_at: expect.any(String),
      },
      {
        user_id: member.id,
        email: member.email,
        name: member.email.split('@')[0],
        role: 'member',
        joined_at: expect.any(String),
      },
    ]);
  });
  it('answers 403 to a non-member, 404 for an unknown organization, 401 without auth', async () => {
    const { outsider, org } = await orgFixture(t);
    const denied = await t.get(`/v1/organizations/${org.id}/members`, { token: outsider.token });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden' });
    const unknown = await t.get(`/v1/organizations/${UNKNOWN_ORG}/members`, { token: outsider.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'organization not found' });
    expect((await t.get(`/v1/organizations/${org.id}/members`)).status).toBe(401);
  });
});

describe('PATCH /v1/organizations/{id}/members/{user_id}', () => {
  it('lets an admin promote and demote members', async () => {
    const { admin, member, org } = await orgFixture(t);
    const up = await t.patch(`/v1/organizations/${org.id}/members/${member.id}`, {
      token: admin.token,
      body: { role: 'admin' },
    });
    expect(up.status).toBe(200);
    expect(up.body).toEqual({
      user_id: member.id,
      email: member.email,
      name: expect.any(String),
      role: 'admin',
      joined_at: expect.any(String),
    });
    // With two admins, the original admin may step down.
    const down = await t.patch(`/v1/organizations/${org.id}/members/${admin.id}`, {
      token: admin.token,
      body: { role: 'member' },
    });
    expect(down.status).toBe(200);
    expect(down.body.role).toBe('member');
    const orgs = (await t.get('/v1/organizations', { token: admin.token })).body;
    expect(orgs[0].role).toBe('member');
  });
  it('refuses to demote the last admin with 409 {message}', async () => {
    const { admin, org } = await orgFixture(t);
    const res = await t.patch(`/v1/organizations/${org.id}/members/${admin.id}`, {
      token: admin.token,
      body: { role: 'member' },
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: 'the last admin of an organization cannot be demoted' });
    const same = await t.patch(`/v1/organizations/${org.id}/members/${admin.id}`, {
      token: admin.token,
      body: { role: 'admin' },
    });
    expect(same.status).toBe(200);
    expect(same.body.role).toBe('admin');
  });
  it('answers 400 for a bad role, 403 to a member, 404 for an unknown member or organization, 401 without auth', async () => {
    const { admin, member, outsider, org } = await orgFixture(t);
    const bad = await t.patch(`/v1/organizations/${org.id}/members/${member.id}`, {
      token: admin.token,
      body: { role: 'owner' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^role: /);
    const byMember = await t.patch(`/v1/organizations/${org.id}/members/${member.id}`, {
      token: member.token,
      body: { role: 'admin' },
    });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual({ error: 'forbidden' });
    const notMember = await t.patch(`/v1/organizations/${org.id}/members/${outsider.id}`, {
      token: admin.token,
      body: { role: 'admin' },
    });
    expect(notMember.status).toBe(404);
    expect(notMember.body).toEqual({ message: 'member not found' });
    expect(
      (await t.patch(`/v1/organizations/${org.id}/members/${GHOST}`, { token: admin.token, body: { role: 'admin' } }))
        .status,
    ).toBe(404);
    expect(
      (
        await t.patch(`/v1/organizations/${UNKNOWN_ORG}/members/${member.id}`, {
          token: admin.token,
          body: { role: 'admin' },
        })
      ).status,
    ).toBe(404);
    expect(
      (await t.patch(`/v1/organizations/${org.id}/members/${member.id}`, { body: { role: 'admin' } })).status,
    ).toBe(401);
    const members = (await t.get(`/v1/organizations/${org.id}/members`, { token: admin.token })).body;
    expect(members.find((m: { user_id: string }) => m.user_id === member.id).role).toBe('member');
  });
});

describe('DELETE /v1/organizations/{id}/members/{user_id}', () => {
  it('lets an admin remove a member, who then loses access', async () => {
    const { admin, member, org } = await orgFixture(t);
    const res = await t.delete(`/v1/organizations/${org.id}/members/${member.id}`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'member removed' });
    expect((await t.get(`/v1/organizations/${org.id}`, { token: member.token })).status).toBe(403);
    expect((await t.get('/v1/organizations', { token: member.token })).body).toEqual([]);
  });
  it('lets a member leave, but not remove others', async () => {
    const { admin, member, org } = await orgFixture(t);
    const other = await t.user();
    await addMember(t, org.id, other.id);
    const kick = await t.delete(`/v1/organizations/${org.id}/members/${other.id}`, { token: member.token });
    expect(kick.status).toBe(403);
    expect(kick.body).toEqual({ error: 'forbidden' });
    const kickAdmin = await t.delete(`/v1/organizations/${org.id}/members/${admin.id}`, { token: member.token });
    expect(kickAdmin.status).toBe(403);
    const leave = await t.delete(`/v1/organizations/${org.id}/members/${member.id}`, { token: member.token });
    expect(leave.status).toBe(200);
    expect(leave.body).toEqual({ message: 'left the organization' });
    const ids = (await t.get(`/v1/organizations/${org.id}/members`, { token: admin.token })).body.map(
      (m: { user_id: string }) => m.user_id,
    );
    expect(ids.sort()).toEqual([admin.id, other.id].sort());
  });
  it('refuses to remove the last admin (also when leaving) with 409, but allows it once another admin exists', async () => {
    const { admin, member, org } = await orgFixture(t);
    const leave = await t.delete(`/v1/organizations/${org.id}/members/${admin.id}`, { token: admin.token });
    expect(leave.status).toBe(409);
    expect(leave.body).toEqual({ message: 'the last admin of an organization cannot be removed' });
    await t.patch(`/v1/organizations/${org.id}/members/${member.id}`, { token: admin.token, body: { role: 'admin' } });
    const again = await t.delete(`/v1/organizations/${org.id}/members/${admin.id}`, { token: admin.token });
    expect(again.status).toBe(200);
    const members = (await t.get(`/v1/organizations/${org.id}/members`, { token: member.token })).body;
    expect(members).toEqual([expect.objectContaining({ user_id: member.id, role: 'admin' })]);
  });
  it("drops the removed member's user-scoped shares in that organization", async () => {
    const { admin, member, org } = await orgFixture(t);
    const share = await t.post(`/v1/organizations/${org.id}/shares`, {
      token: admin.token,
      body: { resource_type: 'entity', resource_id: 'light.porch', user_id: member.id },
    });
    expect(share.status).toBe(201);
    await t.delete(`/v1/organizations/${org.id}/members/${member.id}`, { token: admin.token });
    expect((await t.get(`/v1/organizations/${org.id}/shares`, { token: admin.token })).body).toEqual([]);
  });
  it("drops the shares a departing admin made of their own things (entities, boards), keeps those of the organization's boards", async () => {
    const { admin, member, org } = await orgFixture(t);
    await t.patch(`/v1/organizations/${org.id}/members/${member.id}`, { token: admin.token, body: { role: 'admin' } });
    const own = (
      await t.put('/v1/ui-dashboard', { token: member.token, body: { name: 'my board', config: { views: [] } } })
    ).body.id;
    const orgBoard = (
      await t.put('/v1/ui-dashboard', {
        token: member.token,
        org: org.id,
        body: { name: 'org board', config: { views: [] } },
      })
    ).body.id;
    for (const [type, id] of [
      ['entity', 'light.my_porch'],
      ['dashboard', String(own)],
      ['dashboard', String(orgBoard)],
    ]) {
      const share = await t.post(`/v1/organizations/${org.id}/shares`, {
        token: member.token,
        body: { resource_type: type, resource_id: id, can_edit: true },
      });
      expect(share.status).toBe(201);
    }
    expect((await t.delete(`/v1/organizations/${org.id}/members/${member.id}`, { token: member.token })).status).toBe(
      200,
    );
    const left = (await t.get(`/v1/organizations/${org.id}/shares`, { token: admin.token })).body;
    expect(left.map((s: { resource_type: string; resource_id: string }) => [s.resource_type, s.resource_id])).toEqual([
      ['dashboard', String(orgBoard)],
    ]);
    expect((await t.get(`/v1/ui-dashboard/${own}`, { token: admin.token })).status).toBe(404);
  });
  it('answers 404 for an unknown member or organization, 403 to a non-member, 401 without auth', async () => {
    const { admin, member, outsider, org } = await orgFixture(t);
    const unknown = await t.delete(`/v1/organizations/${org.id}/members/${outsider.id}`, { token: admin.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'member not found' });
    expect(
      (await t.delete(`/v1/organizations/${UNKNOWN_ORG}/members/${member.id}`, { token: admin.token })).status,
    ).toBe(404);
    const foreign = await t.delete(`/v1/organizations/${org.id}/members/${member.id}`, { token: outsider.token });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'forbidden' });
    const self = await t.delete(`/v1/organizations/${org.id}/members/${outsider.id}`, { token: outsider.token });
    expect(self.status).toBe(403);
    expect((await t.delete(`/v1/organizations/${org.id}/members/${member.id}`)).status).toBe(401);
    expect((await t.get(`/v1/organizations/${org.id}/members`, { token: admin.token })).body).toHaveLength(2);
  });
});
