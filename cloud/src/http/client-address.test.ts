import { afterEach, describe, expect, it } from 'vitest';
import { parseCloudArgs } from '../config.ts';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { TrustedProxies } from './client-address.ts';

const clouds: TestCloud[] = [];
afterEach(async () => {
  for (const c of clouds.splice(0)) await c.stop();
});

describe('--trust-proxy', () => {
  it('comes from the flag, else TRUST_PROXY; several comma-separated entries; words for common ranges', () => {
    expect(parseCloudArgs([], {}).trustProxy).toEqual([]);
    expect(parseCloudArgs([], { TRUST_PROXY: '10.0.0.0/8, loopback' }).trustProxy).toEqual(['10.0.0.0/8', 'loopback']);
    expect(parseCloudArgs(['--trust-proxy', '192.0.2.7,fd00::/8'], { TRUST_PROXY: 'loopback' }).trustProxy).toEqual([
      '192.0.2.7',
      'fd00::/8',
    ]);
    for (const bad of ['10.0.0.0/33', 'example.com', '10.0.0.0/8,', 'everyone', '::1/129']) {
      expect(() => parseCloudArgs(['--trust-proxy', bad], {}), bad).toThrow(/--trust-proxy/);
    }
  });

  it('picks the right-most X-Forwarded-For entry that is not a trusted proxy', () => {
    const proxies = new TrustedProxies(['loopback', '10.0.0.0/8']);
    const cases: [peer: string, xff: string | undefined, client: string][] = [
      // an untrusted peer: its X-Forwarded-For is whatever it wants it to be
      ['203.0.113.9', '198.51.100.1', '203.0.113.9'],
      ['::ffff:203.0.113.9', '198.51.100.1', '203.0.113.9'],
      // a trusted peer without the header, or with an empty one
      ['127.0.0.1', undefined, '127.0.0.1'],
      ['127.0.0.1', '  ', '127.0.0.1'],
      // one proxy; a second one in the chain; a client that forged entries to the left
      ['127.0.0.1', '198.51.100.1', '198.51.100.1'],
      ['::ffff:127.0.0.1', '198.51.100.1, 10.1.2.3', '198.51.100.1'],
      ['::1', '6.6.6.6, 1.2.3.4, 198.51.100.1, 10.1.2.3', '198.51.100.1'],
      // only trusted hops: the left-most is as far as we can see
      ['127.0.0.1', '10.9.9.9, 10.1.2.3', '10.9.9.9'],
      // ports and brackets some proxies add; IPv4-mapped IPv6 reads as IPv4
      ['127.0.0.1', '198.51.100.1:4711', '198.51.100.1'],
      ['127.0.0.1', '[2001:db8::1]:4711', '2001:db8::1'],
      ['127.0.0.1', '::ffff:198.51.100.1', '198.51.100.1'],
      // garbage where the client's address should be: taken as it is (bounded), never skipped
      ['127.0.0.1', '198.51.100.1, unknown', 'unknown'],
    ];
    for (const [peer, xff, client] of cases)
      expect([peer, xff, proxies.clientAddress(peer, xff)]).toEqual([peer, xff, client]);
    expect(new TrustedProxies([]).clientAddress('127.0.0.1', '198.51.100.1')).toBe('127.0.0.1');
    expect(new TrustedProxies(['linklocal', 'uniquelocal']).clientAddress('192.168.1.1', '198.51.100.1')).toBe(
      '198.51.100.1',
    );
    expect(proxies.clientAddress('127.0.0.1', 'x'.repeat(500)).length).toBeLessThanOrEqual(64);
  });
});

/** Wrong passwords for different accounts from one client address until the address is throttled. */
async function failUntilThrottled(t: TestCloud, headers: () => Record<string, string>): Promise<number> {
  for (let i = 1; i <= 300; i++) {
    const res = await t.post('/v1/auth/token', {
      headers: headers(),
      body: { grant_type: 'password', email: `stuffed-${i}@example.test`, password: 'wrong password' },
    });
    if (res.status === 429) return i;
    expect(res.status).toBe(401);
  }
  throw new Error('never throttled');
}

describe('the client address behind a proxy', () => {
  it('counts clients behind a trusted proxy one by one: one client throttled, the next one signs in', async () => {
    const t = await startTestCloud({ trustProxy: ['loopback'] });
    clouds.push(t);
    const victim = await t.user();
    await failUntilThrottled(t, () => ({ 'x-forwarded-for': '203.0.113.66' }));
    const stillThrottled = await t.post('/v1/auth/token', {
      headers: { 'x-forwarded-for': '203.0.113.66' },
      body: { grant_type: 'password', email: victim.email, password: victim.password },
    });
    expect(stillThrottled.status).toBe(429);
    const other = await t.post('/v1/auth/token', {
      headers: { 'x-forwarded-for': '198.51.100.7' },
      body: { grant_type: 'password', email: victim.email, password: victim.password },
    });
    expect(other.status).toBe(200);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const t = await startTestCloud({ trustProxy: ['10.0.0.0/8'] });
    clouds.push(t);
    let n = 0;
    // a new forged address on every attempt does not escape the throttle of the real one
    await failUntilThrottled(t, () => ({ 'x-forwarded-for': `198.51.100.${++n % 250}` }));
    const res = await t.post('/v1/auth/token', {
      headers: { 'x-forwarded-for': '192.0.2.200' },
      body: { grant_type: 'password', email: 'fresh@example.test', password: 'wrong password' },
    });
    expect(res.status).toBe(429);
  });
});
