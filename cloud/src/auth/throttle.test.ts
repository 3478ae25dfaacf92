import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { LoginThrottle, MemoryFailureStore, defaultThrottlePolicy } from './throttle.ts';

/**
 * Who a flood of wrong passwords may slow down: the flooding address (on that account, and on
 * every account once it fails far more often than people do), never the account's owner
 * signing in from elsewhere. Clients are told apart by X-Forwarded-For from a trusted proxy.
 */
let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud({ trustProxy: ['loopback'] });
});
afterAll(async () => {
  await t.stop();
});

const from = (address: string) => ({ 'x-forwarded-for': address });
const login = (address: string, email: string, password: string) =>
  t.post('/v1/auth/token', { headers: from(address), body: { grant_type: 'password', email, password } });

describe('login throttling over HTTP', () => {
  it("does not lock the victim out with an attacker's failures on the victim's account from another address", async () => {
    const victim = await t.user();
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i++) statuses.add((await login('203.0.113.66', victim.email, `guess-${i}`)).status);
    expect([...statuses].sort()).toEqual([401, 429]);
    // the attacker's address stays throttled on this account, even with the right password
    const attacker = await login('203.0.113.66', victim.email, victim.password);
    expect(attacker.status).toBe(429);
    expect(attacker.body).toEqual({ error: 'rate_limited' });
    expect(Number(attacker.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await login('198.51.100.7', victim.email, victim.password)).status).toBe(200);
  });

  it('does not lock the victim out when the failures come from many addresses; the account is only slowed down', async () => {
    const victim = await t.user();
    // 7 addresses × 3 wrong passwords: each address under its own limit, the account over its slowdown threshold
    for (let a = 1; a <= 7; a++) {
      for (let i = 0; i < 3; i++)
        expect((await login(`192.0.2.${a}`, victim.email, `guess-${a}-${i}`)).status).toBe(401);
    }
    const started = Date.now();
    expect((await login('198.51.100.8', victim.email, victim.password)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(defaultThrottlePolicy.accountSlowdownMs - 50);
  });

  it('still slows down credential stuffing: one address failing on many accounts is throttled on all of them', async () => {
    const owner = await t.user();
    let throttledAt = 0;
    for (let i = 1; i <= 300 && !throttledAt; i++) {
      const res = await login('203.0.113.99', `stuffed-${i}@example.test`, 'password1');
      if (res.status === 429) throttledAt = i;
      else expect(res.status).toBe(401);
    }
    expect(throttledAt).toBeGreaterThan(defaultThrottlePolicy.addressFreeFailures);
    expect(throttledAt).toBeLessThanOrEqual(defaultThrottlePolicy.addressFreeFailures + 2);
    expect((await login('203.0.113.99', owner.email, owner.password)).status).toBe(429);
    expect((await login('198.51.100.9', owner.email, owner.password)).status).toBe(200);
  });
});

describe('X-Account-Verification (password re-check) is throttled like login', () => {
  const verify = (token: string, address: string, value: string) =>
    t.post('/v1/account/mfa/backup-codes', { token, headers: { ...from(address), 'x-account-verification': value } });

  it('30 wrong values, then the right one answers 429; the owner at another address is not locked out', async () => {
    const u = await t.user();
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i++) statuses.add((await verify(u.token, '203.0.113.70', `guess-${i}`)).status);
    expect([...statuses].sort()).toEqual([403, 429]);
    const right = await verify(u.token, '203.0.113.70', u.password);
    expect(right.status).toBe(429);
    expect(right.body).toEqual({ error: 'rate_limited' });
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // the same guesses count against signing in to that account from that address
    expect((await login('203.0.113.70', u.email, u.password)).status).toBe(429);
    expect((await verify(u.token, '198.51.100.70', u.password)).status).toBe(200);
  });
});

