import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { sampleSnapshot } from '../testing/fixtures.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

/** Raw bytes and headers (fetch would decompress on its own). */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      })
      .on('error', reject);
  });
}

const lampState = (n: number, state: string) => ({
  entity_id: `light.lamp_${n}`,
  name: `Lamp ${n}`,
  domain: 'light',
  platform: 'demo',
  state,
  attributes: { brightness: 9 },
});

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
      [a.id, 'light.lamp_1'],
      [a.id, 'light.lamp_2'],
      [a.id, 'light.lamp_3'],
      [b.id, 'light.lamp_1'],
      [b.id, 'light.lamp_2'],
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
    expect(changed.body.find((s: any) => s.edge_id === b.id && s.entity_id === 'light.lamp_2')).toMatchObject({
      state: 'on',
      attributes: { brightness: 9 },
    });
    expect(changed.body).toEqual(await t.cloud.services.access.states(owner.id));

    // A revoked edge's mirror is cleared: its states go, and the cached copy with them.
    await t.cloud.services.mirror.clear(b.id);
    const cleared = await t.get('/v1/entities/states', { token: owner.token });
    expect(cleared.body.map((s: any) => s.edge_id)).toEqual([a.id, a.id, a.id]);
  });

  it('stays current when another replica writes the mirror (the version lives in the shared database)', async () => {
    const owner = await t.user();
    const { edge } = await t.cloud.services.edges.create(
      { kind: 'personal', userId: owner.id, orgId: null },
      { name: 'E' },
    );
    await t.cloud.services.mirror.replaceSnapshot(edge.id, sampleSnapshot({ devices: 1 }));
    const other = await startTestCloud(t.cloud.config.databaseUrl ? { databaseUrl: t.cloud.config.databaseUrl } : {}, {
      dataDir: t.dataDir,
    });
    try {
      expect((await other.get('/v1/entities/states', { token: owner.token })).body.map((s: any) => s.state)).toEqual([
        'off',
      ]);
      await t.cloud.services.mirror.applyDelta(edge.id, { kind: 'state', state: lampState(1, 'on') }, 2);
      expect((await other.get('/v1/entities/states', { token: owner.token })).body.map((s: any) => s.state)).toEqual([
        'on',
      ]);
    } finally {
      await other.cloud.stop();
    }
  });

  it('gzips the listing for clients that accept it (the same JSON), and not for those that refuse it', async () => {
    const owner = await t.user();
    const { edge } = await t.cloud.services.edges.create(
      { kind: 'personal', userId: owner.id, orgId: null },
      { name: 'Big' },
    );
    await t.cloud.services.mirror.replaceSnapshot(edge.id, sampleSnapshot({ devices: 200 }));
    const auth = { authorization: `Bearer ${owner.token}` };
    const plain = await rawGet(`${t.url}/v1/entities/states`, auth);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(plain.body.toString())).toHaveLength(200);
    const zipped = await rawGet(`${t.url}/v1/entities/states`, { ...auth, 'accept-encoding': 'br;q=1, gzip;q=0.8' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(zipped.headers.etag).toBe(plain.headers.etag);
    expect(zipped.body.length).toBeLessThan(plain.body.length / 5);
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    const refused = await rawGet(`${t.url}/v1/entities/states`, { ...auth, 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body.equals(plain.body)).toBe(true);
  });
});
