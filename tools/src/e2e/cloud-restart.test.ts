import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnReady, type Spawned } from '@smarthome/cloud/testing/process';
import { TEST_REDIS_URL, deleteTestPrefix, redisReachable, testRedisPrefix } from '@smarthome/cloud/testing/redis';
import { createTestSchema, testDatabaseUrl } from '@smarthome/cloud/testing/database';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import { failoverProxy, until } from './support.ts';

/**
 * Edge status across a cloud crash, with real processes. The cloud is killed with SIGKILL,
 * one edge process is killed while the cloud is down, and the cloud restarts on the same
 * data. The dead edge must read `offline` within seconds; a live edge must read `offline`
 * until its tunnel is back (never `online` while calls to it answer 503), then `online`
 * with working calls, within seconds. Without Redis (one process), and with Redis (the
 * restarted replica next to a live one, whose edge must stay `online` throughout).
 * Edges reach the restarted cloud through a TCP proxy (the load balancer's stand-in).
 */
const redis = await redisReachable();
if (!redis)
  console.warn(`SKIPPED the Redis half of tools/src/e2e/cloud-restart.test.ts: no Redis at ${TEST_REDIS_URL}`);

const cleanups: Array<() => Promise<unknown> | unknown> = [];
const processes: Spawned[] = [];

afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exit;
  }
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
});

