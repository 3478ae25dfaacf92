import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * Serving the portal build (web/dist) from the cloud and from every edge: one function that
 * answers a Request or passes (null), so each server wires it in a few lines and API paths
 * are never shadowed.
 */

/** Where the portal's files come from: the build folder on disk, or the edge executable's assets. */
export interface PortalAssets {
  /** `rel` is a path inside the build ("index.html", "assets/index-3f2a.js"); null when absent */
  read(rel: string): Uint8Array | null;
  readonly where: string;
}

/** The server the page talks to, told to it by a meta tag (no inline script under the CSP). */
export type PortalKind = 'cloud' | 'edge';

export const PORTAL_DIST = path.resolve(import.meta.dirname, '../dist');
/** Prefix of the portal's files among the single executable's assets (tools/src/build-edge). */
export const SEA_ASSET_PREFIX = 'portal/';

/** First path segments owned by the APIs (present or reserved): the portal never answers them. */
const API_SEGMENTS = new Set([
  'v1',
  'v2',
  'v3',
  'api',
  'auth',
  'openapi.json',
  'docs',
  'healthz',
  'health',
  'metrics',
  'webhook',
  'ws',
  'websocket',
]);

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

/** The headers of every answer the portal serves (the cloud's /docs sends them too). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
};

/** Text types worth compressing (images other than SVG and fonts are compressed already). */
const COMPRESSIBLE = new Set(['.js', '.css', '.svg', '.json', '.map', '.txt', '.webmanifest', '.html']);

/** Whether the client takes gzip: named in Accept-Encoding (or `*`) without q=0. */
export function acceptsGzip(header: string | null): boolean {
  if (!header) return false;
  let star = false;
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const zero = q !== undefined && Number(q.slice(2)) === 0;
    if (name === 'gzip') return !zero;
    if (name === '*') star = !zero;
  }
  return star;
}

export function diskAssets(dir = PORTAL_DIST): PortalAssets | null {
  if (!existsSync(path.join(dir, 'index.html'))) return null;
  const root = path.resolve(dir);
  return {
    where: dir,
    read(rel) {
      const file = path.resolve(root, rel);
      if (!file.startsWith(root + path.sep)) return null;
      try {
        return statSync(file).isFile() ? readFileSync(file) : null;
      } catch {
        return null;
      }
    },
  };
}

/** Inside the one-file edge executable: the build is among its assets. */
export function seaAssets(): PortalAssets | null {
  const sea = process.getBuiltinModule('node:sea');
  if (!sea?.isSea()) return null;
  // getAsset copies (getRawAsset's memory is the executable's own and must not reach a Response); copied once per file
  const cache = new Map<string, Uint8Array | null>();
  const read = (rel: string): Uint8Array | null => {
    if (cache.has(rel)) return cache.get(rel)!;
    let bytes: Uint8Array | null;
    try {
      bytes = new Uint8Array(sea.getAsset(SEA_ASSET_PREFIX + rel) as ArrayBuffer);
    } catch {
      bytes = null; // not an asset
    }
    if (cache.size < 1000) cache.set(rel, bytes);
    return bytes;
  };
  return read('index.html') ? { where: 'executable', read } : null;
}

/** The executable's assets, else the build on disk, else null (not built). */
export function defaultAssets(): PortalAssets | null {
  return seaAssets() ?? diskAssets();
}

/** Whether the portal may answer this path (never an API path). */
export function isPortalPath(pathname: string): boolean {
  const first = pathname.split('/')[1] ?? '';
  return !API_SEGMENTS.has(first.toLowerCase());
}

export interface Portal {
  /** The portal's answer to a GET/HEAD outside the API paths; null: not the portal's (the API answers). */
  respond(request: Request): Response | null;
  readonly built: boolean;
}

