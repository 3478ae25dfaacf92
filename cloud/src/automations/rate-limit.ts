/**
 * Per-webhook rate limiting for the cloud's webhook receiver. Behind an interface so that a
 * shared store (Redis, when several cloud replicas sit behind one load balancer) can replace
 * the in-memory buckets without touching the route.
 */
export interface WebhookRateLimiter {
  /** Takes one token for `key`: 0 when the call may proceed, otherwise the seconds until a token is available. */
  take(key: string): Promise<number>;
  /** Drops the state of `key` (its webhook was revoked). */
  forget(key: string): Promise<void>;
}

export interface RateLimitClock {
  now(): number;
}

export interface TokenBucketOptions {
  /** refill rate (tokens per second) */
  perSecond?: number;
  /** bucket capacity */
  burst?: number;
  /** keys kept before idle (full) buckets are pruned */
  maxKeys?: number;
  clock?: RateLimitClock;
}

/** Token bucket per key, in this process's memory (one cloud process). Idle buckets are pruned. */
export class MemoryWebhookRateLimiter implements WebhookRateLimiter {
  private readonly perSecond: number;
  private readonly burst: number;
  private readonly maxKeys: number;
  private readonly clock: RateLimitClock;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(options: TokenBucketOptions = {}) {
    this.perSecond = options.perSecond ?? 10;
    this.burst = options.burst ?? 20;
    this.maxKeys = options.maxKeys ?? 10_000;
    this.clock = options.clock ?? Date;
    if (!(this.perSecond > 0) || !(this.burst >= 1))
      throw new Error('rate limit: perSecond must be > 0 and burst >= 1');
  }

  take(key: string): Promise<number> {
    return Promise.resolve(this.takeNow(key));
  }

  forget(key: string): Promise<void> {
    this.buckets.delete(key);
    return Promise.resolve();
  }

  /** Synchronous core of take(). */
  takeNow(key: string): number {
    const now = this.clock.now();
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= this.maxKeys) this.prune(now);
      b = { tokens: this.burst, at: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + (Math.max(0, now - b.at) / 1000) * this.perSecond);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / this.perSecond;
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Removes buckets that have refilled completely (they behave like new ones). */
  private prune(now: number): void {
    const refillMs = (this.burst / this.perSecond) * 1000;
    for (const [k, b] of this.buckets) if (now - b.at >= refillMs) this.buckets.delete(k);
  }
}
