import net from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';

declare module 'hono' {
  interface ContextVariableMap {
    /** set once per request by the cloud (the TCP peer, or the client a trusted proxy names) */
    clientAddress: string;
  }
}

/** The client's address: behind --trust-proxy, what the proxies' X-Forwarded-For says. */
export function clientAddress(c: Context): string {
  return c.get('clientAddress') ?? peerAddress(c);
}

/** The TCP peer of the request. */
export function peerAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Before every route: who the client is (throttling, the origin relayed to edges). */
export function clientAddressMiddleware(proxies: TrustedProxies): MiddlewareHandler {
  return async (c, next) => {
    c.set('clientAddress', proxies.clientAddress(peerAddress(c), c.req.header('x-forwarded-for')));
    await next();
  };
}

/** Words accepted by --trust-proxy for the usual places a load balancer lives. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** Longest client address kept from a header (a throttling key, not free text). */
const MAX_ADDRESS_LENGTH = 64;

/**
 * The proxies whose X-Forwarded-For is believed (--trust-proxy / TRUST_PROXY), and the
 * client address that follows from it: the right-most X-Forwarded-For entry that is not
 * itself a trusted proxy, and only when the TCP peer is one. An untrusted peer's header is
 * ignored: entries left of the first untrusted hop are whatever the client wrote.
 */
export class TrustedProxies {
  private readonly list = new net.BlockList();
  private readonly empty: boolean;

  /** entries: IP addresses, CIDRs, or loopback / linklocal / uniquelocal; throws on anything else */
  constructor(entries: string[]) {
    for (const entry of entries) {
      for (const range of NAMED_RANGES[entry.toLowerCase()] ?? [entry]) this.add(entry, range);
    }
    this.empty = entries.length === 0;
  }

  private add(entry: string, range: string): void {
    const [address, prefixText, ...rest] = range.split('/');
    const family = net.isIP(address);
    const max = family === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (!family || rest.length > 0 || (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) || prefix > max) {
      throw new Error(
        `--trust-proxy: "${entry}" is not an IP address, a CIDR, or one of ${Object.keys(NAMED_RANGES).join(', ')}`,
      );
    }
    this.list.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }

  trusts(address: string): boolean {
    const family = net.isIP(address);
    return family !== 0 && this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }

  clientAddress(peer: string, forwardedFor: string | undefined): string {
    const client = normalize(peer);
    if (this.empty || !forwardedFor || !this.trusts(client)) return client;
    const hops = forwardedFor
      .split(',')
      .map((hop) => normalize(hop.trim()))
      .filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) {
      if (!this.trusts(hops[i]) || i === 0) return hops[i];
    }
    return client;
  }
}

/** Splits and checks a --trust-proxy value (comma-separated). */
export function parseTrustProxy(text: string): string[] {
  if (text.trim() === '') return [];
  const entries = text.split(',').map((e) => e.trim());
  if (entries.some((e) => e === '')) throw new Error(`--trust-proxy: an empty entry in "${text}"`);
  new TrustedProxies(entries);
  return entries;
}

/** One spelling per address: no port, no brackets, IPv4-mapped IPv6 as IPv4. */
function normalize(text: string): string {
  let s = text;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) s = bracketed[1];
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(s)) s = s.slice(0, s.lastIndexOf(':'));
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s);
  if (mapped) s = mapped[1];
  return s.slice(0, MAX_ADDRESS_LENGTH);
}
