/**
 * Slows password guessing on the local sign-in, per username and per client: 5 free failures
 * in 15 minutes, then 1 s, 2 s, 4 s … up to 15 min between attempts (as on the cloud).
 */
const WINDOW_MS = 15 * 60_000;
const FREE = 5;

interface Failures {
  count: number;
  first: number;
  last: number;
}

export class SignInThrottle {
  private readonly failures = new Map<string, Failures>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** Seconds to wait before this key may try again (0: go ahead). */
  waitFor(key: string): number {
    const f = this.failures.get(key);
    if (!f) return 0;
    const now = this.now();
    if (now - f.last > WINDOW_MS) {
      this.failures.delete(key);
      return 0;
    }
    if (f.count < FREE) return 0;
    const delay = Math.min(1000 * 2 ** (f.count - FREE), WINDOW_MS);
    return Math.max(0, Math.ceil((f.last + delay - now) / 1000));
  }

  fail(key: string): void {
    const now = this.now();
    const f = this.failures.get(key);
    if (!f || now - f.last > WINDOW_MS) this.failures.set(key, { count: 1, first: now, last: now });
    else this.failures.set(key, { count: f.count + 1, first: f.first, last: now });
    if (this.failures.size > 10_000) this.failures.delete(this.failures.keys().next().value as string);
  }

  succeed(key: string): void {
    this.failures.delete(key);
  }
}
