import type { Hono } from 'hono';
import { html, raw } from 'hono/html';
import { buildOpenApiDocument, type RouteSpec } from '@smarthome/protocol';

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** GET /openapi.json and GET /docs (no auth), built from the routes actually mounted. */
export function mountDocs(app: Hono<any>, mounted: () => RouteSpec[]): void {
  let cached: { count: number; doc: ReturnType<typeof buildOpenApiDocument> } | null = null;
  const document = () => {
    const list = mounted();
    if (!cached || cached.count !== list.length) {
      cached = {
        count: list.length,
        doc: buildOpenApiDocument(list, {
          title: 'Smart-Home Control Portal API',
          description: 'Cloud relay of the smart-home platform. See portal-api.md and contract.md.',
          everyRoute: { 503: 'database unavailable ({error:"database_unavailable"}, Retry-After)' },
        }),
      };
    }
    return cached.doc;
  };
  app.get('/openapi.json', (c) => c.json(document()));
  app.get('/docs', (c) => {
    const doc = document();
    const byTag = new Map<string, string[]>();
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const [method, op] of Object.entries(item as Record<string, any>)) {
        const tag = op.tags?.[0] ?? 'other';
        const body = op.requestBody?.content?.['application/json']?.schema;
        const ok = Object.entries(op.responses ?? {}).find(([code]) => code.startsWith('2'));
        const okSchema = (ok?.[1] as any)?.content?.['application/json']?.schema;
        const ref = (s: any) =>
          s?.$ref
            ? s.$ref.split('/').pop()
            : s?.type === 'array' && s.items?.$ref
              ? `${s.items.$ref.split('/').pop()}[]`
              : s
                ? 'inline'
                : '—';
        const errors = Object.keys(op.responses ?? {})
          .filter((code) => !code.startsWith('2'))
          .join(', ');
        const row =
          `<tr><td><code class="m ${method}">${method.toUpperCase()}</code></td><td><code>${escape(path)}</code></td>` +
          `<td>${escape(op.summary ?? '')}</td><td>${escape(ref(body))}</td><td>${ok ? escape(`${ok[0]} ${ref(okSchema)}`) : ''}</td><td>${escape(errors)}</td>` +
          `<td>${op.security?.length ? escape(Object.keys(op.security[0]).join(',')) : 'none'}</td></tr>`;
        byTag.set(tag, [...(byTag.get(tag) ?? []), row]);
      }
    }
    const sections = [...byTag]
      .map(
        ([tag, rows]) =>
          `<h2>${escape(tag)}</h2><table><tr><th>method</th><th>path</th><th>summary</th><th>body</th><th>success</th><th>errors</th><th>auth</th></tr>${rows.join('')}</table>`,
      )
      .join('');
    const schemas = Object.entries(doc.components?.schemas ?? {})
      .map(
        ([name, schema]) =>
          `<details id="${escape(name)}"><summary>${escape(name)}</summary><pre>${escape(JSON.stringify(schema, null, 2))}</pre></details>`,
      )
      .join('');
    return c.html(html`<!doctype html><html><head><meta charset="utf-8"><title>${doc.info.title}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:80rem}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;vertical-align:top}.m{font-weight:bold}.get{color:#06c}.post{color:#080}.put,.patch{color:#a60}.delete{color:#c00}pre{background:#f6f6f6;padding:.5rem;overflow:auto}</style>
</head><body><h1>${doc.info.title} <small>${doc.info.version}</small></h1>
<p>Bearer auth: <code>Authorization: Bearer &lt;token&gt;</code>. Organization context: <code>X-Organization-Id</code>. Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
${raw(sections)}<h2>Schemas</h2>${raw(schemas)}</body></html>`);
  });
}
