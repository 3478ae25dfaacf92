import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { makeOrg, share } from '../testing/fixtures.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

const config = { views: [{ title: 'Living room', cards: [{ type: 'entities', entities: ['light.lamp'] }] }] };

describe('PUT /v1/ui-dashboard', () => {
  it('creates with defaults, then replaces by name (200 both times, same id)', async () => {
    const u = await t.user();
    const created = await t.put('/v1/ui-dashboard', { token: u.token, body: { name: 'home', config } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'home',
      type: 'dashboard',
      title: 'home',
      icon: 'mdi:view-dashboard',
      url: null,
      config,
      user_id: u.id,
      org_id: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const next = {
      views: [
        { title: 'Kitchen', cards: [] },
        { title: 'Garden', cards: [{ type: 'map' }] },
      ],
    };
    const replaced = await t.put('/v1/ui-dashboard', {
      token: u.token,
      body: { name: 'home', config: next, title: 'My home', icon: 'mdi:home' },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      id: created.body.id,
      title: 'My home',
      icon: 'mdi:home',
      config: next,
      created_at: created.body.created_at,
    });
    const list = await t.get('/v1/ui-dashboard', { token: u.token });
    expect(list.body.map((d: any) => [d.id, d.name])).toEqual([[created.body.id, 'home']]);
  });

  it('updates by id: renames, keeps omitted optional fields, 409 on a name clash', async () => {
    const u = await t.user();
    const a = (
      await t.put('/v1/ui-dashboard', { token: u.token, body: { name: 'a', config, icon: 'mdi:star', type: 'panel' } })
    ).body;
    await t.put('/v1/ui-dashboard', { token: u.token, body: { name: 'b', config } });
    const renamed = await t.put('/v1/ui-dashboard', {
      token: u.token,
      body: { id: a.id, name: 'a2', config: { views: [] } },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      id: a.id,
      name: 'a2',
      icon: 'mdi:star',
      type: 'panel',
      title: 'a',
      config: { views: [] },
    });
    const clash = await t.put('/v1/ui-dashboard', { token: u.token, body: { id: a.id, name: 'b', config } });
    expect(clash.status).toBe(409);
    expect(clash.body.message).toMatch(/already exists/);
  });

  it('validates the body with 400 {message} pointing at the field', async () => {
    const u = await t.user();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: 'x' }, /^config: /],
      [{ name: 'x', config: {} }, /^config\.views: /],
      [{ name: 'x', config: { views: 'nope' } }, /^config\.views: /],
      [{ name: 'x', config: { views: [{ cards: [] }] } }, /^config\.views\[0\]\.title: /],
      [{ name: 'x', config: { views: [{ title: 'v', cards: 'no' }] } }, /^config\.views\[0\]\.cards: /],
      [{ name: 'x', config: { views: [{ title: 'v', cards: [1] }] } }, /^config\.views\[0\]\.cards\[0\]: /],
      [{ name: '', config }, /^name: /],
      [{ config }, /^name: /],
      [{ id: 'one', name: 'x', config }, /^id: /],
    ];
    for (const [body, message] of cases) {
      const res = await t.put('/v1/ui-dashboard', { token: u.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(message);
    }
  });

  it('answers 404 for an id out of scope, 401 without a token, 403 for a foreign organization', async () => {
    const u = await t.user();
    const other = await t.user();
    const theirs = (await t.put('/v1/ui-dashboard', { token: other.token, body: { name: 'theirs', config } })).body;
    const res = await t.put('/v1/ui-dashboard', { token: u.token, body: { id: theirs.id, name: 'mine now', config } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'dashboard not found' });
    expect((await t.put('/v1/ui-dashboard', { token: u.token, body: { id: 987654, name: 'x', config } })).status).toBe(
      404,
    );
    expect((await t.get(`/v1/ui-dashboard/${theirs.id}`, { token: other.token })).body.name).toBe('theirs');

    const noAuth = await t.put('/v1/ui-dashboard', { body: { name: 'x', config } });
    expect(noAuth.status).toBe(401);
    expect(noAuth.body).toEqual({ error: 'unauthorized' });
    const otherOrg = await makeOrg(t, other);
    const foreign = await t.put('/v1/ui-dashboard', { token: u.token, org: otherOrg, body: { name: 'x', config } });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: 'forbidden' });
  });
});