export function createPortal(kind: PortalKind, assets: PortalAssets | null = defaultAssets()): Portal {
  let index: string | null = null;
  // Hashed assets never change, so each is compressed once, at its first request, and kept.
  const gzipped = new Map<string, Uint8Array<ArrayBuffer>>();
  const gzipOf = (rel: string, bytes: Uint8Array): Uint8Array<ArrayBuffer> => {
    let z = gzipped.get(rel);
    if (!z) {
      z = new Uint8Array(gzipSync(bytes, { level: 9 }));
      if (gzipped.size < 1000) gzipped.set(rel, z);
    }
    return z;
  };
  const indexHtml = () => {
    if (index !== null || !assets) return index;
    const raw = assets.read('index.html');
    if (!raw) return null;
    index = Buffer.from(raw)
      .toString('utf8')
      .replace(
        /<meta name="smarthome-portal" content="[^"]*"\s*\/?>/,
        `<meta name="smarthome-portal" content="${kind}">`,
      );
    return index;
  };
  const answer = (
    body: string | Uint8Array<ArrayBuffer> | null,
    status: number,
    type: string,
    cache: string,
    head: boolean,
    extra: Record<string, string> = {},
  ) =>
    new Response(head ? null : body, {
      status,
      headers: { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': cache, ...extra },
    });

  return {
    built: assets !== null,
    respond(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return null;
      const url = new URL(request.url);
      let pathname: string;
      try {
        pathname = decodeURIComponent(url.pathname);
      } catch {
        return null;
      }
      if (!isPortalPath(pathname) || pathname.includes('\0')) return null;
      const head = request.method === 'HEAD';
      const rel = pathname.replace(/^\/+/, '');
      if (rel && rel !== 'index.html' && assets) {
        const bytes = assets.read(rel);
        const ext = path.extname(rel).toLowerCase();
        if (bytes) {
          // Vite names every file under assets/ by its content hash: it never changes, so cache it for a year.
          const hashed = rel.startsWith('assets/');
          const cache = hashed ? 'public, max-age=31536000, immutable' : 'no-cache';
          const type = TYPES[ext] ?? 'application/octet-stream';
          if (hashed && COMPRESSIBLE.has(ext)) {
            // A range names bytes of the identity body: never answered from the compressed one.
            const gzip = acceptsGzip(request.headers.get('accept-encoding')) && !request.headers.has('range');
            const vary = { vary: 'Accept-Encoding' };
            if (gzip)
              return answer(gzipOf(rel, bytes), 200, type, cache, head, { ...vary, 'content-encoding': 'gzip' });
            return answer(bytes as Uint8Array<ArrayBuffer>, 200, type, cache, head, vary);
          }
          return answer(bytes as Uint8Array<ArrayBuffer>, 200, type, cache, head);
        }
        // A missing file (an old hashed asset after an upgrade) is a 404, not the page.
        if (ext) return answer('not found', 404, 'text/plain; charset=utf-8', 'no-cache', head);
      }
      const html = indexHtml();
      if (html === null) {
        return answer(
          '<!doctype html><title>Portal not built</title><p>The portal is not built: run <code>pnpm build</code>.</p>',
          503,
          'text/html; charset=utf-8',
          'no-cache',
          head,
        );
      }
      // index.html names the current hashed files: always revalidated, so an upgrade shows at once.
      return answer(html, 200, 'text/html; charset=utf-8', 'no-cache', head);
    },
  };
}

/**
 * The portal at `/` as the fallback of GET/HEAD outside the API paths, as a Hono middleware
 * (typed by shape: web/ does not depend on hono): a route of the server, even one added after
 * this, answers first; what none answered (404) gets the page or its file. API paths keep their
 * JSON 404. `app.use('*', portalFallback('cloud'))` on the cloud, `'edge'` on every edge.
 */
export function portalFallback(kind: PortalKind, assets?: PortalAssets | null) {
  const portal = createPortal(kind, assets);
  return async (c: { req: { raw: Request }; res: Response }, next: () => Promise<void>): Promise<void> => {
    await next();
    if (c.res.status !== 404) return;
    const res = portal.respond(c.req.raw);
    if (res) c.res = res;
  };
}
