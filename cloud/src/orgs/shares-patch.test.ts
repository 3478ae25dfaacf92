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

type Fixture = Awaited<ReturnType<typeof orgFixture>>;

async function makeShare(f: Fixture, body: object, token = f.admin.token) {
  const res = await t.post(`/v1/organizations/${f.org.id}/shares`, { token, body });
  expect(res.status).toBe(201);
  return res.body as { id: number; user_id: string | null; [k: string]: unknown };
}
const listed = async (f: Fixture) =>
  (await t.get(`/v1/organizations/${f.org.id}/shares`, { token: f.admin.token })).body;

describe('PATCH /v1/organizations/{id}/shares/{share_id}', () => {
  it('changes the flags in place: same id, resource and created_at; the answer is the updated share', async () => {
    const f = await orgFixture(t);
    const share = await makeShare(f, { resource_type: 'entity', resource_id: 'light.hall' });
    const path = `/v1/organizations/${f.org.id}/shares/${share.id}`;
    const res = await t.patch(path, { token: f.admin.token, body: { can_control: true, can_edit: true } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...share, can_control: true, can_edit: true });
    expect(await listed(f)).toEqual([res.body]);
    const narrowed = await t.patch(path, { token: f.admin.token, body: { can_view: false, can_edit: false } });
    expect(narrowed.body).toEqual({ ...share, can_view: false, can_control: true, can_edit: false });
    // an empty body changes nothing
    const same = await t.patch(path, { token: f.admin.token, body: {} });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(narrowed.body);
    expect(await listed(f)).toEqual([narrowed.body]);
  });

  it('moves a share to one member or to every member; 409 when that scope is taken, 400 for a non-member', async () => {
    const f = await orgFixture(t);
    const forAll = await makeShare(f, { resource_type: 'device', resource_id: 'dev-1' });
    const path = `/v1/organizations/${f.org.id}/shares/${forAll.id}`;
    const one = await t.patch(path, { token: f.admin.token, body: { user_id: f.member.id } });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ ...forAll, user_id: f.member.id });
    const back = await t.patch(path, { token: f.admin.token, body: { user_id: null } });
    expect(back.body).toEqual(forAll);

    const forMember = await makeShare(f, { resource_type: 'device', resource_id: 'dev-1', user_id: f.member.id });
    const taken = await t.patch(path, { token: f.admin.token, body: { user_id: f.member.id } });
    expect(taken.status).toBe(409);
    expect(taken.body.message).toMatch(new RegExp(`already shared with the same scope \\(share ${forMember.id}\\)`));
    const stranger = await t.patch(path, { token: f.admin.token, body: { user_id: f.outsider.id } });
    expect(stranger.status).toBe(400);
    expect(stranger.body).toEqual({ message: 'user_id: not a member of this organization' });
    expect(await listed(f)).toEqual([forAll, forMember]);
  });

  it('answers 400 {message} for non-boolean flags, no flag left, and fields that name the resource; nothing changes', async () => {
    const f = await orgFixture(t);
    const share = await makeShare(f, { resource_type: 'entity', resource_id: 'light.a', can_control: true });
    const cases: Array<[unknown, RegExp]> = [
      [{ can_view: 'yes' }, /^can_view: /],
      [{ user_id: 7 }, /^user_id: /],
      [{ can_view: false, can_control: false }, /at least one of/],
      [{ resource_id: 'light.b' }, /resource_id/],
      [{ resource_type: 'device' }, /resource_type/],
      [{ id: 99 }, /"id"/],
    ];
    for (const [body, message] of cases) {
      const res = await t.patch(`/v1/organizations/${f.org.id}/shares/${share.id}`, { token: f.admin.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ message: expect.stringMatching(message) });
    }
    const notJson = await t.request('PATCH', `/v1/organizations/${f.org.id}/shares/${share.id}`, {
      token: f.admin.token,
      headers: { 'content-type': 'application/json' },
      raw: '{',
    });
    expect(notJson.status).toBe(400);
    expect(await listed(f)).toEqual([share]);
  });

  it("answers 403 to members and outsiders, 404 for another organization's share, unknown and malformed ids, 401 without auth", async () => {
    const a = await orgFixture(t, 'A');
    const b = await orgFixture(t, 'B');
    const shareOfB = await makeShare(b, { resource_type: 'entity', resource_id: 'light.b' });
    const body = { can_edit: true };
    const ofB = `/v1/organizations/${b.org.id}/shares/${shareOfB.id}`;
    const byMember = await t.patch(ofB, { token: b.member.token, body });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual({ error: 'forbidden' });
    expect((await t.patch(ofB, { token: a.admin.token, body })).status).toBe(403);
    // B's share through A's organization, where A's admin is an admin: as if it did not exist
    const cross = await t.patch(`/v1/organizations/${a.org.id}/shares/${shareOfB.id}`, { token: a.admin.token, body });
    expect(cross.status).toBe(404);
    expect(cross.body).toEqual({ message: 'share not found' });
    for (const id of ['999999', 'abc', '1.5']) {
      const res = await t.patch(`/v1/organizations/${a.org.id}/shares/${id}`, { token: a.admin.token, body });
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual({ message: expect.any(String) });
    }
    const unknown = await t.patch(`/v1/organizations/${UNKNOWN_ORG}/shares/${shareOfB.id}`, {
      token: a.admin.token,
      body,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'organization not found' });
    const anon = await t.patch(ofB, { body });
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ error: 'unauthorized' });
    expect(await listed(b)).toEqual([shareOfB]);
  });

  it("lets any admin narrow a share, but widening another admin's entity share needs the admin who made it", async () => {
    const f = await orgFixture(t);
    const second = await t.user();
    await addMember(t, f.org.id, second.id, 'admin');
    const share = await makeShare(f, { resource_type: 'entity', resource_id: 'light.mine', can_control: true });
    const path = `/v1/organizations/${f.org.id}/shares/${share.id}`;
    const narrowed = await t.patch(path, { token: second.token, body: { can_control: false } });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.can_control).toBe(false);
    for (const body of [{ can_control: true }, { user_id: f.member.id }]) {
      const denied = await t.patch(path, { token: second.token, body });
      expect(denied.status, JSON.stringify(body)).toBe(403);
      expect(denied.body).toEqual({ error: 'forbidden' });
    }
    const widened = await t.patch(path, { token: f.admin.token, body: { can_control: true } });
    expect(widened.body).toEqual(share);
  });

  it('widening a dashboard share asks what creating it asks: may the caller manage the dashboard', async () => {
    const f = await orgFixture(t);
    const second = await t.user();
    await addMember(t, f.org.id, second.id, 'admin');
    const board = async (token: string, name: string, org?: string) =>
      String((await t.put('/v1/ui-dashboard', { token, org, body: { name, config: { views: [] } } })).body.id);
    const orgBoard = await makeShare(f, {
      resource_type: 'dashboard',
      resource_id: await board(f.admin.token, 'team', f.org.id),
    });
    const personal = await makeShare(f, {
      resource_type: 'dashboard',
      resource_id: await board(f.admin.token, 'mine'),
    });
    const patch = (id: number, body: object) =>
      t.patch(`/v1/organizations/${f.org.id}/shares/${id}`, { token: second.token, body });
    // the organization's board: every admin manages it
    expect((await patch(orgBoard.id, { can_edit: true })).body).toEqual({ ...orgBoard, can_edit: true });
    // the first admin's personal board: the second admin sees it through the share, may not manage it
    const denied = await patch(personal.id, { can_edit: true });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden' });
    expect((await patch(personal.id, { can_view: true })).status).toBe(200);
    expect(await listed(f)).toEqual([{ ...orgBoard, can_edit: true }, personal]);
  });
});
