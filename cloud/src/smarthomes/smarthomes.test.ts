import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { addMember, makeOrg, sampleSnapshot } from '../testing/fixtures.ts';
import { decodeCursor, encodeCursor } from './routes.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

describe('GET /v2/smarthomes', () => {
  it('one item per edge of the scope with mirrored device and entity counts', async () => {
    const u = await t.user();
    const a = (await t.post('/v1/edges', { token: u.token, body: { name: 'House' } })).body.edge;
    const b = (await t.post('/v1/edges', { token: u.token, body: { name: 'Cabin' } })).body.edge;
    await t.cloud.services.mirror.replaceSnapshot(a.id, sampleSnapshot({ devices: 3 }));
    await t.cloud.services.mirror.applyDelta(a.id, {
      kind: 'state',
      state: { entity_id: 'sensor.extra', name: 'x', domain: 'sensor', platform: 'p', state: '1', attributes: {} },
    });
    const res = await t.get('/v2/smarthomes', { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      items: [
        { id: a.id, name: 'House', org_id: null, location: 'home', status: 'pending', devices: 3, entities: 4 },
        { id: b.id, name: 'Cabin', org_id: null, location: 'home', status: 'pending', devices: 0, entities: 0 },
      ],
      next_cursor: null,
    });
  });

  it('paginates with an opaque cursor: no duplicates, no gaps', async () => {
    const u = await t.user();
    const org = await makeOrg(t, u);
    const member = await t.user();
    await addMember(t, org, member.id, 'member');
    const ids: number[] = [];
    for (let i = 0; i < 7; i++)
      ids.push((await t.post('/v1/edges', { token: u.token, org, body: { name: `E${i}` } })).body.edge.id);
    await t.post('/v1/edges', { token: u.token, body: { name: 'personal, not in the org' } });
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=3&cursor=${cursor}` : '?limit=3';
      const res = await t.get(`/v2/smarthomes${q}`, { token: member.token, org });
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(3);
      seen.push(
        ...res.body.items.map((i: { id: number; org_id: string }) => {
          expect(i.org_id).toBe(org);
          return i.id;
        }),
      );
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
    // exactly one full page → no next page
    const exact = await t.get('/v2/smarthomes?limit=7', { token: u.token, org });
    expect(exact.body.items).toHaveLength(7);
    expect(exact.body.next_cursor).toBeNull();
    const dflt = await t.get('/v2/smarthomes', { token: u.token, org });
    expect(dflt.body.items).toHaveLength(7);
  });

  it('400 {message} for a bad cursor or limit', async () => {
    const u = await t.user();
    for (const q of [
      '?cursor=garbage!',
      '?cursor=Zm9v',
      `?cursor=${Buffer.from('e:-1').toString('base64url')}`,
      '?limit=0',
      '?limit=201',
      '?limit=abc',
      `?cursor=${'a'.repeat(300)}`,
    ]) {
      const res = await t.get(`/v2/smarthomes${q}`, { token: u.token });
      expect(res.status, q).toBe(400);
      expect(typeof res.body.message).toBe('string');
    }
  });

  it('401 without auth, 403 for a foreign organization', async () => {
    expect((await t.get('/v2/smarthomes')).status).toBe(401);
    const owner = await t.user();
    const other = await t.user();
    const org = await makeOrg(t, owner);
    const res = await t.get('/v2/smarthomes', { token: other.token, org });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden' });
  });

  it('cursor encoding round-trips and is opaque', () => {
    expect(decodeCursor(encodeCursor(42))).toBe(42);
    expect(encodeCursor(42)).not.toContain('42');
  });
});