async function api(
  base: string,
  method: string,
  urlPath: string,
  opts: { token?: string; body?: unknown } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + urlPath, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function spawn(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Spawned> {
  const p = await spawnReady(script, args, env, 30_000);
  processes.push(p);
  return p;
}

async function kill(p: Spawned): Promise<void> {
  p.child.kill('SIGKILL');
  await p.exit;
}

interface CloudSetup {
  dataDir: string;
  databaseUrl?: string;
  redisPrefix?: string;
}

async function cloudSetup(withRedis: boolean): Promise<CloudSetup> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-restart-'));
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const pgUrl = testDatabaseUrl();
  const schema = pgUrl ? await createTestSchema(pgUrl) : null;
  if (schema) cleanups.push(() => schema.drop());
  const redisPrefix = withRedis ? testRedisPrefix() : undefined;
  if (redisPrefix) cleanups.push(() => deleteTestPrefix(redisPrefix));
  return { dataDir, databaseUrl: schema?.url, redisPrefix };
}

/** A cloud process on the setup's data (every replica of a setup shares its data dir: one host). */
async function startCloud(setup: CloudSetup): Promise<{ proc: Spawned; url: string; port: number }> {
  const args = ['--port', '0', '--host', '127.0.0.1', '--data-dir', setup.dataDir];
  if (setup.databaseUrl) args.push('--database-url', setup.databaseUrl);
  if (setup.redisPrefix) args.push('--redis-url', TEST_REDIS_URL);
  const proc = await spawn('cloud/src/main.ts', args, setup.redisPrefix ? { REDIS_PREFIX: setup.redisPrefix } : {});
  return { proc, url: `http://127.0.0.1:${proc.ready.http}`, port: proc.ready.http };
}

/** Registers an edge in the cloud: its id and pairing token. */
async function createEdge(base: string, token: string, name: string): Promise<{ id: number; token: string }> {
  const res = await api(base, 'POST', '/v1/edges', { token, body: { name } });
  expect(res.status).toBe(201);
  return { id: res.body.edge.id, token: res.body.token };
}

/** An edge process paired with the cloud at cloudUrl. */
async function edgeProcess(cloudUrl: string, token: string): Promise<Spawned> {
  const data = tempDir();
  cleanups.push(data.cleanup);
  return spawn('edge/src/main.ts', [
    '--port',
    '0',
    '--mqtt-port',
    '0',
    '--data-dir',
    data.dir,
    '--cloud-url',
    cloudUrl,
    '--token',
    token,
  ]);
}

/** An edge in this process (it only has to stay alive and reconnect). */
async function liveEdge(cloudUrl: string, token: string) {
  const data = tempDir();
  cleanups.push(data.cleanup);
  const edge = await startEdge(data.dir, { cloudUrl, token });
  cleanups.push(() => edge.stop());
  return edge;
}

/** What the cloud says about an edge, and whether a call relayed to it works right now. */
async function probe(base: string, token: string, edgeId: number): Promise<{ status: string; call: number }> {
  const status = (await api(base, 'GET', `/v1/edges/${edgeId}`, { token })).body.status as string;
  const call = (await api(base, 'GET', `/v1/config_flow/handlers?edge_id=${edgeId}`, { token })).status;
  return { status, call };
}

/**
 * Watches a live edge after a restart until it reads online: while it does not, calls to it
 * may fail; once it does, they must work. Returns how long that took.
 */
async function watchReconnect(
  base: string,
  token: string,
  edgeId: number,
  others: () => Promise<void> = async () => {},
): Promise<number> {
  const from = Date.now();
  const seen: string[] = [];
  for (;;) {
    const p = await probe(base, token, edgeId);
    seen.push(`${p.status}/${p.call}`);
    if (p.status === 'online') {
      expect(p.call, `calls to an edge that reads online must work (seen: ${seen.join(' ')})`).toBe(200);
      return Date.now() - from;
    }
    expect(p.status).toBe('offline');
    await others();
    if (Date.now() - from > 40_000) throw new Error(`the live edge did not come back: ${seen.join(' ')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('edge status after the cloud is killed and restarted', () => {
  it('one cloud process (no Redis): a dead edge reads offline at once, a live one offline until it is back, within seconds', async () => {
    const setup = await cloudSetup(false);
    let cloud = await startCloud(setup);
    const proxy = await failoverProxy(() => [cloud.port]);
    cleanups.push(() => proxy.close());
    const viaProxy = `http://127.0.0.1:${proxy.port}`;
    const owner = (
      await api(cloud.url, 'POST', '/v1/auth/register', {
        body: { email: `o${Date.now()}@example.test`, password: 'correct horse battery' },
      })
    ).body.access_token as string;
    const [live, dead] = [await createEdge(cloud.url, owner, 'Live'), await createEdge(cloud.url, owner, 'Dead')];
    await liveEdge(viaProxy, live.token);
    const deadProc = await edgeProcess(viaProxy, dead.token);
    await until(
      async () =>
        (await probe(cloud.url, owner, live.id)).status === 'online' &&
        (await probe(cloud.url, owner, dead.id)).status === 'online',
      20_000,
      'both edges online',
    );

    await kill(cloud.proc);
    await kill(deadProc);
    await new Promise((r) => setTimeout(r, 2000)); // the cloud stays down a while: the live edge backs off
    cloud = await startCloud(setup);

    const deadStatus = await until(
      async () => {
        const s = (await api(cloud.url, 'GET', `/v1/edges/${dead.id}`, { token: owner })).body.status as string;
        return s === 'offline' ? s : null;
      },
      3000,
      'the dead edge to read offline',
    );
    expect(deadStatus).toBe('offline');
    const back = await watchReconnect(cloud.url, owner, live.id, async () => {
      expect((await api(cloud.url, 'GET', `/v1/edges/${dead.id}`, { token: owner })).body.status).toBe('offline');
    });
    expect(back).toBeLessThan(15_000);
    expect((await probe(cloud.url, owner, dead.id)).call).toBe(503);
  }, 120_000);

  it.skipIf(!redis)(
    "with Redis: the restarted replica marks the dead replica's edges offline at once, leaves the live replica's alone",
    async () => {
      const setup = await cloudSetup(true);
      let a = await startCloud(setup);
      const b = await startCloud(setup);
      const proxy = await failoverProxy(() => [a.port]);
      cleanups.push(() => proxy.close());
      const viaProxy = `http://127.0.0.1:${proxy.port}`;
      const owner = (
        await api(a.url, 'POST', '/v1/auth/register', {
          body: { email: `o${Date.now()}@example.test`, password: 'correct horse battery' },
        })
      ).body.access_token as string;
      const [live, dead, onB] = [
        await createEdge(a.url, owner, 'Live'),
        await createEdge(a.url, owner, 'Dead'),
        await createEdge(a.url, owner, 'On B'),
      ];
      await liveEdge(viaProxy, live.token);
      const deadProc = await edgeProcess(viaProxy, dead.token);
      await liveEdge(b.url, onB.token);
      await until(
        async () => {
          const all = await Promise.all([live.id, dead.id, onB.id].map((id) => probe(a.url, owner, id)));
          return all.every((p) => p.status === 'online');
        },
        20_000,
        'three edges online',
      );

      await kill(a.proc);
      await kill(deadProc);
      await new Promise((r) => setTimeout(r, 2000));
      a = await startCloud(setup);

      await until(
        async () => (await api(a.url, 'GET', `/v1/edges/${dead.id}`, { token: owner })).body.status === 'offline',
        3000,
        'the dead edge to read offline',
      );
      const onBStaysOnline = async () => {
        for (const base of [a.url, b.url])
          expect(await probe(base, owner, onB.id)).toEqual({ status: 'online', call: 200 });
      };
      const back = await watchReconnect(a.url, owner, live.id, onBStaysOnline);
      expect(back).toBeLessThan(15_000);
      await onBStaysOnline();
      expect(await probe(b.url, owner, dead.id)).toEqual({ status: 'offline', call: 503 });
    },
    120_000,
  );
});
