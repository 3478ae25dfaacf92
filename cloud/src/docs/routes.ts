import type { Context, Hono } from 'hono';
import { buildOpenApiDocument, type RouteSpec } from '@smarthome/protocol';
import { SECURITY_HEADERS } from '@smarthome/web/serve';
import { loadSwaggerUi, type SwaggerUi } from './swagger-ui.ts';

/** The document Swagger UI renders; the same one clients download. */
export const SPEC_URL = '/openapi.json';

const INIT_JS = `// Swagger UI's dark theme is a class on <html>: follow the system like the portal
document.documentElement.classList.toggle('dark-mode', matchMedia('(prefers-color-scheme: dark)').matches);
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(SPEC_URL)},
  dom_id: '#swagger-ui',
  // a deep link is an <a> inside the operation's <button>: nested controls (axe: nested-interactive)
  deepLinking: false,
  // 200+ operations: tags start folded (a page a phone can render) with a filter box above them
  docExpansion: 'none',
  filter: true,
  // the default validator is a third-party service: homes are offline, and the CSP forbids it
  validatorUrl: null,
});
`;

/**
 * Swagger UI's light theme puts white text on light method colours and versions (axe:
 * color-contrast, serious): its own dark theme's dark text and darker stamps, in light mode too.
 */
const DOCS_CSS = `html:not(.dark-mode) .swagger-ui .opblock .opblock-summary-method { color: #080a0b; text-shadow: none; }
html:not(.dark-mode) .swagger-ui .opblock.opblock-head .opblock-summary-method { background: #b889ff; }
html:not(.dark-mode) .swagger-ui .opblock.opblock-options .opblock-summary-method { background: #6895c8; }
html:not(.dark-mode) .swagger-ui .opblock.opblock-deprecated .opblock-summary-method { background: #9a9a9a; }
html:not(.dark-mode) .swagger-ui .info .title small { background: #434b4f; }
html:not(.dark-mode) .swagger-ui .info .title small.version-stamp { background: #1d632e; }
html:not(.dark-mode) .swagger-ui .info a { color: #0b5cad; }
html:not(.dark-mode) .swagger-ui .btn.authorize { border-color: #1a7f4b; color: #1a7f4b; }
html:not(.dark-mode) .swagger-ui .btn.authorize svg { fill: #1a7f4b; }
`;

function page(title: string, assets: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)}</title>
<link rel="icon" type="image/png" href="${assets}/favicon-32x32.png">
<link rel="stylesheet" href="${assets}/swagger-ui.css">
<link rel="stylesheet" href="/docs/docs.css">
</head><body>
<main id="swagger-ui"><noscript>The reference needs JavaScript; the document itself: <a href="${SPEC_URL}">${SPEC_URL}</a> (OpenAPI 3.1).</noscript></main>
<script src="${assets}/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body></html>`;
}

/**
 * With the portal's headers and policy, unchanged: Swagger UI needs no inline script (its start-up
 * call is /docs/init.js) and no inline <style> (its CSS is a file; React sets style properties
 * through the DOM, which style-src does not govern).
 */
function send(c: Context, body: string | Buffer, type: string, cacheControl: string, gzip?: Buffer | null): Response {
  const headers: Record<string, string> = { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': cacheControl };
  let payload: string | Buffer = body;
  if (gzip) {
    headers.vary = 'accept-encoding';
    if (/\bgzip\b/.test(c.req.header('accept-encoding') ?? '')) {
      payload = gzip;
      headers['content-encoding'] = 'gzip';
    }
  }
  return c.body(payload as unknown as ArrayBuffer, 200, headers);
}

/**
 * GET /openapi.json and the reference UI at GET /docs (no auth), built from the routes actually
 * mounted. Swagger UI's files live under /docs/swagger-ui-<version>/, so they are cached for a
 * year and an upgrade of the package changes the URL.
 */
export function mountDocs(app: Hono<any>, mounted: () => RouteSpec[], swagger: SwaggerUi = loadSwaggerUi()): void {
  let cached: { count: number; doc: ReturnType<typeof buildOpenApiDocument> } | null = null;
  const document = () => {
    const list = mounted();
    if (!cached || cached.count !== list.length) {
      cached = {
        count: list.length,
        doc: buildOpenApiDocument(list, {
          title: 'Smart-Home Control Portal API',
          description:
            'Cloud relay of the smart-home platform. See portal-api.md and contract.md. ' +
            'Bearer auth: `Authorization: Bearer <token>`; organization context: `X-Organization-Id`.',
          everyRoute: { 503: 'database unavailable ({error:"database_unavailable"}, Retry-After)' },
        }),
      };
    }
    return cached.doc;
  };
  const assets = `/docs/swagger-ui-${swagger.version}`;
  app.get(SPEC_URL, (c) => c.json(document()));
  app.get('/docs', (c) => send(c, page(document().info.title, assets), 'text/html; charset=utf-8', 'no-cache'));
  app.get('/docs/docs.css', (c) => send(c, DOCS_CSS, 'text/css; charset=utf-8', 'no-cache'));
  app.get('/docs/init.js', (c) => send(c, INIT_JS, 'text/javascript; charset=utf-8', 'no-cache'));
  app.get(`${assets}/:file`, (c) => {
    const asset = swagger.asset(c.req.param('file'));
    // the app's JSON 404, like any unknown path
    if (!asset) return c.notFound();
    return send(c, asset.body, asset.type, 'public, max-age=31536000, immutable', asset.gzip);
  });
}
