import ipaddr from 'ipaddr.js';

/**
 * Is `address` a public unicast target (the cloud replica's call_url policy)?
 *
 * IPv6 forms that carry an IPv4 address are judged by that IPv4 address, because that is
 * where the packets may end up (a dual-stack kernel, a NAT64 gateway, a 6to4 or Teredo relay):
 * IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d
 * (also written in hex, ::a9fe:a9fe), NAT64 64:ff9b::/96, 6to4 2002::/16 and Teredo
 * 2001::/32 (server and XOR-obfuscated client). Everything else must be IPv4 "unicast" in
 * ipaddr.js's terms (no private, loopback, link-local, CGNAT, reserved, benchmarking,
 * documentation, multicast, broadcast or unspecified) or IPv6 global unicast (2000::/3)
 * outside every special-purpose range.
 */
export function isPublicAddress(address: string): boolean {
  const ip = parseAddress(address);
  if (!ip) return false;
  if (ip.kind() === 'ipv4') return ip.range() === 'unicast';
  const v6 = ip as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded) return embedded.every((v4) => v4.range() === 'unicast');
  // The NAT64 local-use prefix (RFC 8215) is not globally reachable by definition.
  if (v6.match(NAT64_LOCAL_USE)) return false;
  return v6.match(GLOBAL_UNICAST) && v6.range() === 'unicast';
}

/** An IP address (v4, or v6 without brackets; a zone id is ignored), or null. */
export function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const text = address.split('%')[0];
  // ipaddr.js reads "::a.b.c.d" as IPv4-mapped; spell a trailing dotted quad in hex so
  // every form is parsed as written.
  const hex = text.includes(':')
    ? text.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (m, a, b, c, d) => dottedToHex(m, [a, b, c, d]))
    : text;
  if (text.includes(':') ? !ipaddr.IPv6.isValid(hex) : !ipaddr.IPv4.isValidFourPartDecimal(text)) return null;
  return ipaddr.parse(hex);
}

const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];
const NAT64_LOCAL_USE = ipaddr.parseCIDR('64:ff9b:1::/48') as [ipaddr.IPv6, number];
const V4_IN_LOW_32_BITS = ['::ffff:0:0/96', '::ffff:0:0:0/96', '::/96', '64:ff9b::/96'].map(
  (c) => ipaddr.parseCIDR(c) as [ipaddr.IPv6, number],
);
const SIX_TO_FOUR = ipaddr.parseCIDR('2002::/16') as [ipaddr.IPv6, number];
const TEREDO = ipaddr.parseCIDR('2001::/32') as [ipaddr.IPv6, number];

function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const p = ip.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  // ::/96 also holds :: and ::1, which become 0.0.0.0 and 0.0.0.1: refused either way.
  if (V4_IN_LOW_32_BITS.some((cidr) => ip.match(cidr))) return [v4(p[6], p[7])];
  if (ip.match(SIX_TO_FOUR)) return [v4(p[1], p[2])];
  // Teredo: 2001:0:<server>:<flags>:<port ^ ffff>:<client ^ ffffffff>
  if (ip.match(TEREDO)) return [v4(p[2], p[3]), v4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
  return null;
}

function dottedToHex(original: string, octets: string[]): string {
  const n = octets.map(Number);
  if (n.some((o, i) => o > 255 || String(o) !== octets[i])) return original;
  return `${((n[0] << 8) | n[1]).toString(16)}:${((n[2] << 8) | n[3]).toString(16)}`;
}
