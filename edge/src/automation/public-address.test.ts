import { describe, expect, it } from 'vitest';
import { CallUrlError, UrlCaller, isPublicAddress } from './call-url.ts';

/**
 * The cloud replica's SSRF table: every way of writing a non-public IPv4 target inside an
 * IPv6 address, plus the IPv4/IPv6 ranges that are not public unicast. Each target is tried as
 * a literal URL and as a host name that resolves to it (DNS is the usual way in).
 */
const REFUSED: [string, string][] = [
  ['IPv4-compatible, dotted', '::127.0.0.1'],
  ['IPv4-compatible, hex (metadata)', '::a9fe:a9fe'],
  ['IPv4-compatible, private', '::a00:1'],
  ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
  ['IPv4-mapped metadata, hex', '::ffff:a9fe:a9fe'],
  ['IPv4-translated (SIIT)', '::ffff:0:7f00:1'],
  ['NAT64 well-known prefix, loopback', '64:ff9b::127.0.0.1'],
  ['NAT64 well-known prefix, metadata', '64:ff9b::a9fe:a9fe'],
  ['NAT64 local-use prefix', '64:ff9b:1::a00:1'],
  ['6to4 of loopback', '2002:7f00:1::1'],
  ['6to4 of metadata', '2002:a9fe:a9fe::1'],
  ['6to4 of a LAN address', '2002:c0a8:101::'],
  ['Teredo, obfuscated client 127.0.0.1', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
  ['Teredo, obfuscated client 10.0.0.1', '2001:0:4136:e378::f5ff:fffe'],
  ['Teredo, private server', '2001:0:a00:1::f7f7:f7f7'],
  ['IPv6 unspecified', '::'],
  ['IPv6 loopback', '::1'],
  ['IPv6 link-local', 'fe80::1'],
  ['IPv6 unique-local (AWS metadata)', 'fd00:ec2::254'],
  ['IPv6 site-local (deprecated)', 'fec0::1'],
  ['IPv6 multicast', 'ff02::1'],
  ['IPv6 discard-only', '100::1'],
  ['IPv6 benchmarking', '2001:2::1'],
  ['IPv6 documentation', '2001:db8::1'],
  ['IPv6 outside global unicast 2000::/3', '4000::1'],
  ['IPv4 unspecified', '0.0.0.0'],
  ['IPv4 "this network"', '0.1.2.3'],
  ['IPv4 loopback', '127.0.0.1'],
  ['IPv4 private', '10.1.2.3'],
  ['IPv4 private', '172.16.0.1'],
  ['IPv4 private', '192.168.1.1'],
  ['IPv4 link-local (metadata)', '169.254.169.254'],
  ['IPv4 CGNAT', '100.64.0.1'],
  ['IPv4 IETF protocol assignments', '192.0.0.1'],
  ['IPv4 documentation', '192.0.2.1'],
  ['IPv4 benchmarking', '198.18.0.1'],
  ['IPv4 reserved (class E)', '240.0.0.1'],
  ['IPv4 multicast', '224.0.0.1'],
  ['IPv4 broadcast', '255.255.255.255'],
];

const PUBLIC: [string, string][] = [
  ['IPv4', '8.8.8.8'],
  ['IPv6', '2606:4700:4700::1111'],
  ['IPv4-mapped public', '::ffff:8.8.8.8'],
  ['NAT64 of a public address', '64:ff9b::808:808'],
  ['6to4 of a public address', '2002:808:808::1'],
];

const literal = (address: string) => (address.includes(':') ? `[${address}]` : address);

async function refusal(p: Promise<unknown>): Promise<string | null> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  return err instanceof CallUrlError ? err.code : String(err);
}

describe('public-only call_url targets', () => {
  it.each(REFUSED)('refuses %s (%s)', async (_what, address) => {
    expect(isPublicAddress(address)).toBe(false);
    const replica = new UrlCaller({
      policy: 'public-only',
      resolve: async () => [{ address, family: address.includes(':') ? 6 : 4 }],
    });
    expect(await refusal(replica.call({ method: 'GET', url: `http://${literal(address)}:9/`, timeout: 2 }))).toBe(
      'refused',
    );
    expect(await refusal(replica.call({ method: 'GET', url: 'http://innocent.example:9/', timeout: 2 }))).toBe(
      'refused',
    );
  });

  it.each(PUBLIC)('counts %s (%s) as public', (_what, address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('refuses a name when any of its addresses is not public', async () => {
    const replica = new UrlCaller({
      policy: 'public-only',
      resolve: async () => [
        { address: '8.8.8.8', family: 4 },
        { address: '::a9fe:a9fe', family: 6 },
      ],
    });
    expect(await refusal(replica.call({ method: 'GET', url: 'http://mixed.example:9/', timeout: 2 }))).toBe('refused');
  });

  it('rejects what is not an address at all', () => {
    for (const junk of ['', 'localhost', '127.1', '1.2.3.4.5', '::g', '[::1]'])
      expect([junk, isPublicAddress(junk)]).toEqual([junk, false]);
  });
});
