import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../log.ts';
import { LoginThrottle } from '../auth/throttle.ts';
import { EdgeOfflineError, EdgeTimeoutError, type RpcResult } from '../tunnel/connection.ts';
import type { EdgeEvent, StateChanged } from '../tunnel/hub.ts';
import { Cluster } from './cluster.ts';
import { ClusterEdges, type LocalTunnels } from './edges.ts';
import { RedisFailureStore } from './failure-store.ts';
import { RedisWebhookRateLimiter } from './webhook-limiter.ts';
import { StaleEdgeSweeper } from './sweeper.ts';
import { TEST_REDIS_URL, deletePrefix, redisReachable, testRedisPrefix } from '../testing/redis.ts';

/** The Redis-backed scale-out pieces against the machine's real Redis, under a random key prefix. */
const reachable = await redisReachable();
if (!reachable)
  console.warn(`SKIPPED cloud/src/scale tests: no Redis at ${TEST_REDIS_URL} (start redis-server or set REDIS_URL)`);

const log = createLogger('scale-test', { silent: !process.env.DEBUG });
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function clusters(n: number, prefix = testRedisPrefix()): Promise<Cluster[]> {
  const out: Cluster[] = [];
  for (let i = 0; i < n; i++) {
    const c = new Cluster({ url: TEST_REDIS_URL, prefix, replicaId: `r${i}-${prefix}`, log });
    await c.start();
    cleanups.push(() => c.stop());
    out.push(c);
  }
  cleanups.push(() => deletePrefix(out[0].redis, prefix));
  return out;
}

/** A stand-in for TunnelHub: a set of locally connected edges and a request handler. */
class FakeTunnels extends EventEmitter implements LocalTunnels {
  readonly connected = new Set<number>();
  readonly dropped: Array<{ edgeId: number; reason: string; code?: number }> = [];
  handler: (edgeId: number, req: { method: string; path: string }) => Promise<RpcResult> = async (edgeId, req) => ({
    status: 200,
    body: { edgeId, path: req.path },
  });
  async requestLocal(edgeId: number, req: any): Promise<RpcResult> {
    if (!this.connected.has(edgeId)) throw new EdgeOfflineError();
    return this.handler(edgeId, req);
  }
  disconnectLocal(edgeId: number, reason: string, code?: number): void {
    if (this.connected.delete(edgeId)) this.dropped.push({ edgeId, reason, code });
  }
}

async function bridges(n: number, opts: { ownershipTtlMs?: number; forwardMarginMs?: number } = {}) {
  return (await clusters(n)).map((cluster) => {
    const local = new FakeTunnels();
    const edges = new ClusterEdges({ cluster, local, log, ...opts });
    edges.start();
    cleanups.push(() => edges.stop());
    return { cluster, local, edges };
  });
}

async function until<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  ms = 3000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const ORIGIN = { via: 'cloud' as const, user_id: null, remote_addr: null };
const GET = { method: 'GET' as const, path: '/api/states', origin: ORIGIN };