describe('org scope and shares', () => {
  it("scopes by organization: org_id set, visible to members, names per scope, members cannot replace others' dashboards", async () => {
    const admin = await t.user();
    const member = await t.user();
    const org = await makeOrg(t, admin, [member]);
    const orgDash = await t.put('/v1/ui-dashboard', { token: admin.token, org, body: { name: 'ops', config } });
    expect(orgDash.status).toBe(200);
    expect(orgDash.body.org_id).toBe(org);
    // the same name in the personal scope is a different dashboard
    const personal = await t.put('/v1/ui-dashboard', { token: admin.token, body: { name: 'ops', config } });
    expect(personal.body.id).not.toBe(orgDash.body.id);
    expect(personal.body.org_id).toBeNull();

    const memberList = await t.get('/v1/ui-dashboard', { token: member.token, org });
    expect(memberList.body.map((d: any) => d.id)).toEqual([orgDash.body.id]);
    expect((await t.get('/v1/ui-dashboard', { token: member.token })).body).toEqual([]);
    expect((await t.get('/v1/ui-dashboard', { token: admin.token })).body.map((d: any) => d.id)).toEqual([
      personal.body.id,
    ]);
    expect((await t.get(`/v1/ui-dashboard/${orgDash.body.id}`, { token: member.token, org })).status).toBe(200);
    expect((await t.get(`/v1/ui-dashboard/${orgDash.body.id}`, { token: member.token })).status).toBe(404);

    const replace = await t.put('/v1/ui-dashboard', {
      token: member.token,
      org,
      body: { name: 'ops', config: { views: [] } },
    });
    expect(replace.status).toBe(403);
    expect(replace.body).toEqual({ error: 'forbidden' });
    const byId = await t.put('/v1/ui-dashboard', {
      token: member.token,
      org,
      body: { id: orgDash.body.id, name: 'ops', config: { views: [] } },
    });
    expect(byId.status).toBe(403);
    expect((await t.delete(`/v1/ui-dashboard/${orgDash.body.id}`, { token: member.token, org })).status).toBe(403);
    expect((await t.get(`/v1/ui-dashboard/${orgDash.body.id}`, { token: admin.token, org })).body.config).toEqual(
      config,
    );
  });

  it('lists dashboards shared with the caller; can_edit allows updates, never deletion', async () => {
    const owner = await t.user();
    const viewer = await t.user();
    const editor = await t.user();
    const outsider = await t.user();
    const org = await makeOrg(t, owner, [viewer, editor, outsider]);
    const otherOrg = await makeOrg(t, viewer);
    const dash = (await t.put('/v1/ui-dashboard', { token: owner.token, body: { name: 'shared', config } })).body;
    await share(t, org, 'dashboard', dash.id, { view: true, userId: viewer.id }, owner.id);
    await share(t, org, 'dashboard', dash.id, { edit: true, userId: editor.id }, owner.id);

    const viewerList = await t.get('/v1/ui-dashboard', { token: viewer.token });
    expect(viewerList.body.map((d: any) => d.id)).toEqual([dash.id]);
    expect((await t.get('/v1/ui-dashboard', { token: viewer.token, org })).body.map((d: any) => d.id)).toEqual([
      dash.id,
    ]);
    // shared into `org`, so not part of another organization's view
    expect((await t.get('/v1/ui-dashboard', { token: viewer.token, org: otherOrg })).body).toEqual([]);
    expect((await t.get('/v1/ui-dashboard', { token: outsider.token, org })).body).toEqual([]);
    expect((await t.get(`/v1/ui-dashboard/${dash.id}`, { token: outsider.token, org })).status).toBe(404);

    expect((await t.get(`/v1/ui-dashboard/${dash.id}`, { token: viewer.token })).body.name).toBe('shared');
    const viewerEdit = await t.put('/v1/ui-dashboard', {
      token: viewer.token,
      body: { id: dash.id, name: 'shared', config: { views: [] } },
    });
    expect(viewerEdit.status).toBe(403);
    const editorEdit = await t.put('/v1/ui-dashboard', {
      token: editor.token,
      body: { id: dash.id, name: 'shared', config: { views: [] } },
    });
    expect(editorEdit.status).toBe(200);
    expect(editorEdit.body).toMatchObject({ id: dash.id, user_id: owner.id, config: { views: [] } });
    expect((await t.delete(`/v1/ui-dashboard/${dash.id}`, { token: editor.token })).status).toBe(403);

    const del = await t.delete(`/v1/ui-dashboard/${dash.id}`, { token: owner.token });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: 'dashboard deleted' });
    const leftover = await t.sqlOne<{ n: number }>(
      "SELECT COUNT(*) AS n FROM shares WHERE resource_type = 'dashboard' AND resource_id = ?",
      [String(dash.id)],
    );
    expect(leftover?.n).toBe(0);
    expect((await t.get('/v1/ui-dashboard', { token: viewer.token })).body).toEqual([]);
  });
});

describe('GET / DELETE /v1/ui-dashboard/{id}', () => {
  it('gets and deletes; 404 {message} for unknown or malformed ids; 401; 403 foreign organization', async () => {
    const u = await t.user();
    const dash = (await t.put('/v1/ui-dashboard', { token: u.token, body: { name: 'd', config } })).body;
    const got = await t.get(`/v1/ui-dashboard/${dash.id}`, { token: u.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(dash);
    for (const id of ['424242', 'x1', '-1']) {
      const res = await t.get(`/v1/ui-dashboard/${id}`, { token: u.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: expect.any(String) });
      expect((await t.delete(`/v1/ui-dashboard/${id}`, { token: u.token })).status).toBe(404);
    }
    expect((await t.get(`/v1/ui-dashboard/${dash.id}`)).status).toBe(401);
    expect((await t.delete(`/v1/ui-dashboard/${dash.id}`)).body).toEqual({ error: 'unauthorized' });
    expect((await t.get('/v1/ui-dashboard')).status).toBe(401);
    const other = await t.user();
    const otherOrg = await makeOrg(t, other);
    expect((await t.get(`/v1/ui-dashboard/${dash.id}`, { token: u.token, org: otherOrg })).status).toBe(403);
    expect((await t.delete(`/v1/ui-dashboard/${dash.id}`, { token: u.token, org: otherOrg })).status).toBe(403);
    expect((await t.get('/v1/ui-dashboard', { token: u.token, org: otherOrg })).body).toEqual({ error: 'forbidden' });

    expect((await t.delete(`/v1/ui-dashboard/${dash.id}`, { token: u.token })).status).toBe(200);
    expect((await t.get(`/v1/ui-dashboard/${dash.id}`, { token: u.token })).status).toBe(404);
  });
});
