import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeUpgrade } from '@smarthome/protocol/server/upgrade-probe';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

/**
 * Issue #13 item 1: a request asking to switch protocols on a path that is not a WebSocket
 * endpoint used to get no answer, and the cloud kept the socket forever. Every such request
 * now gets an HTTP answer and its connection is closed for good, whatever the path or auth.
 */
let t: TestCloud;
let token: string;
let edgeToken: string;
beforeAll(async () => {
  t = await startTestCloud();
  const owner = await t.user();
  token = owner.token;
  edgeToken = (await t.post('/v1/edges', { token, body: { name: 'Home' } })).body.token;
});
afterAll(async () => {
  await t.stop();
});

describe.each(['websocket', 'h2c'] as const)('an Upgrade: %s request', (upgrade) => {
  const cases: Array<[string, Record<string, string> | undefined, number, (body: any) => void]> = [
    ['/healthz', undefined, 200, (b) => expect(b).toEqual({ status: 'ok' })],
    ['/v1/no-such-route', undefined, 404, (b) => expect(b).toEqual({ message: 'not found' })],
    ['/v1/account', undefined, 401, (b) => expect(b).toEqual({ error: 'unauthorized' })],
    ['/v1/account', { authorization: 'Bearer not-a-token' }, 401, (b) => expect(b).toEqual({ error: 'unauthorized' })],
  ];
  it.each(cases)('to %s (headers %j) answers %i and closes the connection', async (path, headers, status, check) => {
    const res = await probeUpgrade(t.url, path, { upgrade, headers });
    expect(res.status).toBe(status);
    check(res.body);
    expect(res.closed).toBe(true);
  });
  it('with a valid token is answered like a plain request, then closed', async () => {
    const res = await probeUpgrade(t.url, '/v1/account', { upgrade, headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ email: expect.stringContaining('@') });
    expect(res.closed).toBe(true);
  });
});

describe('the WebSocket endpoints', () => {
  it('refuse a tunnel without a valid edge token with 401 {error} and close', async () => {
    for (const headers of [
      undefined,
      { authorization: 'Bearer shp_edge_wrong' },
      { authorization: `Bearer ${token}` },
    ]) {
      const res = await probeUpgrade(t.url, '/v1/edge/connect', { upgrade: 'websocket', headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
      expect(res.closed).toBe(true);
    }
  });
  it('answer an h2c upgrade (not theirs to take) like a plain request, and close', async () => {
    for (const [path, headers] of [
      ['/v1/edge/connect', { authorization: `Bearer ${edgeToken}` }],
      ['/v1/websocket', undefined],
    ] as const) {
      const res = await probeUpgrade(t.url, path, { upgrade: 'h2c', headers });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'not found' });
      expect(res.closed).toBe(true);
    }
  });
  it('still switch protocols for a real WebSocket client', async () => {
    const res = await probeUpgrade(t.url, '/v1/websocket', { upgrade: 'websocket', waitMs: 200 });
    expect(res.status).toBe(101);
    expect(res.closed).toBe(false);
  });
});

it('keeps serving after a burst of unanswerable upgrades', async () => {
  const results = await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      probeUpgrade(t.url, i % 2 ? '/healthz' : '/nope', { upgrade: i % 3 ? 'websocket' : 'h2c' }),
    ),
  );
  expect(results.every((r) => r.closed && r.status >= 200)).toBe(true);
  expect((await t.get('/healthz')).body).toEqual({ status: 'ok' });
});
