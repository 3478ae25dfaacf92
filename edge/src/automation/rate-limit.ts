import type { Clock } from './ports.ts';

/** Token bucket per key (webhook_id): `perSecond` refill, `burst` capacity. Idle buckets are pruned. */
export class TokenBuckets {
  private readonly perSecond: number;
  private readonly burst: number;
  private readonly clock: Clock;
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(clock: Clock, perSecond = 10, burst = 20) {
    this.clock = clock;
    this.perSecond = perSecond;
    this.burst = burst;
  }

  /** 0 when a token was taken; otherwise the seconds until one is available. */
  take(key: string): number {
    const now = this.clock.now();
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size > 10_000) this.prune(now);
      b = { tokens: this.burst, at: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / this.perSecond;
  }

  forget(key: string): void {
    this.buckets.delete(key);
  }

  private prune(now: number): void {
    const full = (this.burst / this.perSecond) * 1000;
    for (const [k, b] of this.buckets) if (now - b.at > full) this.buckets.delete(k);
  }
}
