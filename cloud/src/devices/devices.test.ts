import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { addMember } from '../testing/fixtures.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

type User = Awaited<ReturnType<TestCloud['user']>>;

/** An edge (never connected) whose mirror holds one MQTT-discovered device: the edge reports no user_id. */
async function edgeWithDevice(owner: User, org?: string): Promise<number> {
  const created = await t.post('/v1/edges', { token: owner.token, org, body: { name: 'Home' } });
  expect(created.status).toBe(201);
  const edgeId = created.body.edge.id as number;
  await t.cloud.services.mirror.applyDelta(edgeId, {
    kind: 'device_upsert',
    device: { id: 1, name: 'Desk lamp', manufacturer: 'Acme', model: 'L1', config_entry_id: null, user_id: null },
  });
  return edgeId;
}

const later = (ms: number) => new Date(Date.now() + ms).toISOString();

describe('device.user_id', () => {
  it("is the owner's user id on a personal edge, in the list and by id", async () => {
    const owner = await t.user();
    const edgeId = await edgeWithDevice(owner);
    const list = await t.get('/v1/devices', { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      expect.objectContaining({ id: 1, name: 'Desk lamp', edge_id: edgeId, user_id: owner.id }),
    ]);
    const one = await t.get('/v1/devices/1', { token: owner.token });
    expect(one.status).toBe(200);
    expect(one.body.device).toMatchObject({ id: 1, edge_id: edgeId, user_id: owner.id });
  });

  it("is the organization's owner (its longest-standing admin: the creator) on an organization's edge, whoever paired it", async () => {
    const creator = await t.user();
    const laterAdmin = await t.user();
    const member = await t.user();
    const org = (await t.post('/v1/organizations', { token: creator.token, body: { name: 'Family' } })).body
      .id as string;
    await addMember(t, org, laterAdmin.id, 'admin');
    await addMember(t, org, member.id, 'member');
    await t.sql('UPDATE org_members SET joined_at = ? WHERE org_id = ? AND user_id <> ?', [
      later(60_000),
      org,
      creator.id,
    ]);
    const edgeId = await edgeWithDevice(laterAdmin, org);

    for (const viewer of [creator, laterAdmin, member]) {
      const list = await t.get('/v1/devices', { token: viewer.token, org });
      expect(list.body.map((d: any) => [d.edge_id, d.user_id])).toEqual([[edgeId, creator.id]]);
      expect((await t.get(`/v1/devices/1?edge_id=${edgeId}`, { token: viewer.token })).body.device.user_id).toBe(
        creator.id,
      );
    }

    // The creator steps down: the next admin in joining order owns the organization.
    await t.sql("UPDATE org_members SET role = 'member' WHERE org_id = ? AND user_id = ?", [org, creator.id]);
    expect((await t.get('/v1/devices', { token: member.token, org })).body.map((d: any) => d.user_id)).toEqual([
      laterAdmin.id,
    ]);
  });
});

describe('with no edge in scope', () => {
  it('GET /v1/media-source/browse answers the root listing with no providers; a provider node stays 404', async () => {
    const u = await t.user();
    const org = (await t.post('/v1/organizations', { token: u.token, body: { name: 'Empty' } })).body.id as string;
    const root = {
      title: 'Media Sources',
      media_class: 'directory',
      media_content_type: '',
      media_content_id: 'media-source://',
      thumbnail: null,
      children_media_class: 'directory',
      can_play: false,
      can_expand: true,
      children: [],
    };
    for (const opts of [{}, { org }]) {
      for (const path of [
        '/v1/media-source/browse',
        `/v1/media-source/browse?uri=${encodeURIComponent('media-source://')}`,
      ]) {
        const res = await t.get(path, { token: u.token, ...opts });
        expect(res.status, path).toBe(200);
        expect(res.body).toEqual(root);
      }
    }
    const node = await t.get(`/v1/media-source/browse?uri=${encodeURIComponent('media-source://demo/tones')}`, {
      token: u.token,
    });
    expect(node.status).toBe(404);
    expect(node.body).toEqual({ message: 'no edge in scope' });
  });

  it('GET /v1/config_flow/handlers answers an empty list', async () => {
    const u = await t.user();
    const org = (await t.post('/v1/organizations', { token: u.token, body: { name: 'Empty' } })).body.id as string;
    for (const opts of [{}, { org }]) {
      const res = await t.get('/v1/config_flow/handlers', { token: u.token, ...opts });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    }
  });
});
