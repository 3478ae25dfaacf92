import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createCloud } from './cloud.ts';
import { defaultCloudConfig } from './config.ts';
import { createLogger } from './log.ts';
import { createTestSchema, testDatabaseUrl, type TestSchema } from './testing/database.ts';
import { TEST_REDIS_URL, redisReachable, testRedisPrefix } from './testing/redis.ts';

const redisUp = await redisReachable();
if (!redisUp) console.warn(`start-failure test: no Redis at ${TEST_REDIS_URL}, Redis part skipped`);

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

/** A port something else is listening on. */
async function takenPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as net.AddressInfo).port;
}

/** File descriptors of this process open on a file (the SQLite database, its WAL, its shm). */
function openFds(file: string): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(file)) n++;
    } catch {
      // closed meanwhile (the readdir's own descriptor)
    }
  }
  return n;
}

/** The database the test cloud uses: a fresh schema on PostgreSQL (connections named, to count them), else SQLite. */
async function database(): Promise<{ url: string | undefined; openConnections: () => Promise<number> }> {
  const base = testDatabaseUrl();
  if (!base) return { url: undefined, openConnections: async () => 0 };
  const schema: TestSchema = await createTestSchema(base);
  cleanups.push(() => schema.drop());
  const name = `start-failure-${randomBytes(4).toString('hex')}`;
  const url = new URL(schema.url);
  url.searchParams.set('application_name', name);
  const openConnections = async () => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      const r = await client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [
        name,
      ]);
      return r.rows[0].n as number;
    } finally {
      await client.end();
    }
  };
  return { url: url.toString(), openConnections };
}

/** Redis connections named with the prefix (the cluster names its connections "<prefix>:<replica>:<role>"). */
async function redisConnections(prefix: string): Promise<number> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
  await redis.connect();
  try {
    const list = (await redis.call('CLIENT', 'LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${prefix}:`)).length;
  } finally {
    redis.disconnect();
  }
}

describe('a cloud whose port is taken', () => {
  it('rejects start() and leaves no database or Redis connection open', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-start-failure-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const db = await database();
    const prefix = testRedisPrefix();
    const config = defaultCloudConfig({
      port: await takenPort(),
      host: '127.0.0.1',
      dataDir,
      fastHashing: true,
      databaseUrl: db.url,
      redisUrl: redisUp ? TEST_REDIS_URL : undefined,
    });
    const cloud = createCloud(config, { log: createLogger('cloud', { silent: true }), redisPrefix: prefix });
    cleanups.push(() => cloud.stop());

    await expect(cloud.start()).rejects.toMatchObject({ code: 'EADDRINUSE' });

    expect(openFds(path.join(dataDir, 'cloud.db'))).toBe(0);
    expect(await db.openConnections()).toBe(0);
    if (redisUp) expect(await redisConnections(prefix)).toBe(0);
    await expect(cloud.database.ping()).rejects.toThrow();
  });
});
