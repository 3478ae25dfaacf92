import type { WebhookRateLimiter } from '../automations/rate-limit.ts';
import type { Cluster } from './cluster.ts';

// Token bucket per key in one hash {tokens, at}, on Redis's clock (TIME) so replicas' clocks
// do not matter. A missing key is a full bucket, so the key expires once it would have refilled.
// Returns the wait in seconds as a string (Lua numbers would be truncated to integers).
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or burst
local at = tonumber(b[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = (1 - tokens) / rate end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return tostring(wait)`;

/**
 * The webhook receiver's per-webhook rate limit shared by every replica (same semantics as
 * MemoryWebhookRateLimiter: `perSecond` refill, `burst` capacity), one atomic script per call.
 */
export class RedisWebhookRateLimiter implements WebhookRateLimiter {
  private readonly cluster: Cluster;
  private readonly perSecond: number;
  private readonly burst: number;

  constructor(cluster: Cluster, options: { perSecond?: number; burst?: number } = {}) {
    this.cluster = cluster;
    this.perSecond = options.perSecond ?? 10;
    this.burst = options.burst ?? 20;
    if (!(this.perSecond > 0) || !(this.burst >= 1))
      throw new Error('rate limit: perSecond must be > 0 and burst >= 1');
  }

  private redisKey(key: string): string {
    return this.cluster.key('webhook-rate', key);
  }

  async take(key: string): Promise<number> {
    return Number(await this.cluster.redis.eval(TAKE, 1, this.redisKey(key), this.perSecond, this.burst));
  }

  async forget(key: string): Promise<void> {
    await this.cluster.redis.del(this.redisKey(key));
  }
}
