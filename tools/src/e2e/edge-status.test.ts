import { afterEach, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import { TEST_REDIS_URL, deleteTestPrefix, redisReachable, testRedisPrefix } from '@smarthome/cloud/testing/redis';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import { until } from './support.ts';

/**
 * The edge status the cloud reports follows the tunnels (in-process; cloud-restart.test.ts
 * does it with killed processes): a cloud without Redis starts with no edge online, and a
 * replica that holds an edge's tunnel puts back `online` if something marked it offline.
 */
const redis = await redisReachable();
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
});

async function cloud(
  overrides: Parameters<typeof startTestCloud>[0] = {},
  opts: Parameters<typeof startTestCloud>[1] = {},
): Promise<TestCloud> {
  const t = await startTestCloud(overrides, opts);
  cleanups.push(() => t.stop());
  return t;
}

async function edgeStatus(t: TestCloud, id: number): Promise<string> {
  return (await t.sqlOne<{ status: string }>('SELECT status FROM edges WHERE id = ?', [id]))!.status;
}

describe('edge status', () => {
  it('a cloud without Redis starts with every edge offline: one left online by a crash has no tunnel', async () => {
    const first = await cloud();
    const u = await first.user();
    const created = (await first.post('/v1/edges', { token: u.token, body: { name: 'Home' } })).body;
    const revoked = (await first.post('/v1/edges', { token: u.token, body: { name: 'Gone' } })).body;
    await first.delete(`/v1/edges/${revoked.edge.id}`, { token: u.token });
    // What a SIGKILL leaves behind: the row still says online.
    await first.sql("UPDATE edges SET status = 'online' WHERE id = ?", [created.edge.id]);
    const second = await cloud(first.cloud.config.databaseUrl ? { databaseUrl: first.cloud.config.databaseUrl } : {}, {
      dataDir: first.dataDir,
    });
    expect((await second.get(`/v1/edges/${created.edge.id}`, { token: u.token })).body.status).toBe('offline');
    expect(await edgeStatus(second, revoked.edge.id)).toBe('revoked');
  });

  it.skipIf(!redis)("a replica holding an edge's tunnel marks it online again when it reads offline", async () => {
    const prefix = testRedisPrefix();
    cleanups.push(() => deleteTestPrefix(prefix));
    process.env.REDIS_PREFIX = prefix;
    const t = await cloud({ redisUrl: TEST_REDIS_URL }).finally(() => {
      delete process.env.REDIS_PREFIX;
    });
    const u = await t.user();
    const created = (await t.post('/v1/edges', { token: u.token, body: { name: 'Home' } })).body;
    const data = tempDir();
    cleanups.push(data.cleanup);
    const edge = await startEdge(data.dir, { cloudUrl: t.url, token: created.token });
    cleanups.push(() => edge.stop());
    await until(async () => (await edgeStatus(t, created.edge.id)) === 'online', 10_000, 'online');
    // A sweeper's mistake (e.g. while Redis had lost the ownership keys).
    await t.sql("UPDATE edges SET status = 'offline' WHERE id = ?", [created.edge.id]);
    await until(
      async () => (await edgeStatus(t, created.edge.id)) === 'online',
      12_000,
      'online again (the ownership heartbeat runs every 5 s)',
    );
    expect((await t.get(`/v1/config_flow/handlers?edge_id=${created.edge.id}`, { token: u.token })).status).toBe(200);
  });
});