describe.skipIf(!reachable)('RedisFailureStore', () => {
  it('counts failures and locks across replicas, and clears', async () => {
    const [a, b] = await clusters(2);
    const sa = new RedisFailureStore(a);
    const sb = new RedisFailureStore(b);
    const lock = (n: number) => (n <= 2 ? 0 : 1000 * n);
    await sa.recordFailure('acct:x', 60_000, lock);
    await sb.recordFailure('acct:x', 60_000, lock);
    expect(await sa.get('acct:x')).toEqual({ failures: 2, lockedUntil: 0 });
    const before = Date.now();
    await sa.recordFailure('acct:x', 60_000, lock);
    const third = await sb.get('acct:x');
    expect(third.failures).toBe(3);
    expect(third.lockedUntil).toBeGreaterThanOrEqual(before + 3000);
    expect(third.lockedUntil).toBeLessThanOrEqual(Date.now() + 3000);
    await sb.clear('acct:x');
    expect(await sa.get('acct:x')).toEqual({ failures: 0, lockedUntil: 0 });
    expect(await sa.get('acct:never')).toEqual({ failures: 0, lockedUntil: 0 });
  });

  it('forgets a key when both the window and the lock are over, not before', async () => {
    const [a] = await clusters(1);
    const store = new RedisFailureStore(a);
    await store.recordFailure('k', 150, () => 0);
    await store.recordFailure('k2', 150, () => 600);
    expect((await store.get('k')).failures).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(await store.get('k')).toEqual({ failures: 0, lockedUntil: 0 });
    // The lock outlives the window: the count stays until the lock ends.
    expect((await store.get('k2')).failures).toBe(1);
    await new Promise((r) => setTimeout(r, 450));
    expect(await store.get('k2')).toEqual({ failures: 0, lockedUntil: 0 });
  });

  it('lets failed logins counted on one replica slow down another (LoginThrottle)', async () => {
    const [a, b] = await clusters(2);
    const ta = new LoginThrottle(new RedisFailureStore(a));
    const tb = new LoginThrottle(new RedisFailureStore(b));
    for (let i = 0; i < 6; i++) await ta.fail('someone@example.test', '10.0.0.1');
    expect(await tb.retryAfter('someone@example.test', '10.0.0.1')).toBeGreaterThan(0);
    // the lock is on that address: the account's owner elsewhere is not locked out
    expect(await tb.retryAfter('someone@example.test', '10.0.0.2')).toBe(0);
    await tb.succeed('someone@example.test', '10.0.0.1');
    expect(await ta.retryAfter('someone@example.test', '10.0.0.1')).toBe(0);
  });
});

describe.skipIf(!reachable)('RedisWebhookRateLimiter', () => {
  it('shares one token bucket per webhook between replicas, refills, and forgets', async () => {
    const [a, b] = await clusters(2);
    const la = new RedisWebhookRateLimiter(a, { perSecond: 5, burst: 3 });
    const lb = new RedisWebhookRateLimiter(b, { perSecond: 5, burst: 3 });
    expect([await la.take('hook'), await lb.take('hook'), await la.take('hook')]).toEqual([0, 0, 0]);
    const wait = await lb.take('hook');
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(0.2);
    expect(await la.take('other')).toBe(0);
    await new Promise((r) => setTimeout(r, 250)); // one token back at 5/s
    expect(await la.take('hook')).toBe(0);
    expect(await lb.take('hook')).toBeGreaterThan(0);
    await lb.forget('hook');
    expect(await la.take('hook')).toBe(0);
  });
});

