import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

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

const SECURITY_HEADERS: Record<string, string> = {
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
  ) =>
    new Response(head ? null : body, {
      status,
      headers: { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': cache },
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
          const cache = rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
          return answer(bytes as Uint8Array<ArrayBuffer>, 200, TYPES[ext] ?? 'application/octet-stream', cache, head);
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
