import type { FailureStore } from '../auth/throttle.ts';
import type { Cluster } from './cluster.ts';

// One hash per key: failures (HINCRBY) and locked_until (ms epoch). The first failure starts
// the window (PEXPIRE windowMs); a lock past the window extends the key's life to the lock's end,
// so the key disappears exactly when both the window and the lock are over (as in MemoryFailureStore).
const INCREMENT = `
local n = redis.call('HINCRBY', KEYS[1], 'failures', 1)
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

const LOCK = `
local current = tonumber(redis.call('HGET', KEYS[1], 'locked_until') or '0')
local untilMs = math.max(current, tonumber(ARGV[1]))
redis.call('HSET', KEYS[1], 'locked_until', untilMs)
local need = untilMs - tonumber(ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if need > 0 and ttl < need then redis.call('PEXPIRE', KEYS[1], need) end
return untilMs`;

/**
 * LoginThrottle's failures shared by every replica: failed logins counted on one replica
 * slow down the next attempt on any other. Each step is one atomic Lua script; the lock
 * length depends on the count, so it is computed here between the two (both only grow).
 */
export class RedisFailureStore implements FailureStore {
  private readonly cluster: Cluster;
  private readonly now: () => number;

  constructor(cluster: Cluster, now: () => number = Date.now) {
    this.cluster = cluster;
    this.now = now;
  }

  private redisKey(key: string): string {
    return this.cluster.key('throttle', key);
  }

  async get(key: string): Promise<{ failures: number; lockedUntil: number }> {
    const [failures, lockedUntil] = await this.cluster.redis.hmget(this.redisKey(key), 'failures', 'locked_until');
    return { failures: Number(failures ?? 0), lockedUntil: Number(lockedUntil ?? 0) };
  }

  async recordFailure(key: string, windowMs: number, lockMs: (failures: number) => number): Promise<void> {
    const k = this.redisKey(key);
    const failures = Number(await this.cluster.redis.eval(INCREMENT, 1, k, windowMs));
    const lock = lockMs(failures);
    if (lock <= 0) return;
    const now = this.now();
    await this.cluster.redis.eval(LOCK, 1, k, now + lock, now);
  }

  async clear(key: string): Promise<void> {
    await this.cluster.redis.del(this.redisKey(key));
  }
}