describe.skipIf(!reachable)('ClusterEdges', () => {
  it('forwards an RPC to the replica holding the tunnel and returns its answer', async () => {
    const [a, b] = await bridges(2);
    b.local.connected.add(7);
    await b.edges.claim(7);
    expect(await a.edges.ownerOf(7)).toBe(b.cluster.replicaId);
    expect(await a.edges.request(7, GET, 1000)).toEqual({ status: 200, body: { edgeId: 7, path: '/api/states' } });
    // Many at once, each answered to its own caller.
    const many = await Promise.all(
      Array.from({ length: 20 }, (_, i) => a.edges.request(7, { ...GET, path: `/p/${i}` }, 1000)),
    );
    expect(many.map((r) => (r.body as { path: string }).path)).toEqual(Array.from({ length: 20 }, (_, i) => `/p/${i}`));
  });

  it("maps the owner's failures back: offline, timeout; no owner → offline; a dead owner → offline at once", async () => {
    const [a, b] = await bridges(2, { forwardMarginMs: 200 });
    await expect(a.edges.request(1, GET, 500)).rejects.toBeInstanceOf(EdgeOfflineError);

    b.local.connected.add(2);
    await b.edges.claim(2);
    b.local.handler = () => new Promise(() => {}); // the edge never answers
    const started = Date.now();
    await expect(a.edges.request(2, GET, 300)).rejects.toBeInstanceOf(EdgeTimeoutError);
    expect(Date.now() - started).toBeLessThan(2000);

    b.local.handler = async () => {
      throw new EdgeTimeoutError();
    };
    await expect(a.edges.request(2, GET, 300)).rejects.toBeInstanceOf(EdgeTimeoutError);
    b.local.connected.delete(2); // key still there, tunnel gone
    await expect(a.edges.request(2, GET, 300)).rejects.toBeInstanceOf(EdgeOfflineError);

    // The owner's key names a replica nobody listens for (it died): offline without waiting.
    await a.cluster.redis.set(a.cluster.key('edge', 3), 'dead-replica', 'PX', 10_000);
    const t0 = Date.now();
    await expect(a.edges.request(3, GET, 5000)).rejects.toBeInstanceOf(EdgeOfflineError);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it("releases only its own key; the heartbeat keeps keys alive and a dead replica's keys expire", async () => {
    const [a, b] = await bridges(2, { ownershipTtlMs: 300 });
    a.local.connected.add(5);
    await a.edges.claim(5);
    await new Promise((r) => setTimeout(r, 700)); // > TTL: only the heartbeat keeps it
    expect(await b.edges.ownerOf(5)).toBe(a.cluster.replicaId);
    // The edge says hello on b: a is told to drop its stale tunnel, and may not mark it offline.
    b.local.connected.add(5);
    await b.edges.claim(5);
    await until(() => a.local.dropped.find((d) => d.edgeId === 5 && d.code === 4000));
    expect(await a.edges.release(5)).toBe(false);
    expect(await b.edges.ownerOf(5)).toBe(b.cluster.replicaId);
    expect(await b.edges.release(5)).toBe(true);
    expect(await a.edges.ownerOf(5)).toBeNull();
    expect(await a.edges.release(5)).toBe(true); // nobody's

    // b "dies" (stops refreshing without releasing): its key expires.
    b.local.connected.add(6);
    await b.edges.claim(6);
    (b.edges as unknown as { heartbeat: NodeJS.Timeout }).heartbeat.close();
    await until(async () => (await a.edges.ownerOf(6)) === null, 2000);
    await expect(a.edges.request(6, GET, 300)).rejects.toBeInstanceOf(EdgeOfflineError);
  });

  it('a heartbeat that finds the key taken drops the stale local tunnel', async () => {
    const [a] = await bridges(1, { ownershipTtlMs: 300 });
    a.local.connected.add(8);
    await a.edges.claim(8);
    await a.cluster.redis.set(a.cluster.key('edge', 8), 'someone-else', 'PX', 10_000);
    await until(() => a.local.dropped.find((d) => d.edgeId === 8 && d.reason === 'replaced by a new connection'));
  });

  it('broadcasts disconnects (revocation) to whichever replica holds the tunnel', async () => {
    const [a, b] = await bridges(2);
    b.local.connected.add(9);
    a.edges.disconnect(9, 'revoked');
    await until(() => b.local.dropped.find((d) => d.edgeId === 9 && d.reason === 'revoked'));
  });

  it('fans state_changed of local tunnels out to the other replicas, never back to the sender', async () => {
    const [a, b, c] = await bridges(3);
    const seen: Record<string, StateChanged[]> = { a: [], b: [], c: [] };
    a.edges.on('state_changed', (e) => seen.a.push(e));
    b.edges.on('state_changed', (e) => seen.b.push(e));
    c.edges.on('state_changed', (e) => seen.c.push(e));
    const change = (n: number): StateChanged => ({
      edgeId: 4,
      entity_id: 'light.x',
      old_state: null,
      new_state: {
        entity_id: 'light.x',
        state: String(n),
        attributes: {},
        last_changed: 'now',
        last_updated: 'now',
      } as never,
    });
    for (let i = 0; i < 5; i++) b.local.emit('state_committed', change(i));
    await until(() => seen.a.length === 5 && seen.c.length === 5);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.b).toEqual([]);
    expect(seen.a.map((e) => e.new_state?.state)).toEqual(['0', '1', '2', '3', '4']);
    expect(seen.c).toEqual(seen.a);
  });

  it("fans the edges' other bus events (custom events) out the same way", async () => {
    const [a, b] = await bridges(2);
    const seen: Record<string, EdgeEvent[]> = { a: [], b: [] };
    a.edges.on('edge_event', (e) => seen.a.push(e));
    b.edges.on('edge_event', (e) => seen.b.push(e));
    const event: EdgeEvent = {
      edgeId: 4,
      event: {
        event_type: 'doorbell',
        data: { button: 'front' },
        origin: 'LOCAL',
        time_fired: '2026-01-01T00:00:00.000Z',
        context: { id: 'c1', parent_id: 'r1', user_id: null },
      },
    };
    b.local.emit('edge_event', event);
    await until(() => seen.a.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.a).toEqual([event]);
    expect(seen.b).toEqual([]);
  });
});

describe.skipIf(!reachable)('StaleEdgeSweeper', () => {
  function sweeperOn(cluster: Cluster, status: Map<number, string>) {
    return new StaleEdgeSweeper({
      cluster,
      log,
      listOnline: async () => [...status].filter(([, s]) => s === 'online').map(([id]) => id),
      markOffline: async (id) => {
        status.set(id, 'offline');
      },
      markOnline: async (id) => {
        status.set(id, 'online');
      },
    });
  }

  it('marks offline an edge left online without a live owner on two sweeps in a row, and only that one', async () => {
    const [a, b] = await clusters(2);
    const status = new Map<number, string>([
      [1, 'online'],
      [2, 'online'],
      [3, 'online'],
      [4, 'offline'],
      [5, 'online'],
    ]);
    const sweeper = sweeperOn(a, status);
    await a.redis.set(a.key('edge', 1), b.replicaId, 'PX', 10_000); // 1: held by a live replica; 2 and 3: nobody's
    await a.redis.set(a.key('edge', 5), 'killed-replica', 'PX', 10_000); // 5: its replica died, the key lingers
    expect(await sweeper.sweep()).toEqual([]); // first miss: only suspected
    await a.redis.set(a.key('edge', 3), b.replicaId, 'PX', 10_000); // 3 reconnected somewhere meanwhile
    expect(await sweeper.sweep()).toEqual([2, 5]);
    expect(Object.fromEntries(status)).toEqual({ 1: 'online', 2: 'offline', 3: 'online', 4: 'offline', 5: 'offline' });
  });

  it("at start, marks every edge no live replica holds at once, and leaves the live replicas' edges alone", async () => {
    const [a, b] = await clusters(2);
    const status = new Map<number, string>([
      [1, 'online'],
      [2, 'online'],
      [3, 'online'],
    ]);
    await a.redis.set(a.key('edge', 1), b.replicaId, 'PX', 10_000);
    await a.redis.set(a.key('edge', 2), 'killed-replica', 'PX', 10_000);
    const sweeper = sweeperOn(a, status);
    cleanups.push(() => sweeper.stop());
    await sweeper.start();
    expect(Object.fromEntries(status)).toEqual({ 1: 'online', 2: 'offline', 3: 'offline' });
  });
});

describe.skipIf(!reachable)('ClusterEdges: the holder of a tunnel', () => {
  it('reports the edges it holds after each heartbeat (to assert them online), not those taken by another replica', async () => {
    const [cluster] = await clusters(1);
    const local = new FakeTunnels();
    const held: number[][] = [];
    const edges = new ClusterEdges({
      cluster,
      local,
      log,
      ownershipTtlMs: 300,
      onHeld: async (ids) => {
        held.push(ids);
      },
    });
    edges.start();
    cleanups.push(() => edges.stop());
    for (const id of [11, 12]) {
      local.connected.add(id);
      await edges.claim(id);
    }
    await until(() => held.some((ids) => ids.join() === '11,12'));
    await cluster.redis.set(cluster.key('edge', 12), 'another-replica', 'PX', 10_000);
    held.length = 0;
    await until(() => held.length >= 2);
    expect(held.at(-1)).toEqual([11]);
  });
});
