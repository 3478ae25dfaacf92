import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { sampleSnapshot } from '../edges/testing.ts';

let t: TestCloud;
beforeAll(async () => { t = await startTestCloud(); });
afterAll(async () => { await t.stop(); });

const lampState = (n: number, state: string) => ({ entity_id: `light.lamp_${n}`, name: `Lamp ${n}`, domain: 'light', platform: 'demo', state, attributes: { brightness: 9 } });

describe('GET /v1/entities/states from the per-edge cache', () => {
  it('answers what the mirror holds, with an ETag; 304 for If-None-Match until something visible changes', async () => {
    const owner = await t.user();
    const scope = { kind: 'personal' as const, userId: owner.id, orgId: null };
    const { edge: a } = await t.cloud.services.edges.create(scope, { name: 'A' });
    const { edge: b } = await t.cloud.services.edges.create(scope, { name: 'B' });
    await t.cloud.services.mirror.replaceSnapshot(b.id, sampleSnapshot({ devices: 2 }));
    await t.cloud.services.mirror.replaceSnapshot(a.id, sampleSnapshot({ devices: 3 }));

    const first = await t.get('/v1/entities/states', { token: owner.token });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^application\/json/);
    expect(first.body).toEqual(await t.cloud.services.access.states(owner.id));
    expect(first.body.map((s: any) => [s.edge_id, s.entity_id])).toEqual([
      [a.id, 'light.lamp_1'], [a.id, 'light.lamp_2'], [a.id, 'light.lamp_3'], [b.id, 'light.lamp_1'], [b.id, 'light.lamp_2'],
    ]);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/".+"$/);

    const again = await t.get('/v1/entities/states', { token: owner.token, headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');

    await t.cloud.services.mirror.applyDelta(b.id, { kind: 'state', state: lampState(2, 'on') }, 7);
    const changed = await t.get('/v1/entities/states', { token: owner.token, headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(changed.body.find((s: any) => s.edge_id === b.id && s.entity_id === 'light.lamp_2')).toMatchObject({ state: 'on', attributes: { brightness: 9 } });
    expect(changed.body).toEqual(await t.cloud.services.access.states(owner.id));

    // A revoked edge's mirror is cleared: its states go, and the cached copy with them.
    await t.cloud.services.mirror.clear(b.id);
    const cleared = await t.get('/v1/entities/states', { token: owner.token });
    expect(cleared.body.map((s: any) => s.edge_id)).toEqual([a.id, a.id, a.id]);
  });

  it('stays current when another replica writes the mirror (the version lives in the shared database)', async () => {
    const owner = await t.user();
    const { edge } = await t.cloud.services.edges.create({ kind: 'personal', userId: owner.id, orgId: null }, { name: 'E' });
    await t.cloud.services.mirror.replaceSnapshot(edge.id, sampleSnapshot({ devices: 1 }));
    const other = await startTestCloud(t.cloud.config.databaseUrl ? { databaseUrl: t.cloud.config.databaseUrl } : {}, { dataDir: t.dataDir });
    try {
      expect((await other.get('/v1/entities/states', { token: owner.token })).body.map((s: any) => s.state)).toEqual(['off']);
      await t.cloud.services.mirror.applyDelta(edge.id, { kind: 'state', state: lampState(1, 'on') }, 2);
      expect((await other.get('/v1/entities/states', { token: owner.token })).body.map((s: any) => s.state)).toEqual(['on']);
    } finally {
      await other.cloud.stop();
    }
  });
});
