import net from 'node:net';

/** The failure counters behind LoginThrottle: in memory, or shared by replicas (scale/failure-store.ts). */
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
    if (!e || (e.windowEnds < now && e.lockedUntil < now))
      e = { failures: 0, lockedUntil: 0, windowEnds: now + windowMs };
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
  /** failures allowed per account+address before that pair is locked (1 s, 2 s, 4 s … capped) */
  pairFreeFailures: number;
  /**
   * failures allowed per address across all accounts before the address is locked: far more
   * than the people behind one address (an office, a carrier NAT) get wrong, far fewer than
   * credential stuffing needs
   */
  addressFreeFailures: number;
  /** failures on one account (from any address) after which every attempt on it waits … */
  accountSlowdownAfter: number;
  /** … this long: a slowdown, never a lock, so its owner still gets in from anywhere */
  accountSlowdownMs: number;
  maxLockMs: number;
}

export const defaultThrottlePolicy: ThrottlePolicy = {
  windowMs: 15 * 60_000,
  pairFreeFailures: 5,
  addressFreeFailures: 100,
  accountSlowdownAfter: 20,
  accountSlowdownMs: 1000,
  maxLockMs: 15 * 60_000,
};

/**
 * Password guessing (logins, X-Account-Verification) counted three ways:
 *  - per account+address: the guesser is locked out of that account, its owner elsewhere is not;
 *  - per address: one address failing on many accounts (credential stuffing) is locked out of all;
 *  - per account: a distributed attack on one account slows every attempt on it down a little.
 * Successes clear only their own account+address pair, so an attacker cannot reset the
 * address count by signing in to an account of its own.
 */
export class LoginThrottle {
  private readonly store: FailureStore;
  private readonly policy: ThrottlePolicy;
  private readonly now: () => number;
  constructor(store: FailureStore, policy: ThrottlePolicy = defaultThrottlePolicy, now: () => number = Date.now) {
    this.store = store;
    this.policy = policy;
    this.now = now;
  }

  private static pair(account: string, address: string) {
    return `pair:${account}|${clientKey(address)}`;
  }

  private static address(address: string) {
    return `addr:${clientKey(address)}`;
  }

  /** Seconds the caller must wait, or 0. */
  async retryAfter(account: string, address: string): Promise<number> {
    let until = 0;
    for (const key of [LoginThrottle.pair(account, address), LoginThrottle.address(address)])
      until = Math.max(until, (await this.store.get(key)).lockedUntil);
    const wait = until - this.now();
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  /** Milliseconds every attempt on this account waits while it is under attack, or 0. */
  async slowdownMs(account: string): Promise<number> {
    const { failures } = await this.store.get(`acct:${account}`);
    return failures > this.policy.accountSlowdownAfter ? this.policy.accountSlowdownMs : 0;
  }

  async fail(account: string, address: string): Promise<void> {
    const { windowMs, pairFreeFailures, addressFreeFailures, maxLockMs } = this.policy;
    // Exponential delay once the free failures are used up: 1 s, 2 s, 4 s … capped.
    const lock = (free: number) => (failures: number) =>
      failures <= free ? 0 : Math.min(maxLockMs, 1000 * 2 ** (failures - free - 1));
    await this.store.recordFailure(LoginThrottle.pair(account, address), windowMs, lock(pairFreeFailures));
    await this.store.recordFailure(LoginThrottle.address(address), windowMs, lock(addressFreeFailures));
    await this.store.recordFailure(`acct:${account}`, windowMs, () => 0);
  }

  async succeed(account: string, address: string): Promise<void> {
    await this.store.clear(LoginThrottle.pair(account, address));
  }
}

/**
 * An IPv6 client is counted by its /64: one host, or one customer line, is usually given a
 * whole /64 and could otherwise change address on every attempt.
 */
function clientKey(address: string): string {
  if (!net.isIPv6(address)) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = [...left, ...Array<string>(Math.max(0, 8 - width(left) - width(right))).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