describe('the password change verification is throttled like login', () => {
  const change = (token: string, address: string, value: string) =>
    t.post('/v1/account/password', {
      token,
      headers: { ...from(address), 'x-account-verification': value },
      body: { password: 'a brand new password' },
    });

  it('30 wrong current passwords, then the right one answers 429 from that address; 200 from another', async () => {
    const u = await t.user();
    const statuses = new Set<number>();
    for (let i = 0; i < 30; i++) statuses.add((await change(u.token, '203.0.113.71', `guess-${i}`)).status);
    expect([...statuses].sort()).toEqual([403, 429]);
    const right = await change(u.token, '203.0.113.71', u.password);
    expect(right.status).toBe(429);
    expect(right.body).toEqual({ error: 'rate_limited' });
    expect((await change(u.token, '198.51.100.71', u.password)).status).toBe(200);
  });
});

describe('LoginThrottle', () => {
  it('locks an account+address pair after its free failures, and the success of that pair clears it', async () => {
    let now = 1_000_000;
    const throttle = new LoginThrottle(new MemoryFailureStore(() => now), defaultThrottlePolicy, () => now);
    for (let i = 0; i < defaultThrottlePolicy.pairFreeFailures; i++) await throttle.fail('a@x', '10.0.0.1');
    expect(await throttle.retryAfter('a@x', '10.0.0.1')).toBe(0);
    await throttle.fail('a@x', '10.0.0.1');
    expect(await throttle.retryAfter('a@x', '10.0.0.1')).toBe(1);
    expect(await throttle.retryAfter('a@x', '10.0.0.2')).toBe(0);
    expect(await throttle.retryAfter('b@x', '10.0.0.1')).toBe(0);
    await throttle.fail('a@x', '10.0.0.1');
    expect(await throttle.retryAfter('a@x', '10.0.0.1')).toBe(2);
    now += 2000;
    expect(await throttle.retryAfter('a@x', '10.0.0.1')).toBe(0);
    await throttle.succeed('a@x', '10.0.0.1');
    await throttle.fail('a@x', '10.0.0.1');
    expect(await throttle.retryAfter('a@x', '10.0.0.1')).toBe(0);
  });

  it('counts an IPv6 client by its /64 (one host may hold all of it)', async () => {
    const throttle = new LoginThrottle(new MemoryFailureStore());
    for (let i = 1; i <= defaultThrottlePolicy.pairFreeFailures + 1; i++)
      await throttle.fail('a@x', `2001:db8:1:2::${i}`);
    expect(await throttle.retryAfter('a@x', '2001:db8:1:2:ffff:ffff:ffff:ffff')).toBeGreaterThan(0);
    expect(await throttle.retryAfter('a@x', '2001:DB8:1:2:0::9')).toBeGreaterThan(0);
    expect(await throttle.retryAfter('a@x', '2001:db8:1:3::1')).toBe(0);
    expect(await throttle.retryAfter('a@x', '10.0.0.1')).toBe(0);
    for (let i = 1; i <= defaultThrottlePolicy.addressFreeFailures + 1; i++)
      await throttle.fail(`u${i}@x`, `2001:db8:9:9:${i.toString(16)}::1`);
    expect(await throttle.retryAfter('someone@x', '2001:db8:9:9::abcd')).toBeGreaterThan(0);
  });

  it('slows an account down once it has failed often from anywhere, without a lock', async () => {
    const throttle = new LoginThrottle(new MemoryFailureStore());
    for (let i = 0; i < defaultThrottlePolicy.accountSlowdownAfter; i++) await throttle.fail('a@x', `10.0.1.${i}`);
    expect(await throttle.slowdownMs('a@x')).toBe(0);
    await throttle.fail('a@x', '10.0.2.1');
    expect(await throttle.slowdownMs('a@x')).toBe(defaultThrottlePolicy.accountSlowdownMs);
    expect(await throttle.slowdownMs('b@x')).toBe(0);
    expect(await throttle.retryAfter('a@x', '10.0.3.1')).toBe(0);
  });
});
