/**
 * Slows down repeated failed logins per account and per client address.
 * The store is an interface so replicas can share it (Redis) later.
 */
export interface FailureStore {
  /** failures recorded for key within the window, and when the key is locked until (ms epoch) */
  get(key: string): Promise<{ failures: number; lockedUntil: number }>;
  recordFailure(key: string, windowMs: number, lockMs: (failures: number) => number): Promise<void>;
  clear(key: string): Promise<void>;
}

export class MemoryFailureStore implements FailureStore {
  private readonly entries = new Map<string, { failures: number; lockedUntil: number; windowEnds: number }>();
  private readonly now: () => number;
  constructor(now: () => number = Date.now) {
    this.now = now;
  }
  async get(key: string) {
    const e = this.entries.get(key);
    if (!e || (e.windowEnds < this.now() && e.lockedUntil < this.now())) return { failures: 0, lockedUntil: 0 };
    return { failures: e.failures, lockedUntil: e.lockedUntil };
  }
  async recordFailure(key: string, windowMs: number, lockMs: (failures: number) => number) {
    const now = this.now();
    let e = this.entries.get(key);
    if (!e || (e.windowEnds < now && e.lockedUntil < now)) e = { failures: 0, lockedUntil: 0, windowEnds: now + windowMs };
    e.failures += 1;
    e.lockedUntil = Math.max(e.lockedUntil, now + lockMs(e.failures));
    this.entries.set(key, e);
    if (this.entries.size > 100_000) this.sweep(now);
  }
  async clear(key: string) {
    this.entries.delete(key);
  }
  private sweep(now: number) {
    for (const [k, e] of this.entries) if (e.windowEnds < now && e.lockedUntil < now) this.entries.delete(k);
  }
}

export interface ThrottlePolicy {
  windowMs: number;
  /** failures allowed per account before delays start */
  accountFreeFailures: number;
  /** failures allowed per address before delays start (an address may serve many users) */
  addressFreeFailures: number;
  maxLockMs: number;
}

export const defaultThrottlePolicy: ThrottlePolicy = {
  windowMs: 15 * 60_000,
  accountFreeFailures: 5,
  addressFreeFailures: 20,
  maxLockMs: 15 * 60_000,
};

export class LoginThrottle {
  private readonly store: FailureStore;
  private readonly policy: ThrottlePolicy;
  private readonly now: () => number;
  constructor(store: FailureStore, policy: ThrottlePolicy = defaultThrottlePolicy, now: () => number = Date.now) {
    this.store = store;
    this.policy = policy;
    this.now = now;
  }

  private keys(account: string, address: string) {
    return [`acct:${account}`, `addr:${address}`];
  }

  /** Seconds the caller must wait, or 0. */
  async retryAfter(account: string, address: string): Promise<number> {
    let until = 0;
    for (const key of this.keys(account, address)) until = Math.max(until, (await this.store.get(key)).lockedUntil);
    const wait = until - this.now();
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  async fail(account: string, address: string): Promise<void> {
    const { windowMs, accountFreeFailures, addressFreeFailures, maxLockMs } = this.policy;
    // Exponential delay once the free failures are used up: 1 s, 2 s, 4 s … capped.
    const lock = (free: number) => (failures: number) =>
      failures <= free ? 0 : Math.min(maxLockMs, 1000 * 2 ** (failures - free - 1));
    const [acct, addr] = this.keys(account, address);
    await this.store.recordFailure(acct, windowMs, lock(accountFreeFailures));
    await this.store.recordFailure(addr, windowMs, lock(addressFreeFailures));
  }

  async succeed(account: string): Promise<void> {
    await this.store.clear(`acct:${account}`);
  }
}
