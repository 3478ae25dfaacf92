import http from 'node:http';
import https from 'node:https';
import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction, Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import { isPublicAddress, parseAddress } from './public-address.ts';

export { isPublicAddress };

/**
 * The call_url action's HTTP client (node:http/https, so we own the socket):
 *  - a deadline for the whole exchange (default 10 s, at most 60 s);
 *  - the response is streamed and aborted beyond `maxResponseBytes`;
 *  - redirects are followed by hand (at most 5), each hop checked again; Authorization
 *    and Cookie are dropped when a redirect leaves the original host;
 *  - policy `public-only` (cloud replica): the address the socket connects to must be
 *    public unicast (isPublicAddress: IPv6 forms embedding IPv4 are judged by that IPv4):
 *    private, loopback, link-local, metadata, CGNAT, unique-local, multicast, unspecified
 *    and reserved ranges are refused. The check
 *    runs in the socket's DNS `lookup` hook and again on the connected socket's
 *    remoteAddress, so a name that re-resolves to a private address (DNS rebinding)
 *    fails at connect time. `allowList` (hostnames, IPs or CIDRs) opts targets back in.
 *  - policy `lan-allowed` (home edge): any address.
 */

/** `lan-allowed` on a home edge; `public-only` on a cloud replica (SSRF protection). */
export type UrlPolicy = 'lan-allowed' | 'public-only';

export interface CallUrlOptions {
  policy?: UrlPolicy;
  /** hostnames (exact, case-insensitive), IP addresses or CIDRs allowed even under public-only */
  allowList?: string[];
  /** DNS resolver (tests inject one); default dns.lookup with all addresses */
  resolve?: (hostname: string) => Promise<{ address: string; family: number }[]>;
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  maxResponseBytes?: number;
  maxRedirects?: number;
}

export interface CallUrlRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Record<string, unknown>;
  /** seconds */
  timeout?: number;
}

export interface CallUrlResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** the body parsed as JSON when it is JSON */
  json?: unknown;
  url: string;
}

export class CallUrlError extends Error {
  readonly code: 'refused' | 'timeout' | 'too_large' | 'redirects' | 'invalid' | 'network';
  constructor(code: CallUrlError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CallUrlError';
    this.code = code;
  }
}

const DEFAULTS = { defaultTimeoutMs: 10_000, maxTimeoutMs: 60_000, maxResponseBytes: 1_048_576, maxRedirects: 5 };

interface AllowEntry {
  host?: string;
  cidr?: [ipaddr.IPv4 | ipaddr.IPv6, number];
}
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
function compileAllowList(list: string[]): AllowEntry[] {
  return list.map((e) => {
    const s = e.trim().toLowerCase();
    if (s.includes('/')) {
      try {
        return { cidr: ipaddr.parseCIDR(s) };
      } catch {
        throw new Error(`call_url allow-list: bad CIDR "${e}"`);
      }
    }
    const ip = parseAddress(s);
    if (ip) return { cidr: [ip, ip.kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number] };
    if (!HOST_NAME.test(s))
      throw new Error(`call_url allow-list: "${e}" is neither an IP address, a CIDR nor a host name`);
    return { host: s };
  });
}

/**
 * A comma-separated allow-list (--call-url-allow / CALL_URL_ALLOW): IP addresses, CIDRs and
 * exact host names. Throws on an entry that is none of these.
 */
export function parseCallUrlAllowList(text: string): string[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  compileAllowList(entries);
  return entries;
}

function addressAllowed(entries: AllowEntry[], address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  // A dual-stack socket reports an IPv4 peer as ::ffff:a.b.c.d: match it against IPv4 entries.
  const ip =
    parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
      ? (parsed as ipaddr.IPv6).toIPv4Address()
      : parsed;
  return entries.some((e) => e.cidr && ip.kind() === e.cidr[0].kind() && ip.match(e.cidr));
}

export class UrlCaller {
  private readonly policy: UrlPolicy;
  private readonly allow: AllowEntry[];
  private readonly resolveHost: (hostname: string) => Promise<{ address: string; family: number }[]>;
  private readonly o: typeof DEFAULTS;
  constructor(options: CallUrlOptions = {}) {
    this.policy = options.policy ?? 'lan-allowed';
    this.allow = compileAllowList(options.allowList ?? []);
    this.resolveHost = options.resolve ?? ((h) => dns.promises.lookup(h, { all: true, verbatim: true }));
    this.o = {
      defaultTimeoutMs: options.defaultTimeoutMs ?? DEFAULTS.defaultTimeoutMs,
      maxTimeoutMs: options.maxTimeoutMs ?? DEFAULTS.maxTimeoutMs,
      maxResponseBytes: options.maxResponseBytes ?? DEFAULTS.maxResponseBytes,
      maxRedirects: options.maxRedirects ?? DEFAULTS.maxRedirects,
    };
  }

  private hostAllowListed(hostname: string): boolean {
    const h = hostname.toLowerCase();
    return this.allow.some((e) => e.host === h);
  }

