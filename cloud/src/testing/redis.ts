import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';

/** Test support (not a test file): the machine's Redis, and prefixes that never collide. */
export const TEST_REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** A fresh key prefix per test run, so tests never see each other's keys or channels. */
export function testRedisPrefix(): string {
  return `test-${randomUUID().slice(0, 12)}`;
}

/** Whether something answers PING at the URL's host and port (within 1 s). */
export async function redisReachable(url = TEST_REDIS_URL): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname || '127.0.0.1', port: Number(port || 6379) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG') || d.toString().startsWith('-NOAUTH')));
  });
}

/** Deletes every key under a test prefix. */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** deletePrefix with a connection of its own (for tests that have no Cluster at hand). */
export async function deleteTestPrefix(prefix: string, url = TEST_REDIS_URL): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    await deletePrefix(redis, prefix);
  } finally {
    redis.disconnect();
  }
}
