import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { TEST_REDIS_URL, redisReachable, testRedisPrefix } from '../testing/redis.ts';

const reachable = await redisReachable();
if (!reachable) console.warn(`skipping replica health tests: no Redis at ${TEST_REDIS_URL}`);

const clouds: TestCloud[] = [];
afterEach(async () => {
  for (const c of clouds.splice(0)) await c.stop();
});

describe.skipIf(!reachable)('health of a cloud replica', () => {
  it('answers 200 while Redis is connected and 503 {error:"redis_unavailable"} once it is lost', async () => {
    process.env.REDIS_PREFIX = testRedisPrefix();
    const t = await startTestCloud({ redisUrl: TEST_REDIS_URL });
    delete process.env.REDIS_PREFIX;
    clouds.push(t);
    expect((await t.get('/healthz')).body).toEqual({ status: 'ok' });
    // Lose the Redis connections the way a network cut would leave them.
    const cluster = (t.cloud as unknown as { scale: { cluster: { redis: { disconnect(): void }; healthy: boolean } } })
      .scale.cluster;
    cluster.redis.disconnect();
    // ioredis reports the loss on the socket's close event, a moment after disconnect() returns.
    await vi.waitFor(() => expect(cluster.healthy).toBe(false), { timeout: 2000 });
    const res = await t.get('/healthz');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'redis_unavailable' });
  });

  it('stays healthy without Redis configured (a single cloud)', async () => {
    const t = await startTestCloud();
    clouds.push(t);
    expect((await t.get('/healthz')).status).toBe(200);
  });
});