  /** Throws CallUrlError('refused') when the policy forbids connecting to `address` for `hostname`. */
  private checkAddress(hostname: string, address: string): void {
    if (this.policy === 'lan-allowed') return;
    if (this.hostAllowListed(hostname) || addressAllowed(this.allow, address)) return;
    if (!isPublicAddress(address))
      throw new CallUrlError('refused', `call_url refused: ${hostname} resolves to a non-public address (${address})`);
  }

  async call(req: CallUrlRequest, signal?: AbortSignal): Promise<CallUrlResponse> {
    const timeoutMs = Math.min(
      req.timeout !== undefined ? req.timeout * 1000 : this.o.defaultTimeoutMs,
      this.o.maxTimeoutMs,
    );
    const deadline = AbortSignal.timeout(timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    let method = req.method.toUpperCase();
    let headers: Record<string, string> = { ...(req.headers ?? {}) };
    let body: string | undefined;
    if (req.body !== undefined && method !== 'GET') {
      body = typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
      if (typeof req.body !== 'string' && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
        headers['Content-Type'] = 'application/json';
    }
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      throw new CallUrlError('invalid', `call_url: invalid URL "${req.url.slice(0, 200)}"`);
    }
    const originalHost = url.host;
    for (let hop = 0; ; hop++) {
      const res = await this.once(method, url, headers, body, combined, timeoutMs);
      const location = res.headers.location;
      if ([301, 302, 303, 307, 308].includes(res.status) && location) {
        if (hop >= this.o.maxRedirects)
          throw new CallUrlError('redirects', `call_url: more than ${this.o.maxRedirects} redirects`);
        let next: URL;
        try {
          next = new URL(location, url);
        } catch {
          throw new CallUrlError('invalid', 'call_url: invalid redirect location');
        }
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          headers = dropHeaders(headers, ['content-type', 'content-length']);
        }
        if (next.host !== originalHost)
          headers = dropHeaders(headers, ['authorization', 'cookie', 'proxy-authorization']);
        url = next;
        continue;
      }
      return res;
    }
  }

  private once(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<CallUrlResponse> {
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return Promise.reject(new CallUrlError('invalid', `call_url: unsupported scheme ${url.protocol}`));
    if (url.username || url.password)
      return Promise.reject(
        new CallUrlError('invalid', 'call_url: credentials in the URL are not allowed (use an Authorization header)'),
      );
    const hostname = url.hostname.replace(/^\[|\]$/g, '');
    // An IP literal never reaches the lookup hook: check it here (and again on connect).
    if (net.isIP(hostname)) {
      try {
        this.checkAddress(hostname, hostname);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const lookup: LookupFunction = (host, options, callback) => {
      this.resolveHost(host)
        .then((addresses) => {
          if (addresses.length === 0) throw new CallUrlError('network', `call_url: ${host} does not resolve`);
          const wanted =
            options.family === 4 || options.family === 6
              ? addresses.filter((a) => a.family === options.family)
              : addresses;
          for (const a of wanted) this.checkAddress(host, a.address);
          if (wanted.length === 0)
            throw new CallUrlError('network', `call_url: ${host} has no IPv${options.family} address`);
          if (options.all)
            (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, wanted);
          else callback(null, wanted[0].address, wanted[0].family);
        })
        .catch((err: unknown) => callback(err as NodeJS.ErrnoException, '', 0));
    };
    const mod = url.protocol === 'https:' ? https : http;
    return new Promise<CallUrlResponse>((resolve, reject) => {
      let settled = false;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        reject(
          err instanceof CallUrlError
            ? err
            : signal.aborted
              ? new CallUrlError('timeout', `call_url: no answer within ${timeoutMs} ms`)
              : new CallUrlError('network', `call_url: ${(err as Error).message}`, { cause: err }),
        );
        request.destroy();
      };
      const request = mod.request(url, {
        method,
        headers: {
          'User-Agent': 'smarthome-edge-automation',
          ...headers,
          ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}),
        },
        lookup,
        agent: false,
        signal,
      });
      request.on('socket', (socket: Socket) => {
        const verify = () => {
          const remote = socket.remoteAddress;
          try {
            if (!remote) throw new CallUrlError('refused', 'call_url: unknown peer address');
            this.checkAddress(hostname, remote);
          } catch (err) {
            fail(err);
          }
        };
        if (socket.remoteAddress) verify();
        else socket.once('connect', verify);
      });
      request.on('error', fail);
      request.on('response', (res) => {
        const chunks: Buffer[] = [];
        let total = 0;
        res.on('data', (chunk: Buffer) => {
          total += chunk.length;
          if (total > this.o.maxResponseBytes) {
            fail(new CallUrlError('too_large', `call_url: response larger than ${this.o.maxResponseBytes} bytes`));
            res.destroy();
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', fail);
        res.on('end', () => {
          if (settled) return;
          settled = true;
          const text = Buffer.concat(chunks).toString('utf8');
          const outHeaders: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers))
            if (v !== undefined) outHeaders[k] = Array.isArray(v) ? v.join(', ') : v;
          let json: unknown;
          if (/json/i.test(outHeaders['content-type'] ?? '')) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: outHeaders,
            body: text,
            ...(json !== undefined ? { json } : {}),
            url: url.toString(),
          });
        });
      });
      if (body !== undefined) request.end(body);
      else request.end();
    });
  }
}

function dropHeaders(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k.toLowerCase())));
}
