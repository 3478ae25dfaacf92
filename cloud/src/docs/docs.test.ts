import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '@smarthome/web/serve';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

const require = createRequire(import.meta.url);
let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

describe('API documentation', () => {
  it('serves OpenAPI 3.1 with version 1.0.0 listing every mounted route', async () => {
    const res = await t.get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('1.0.0');
    const listed = new Set<string>();
    for (const [p, item] of Object.entries(res.body.paths as Record<string, object>))
      for (const m of Object.keys(item)) listed.add(`${m} ${p}`);
    for (const r of t.cloud.routes) expect(listed, `${r.method} ${r.path}`).toContain(`${r.method} ${r.path}`);
    expect(listed).toContain('post /v1/auth/token');
    const token = res.body.paths['/v1/auth/token'].post;
    expect(token.responses['401'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorCode');
    expect(token.responses['400'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorMessage');
    // a JSON body the router reads must be declared JSON: 415 {message}; the receivers that read their own body take any type
    expect(token.responses['415'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorMessage');
    expect(res.body.paths['/v1/automations/webhook/{webhook_id}'].post.responses['415']).toBeUndefined();
    expect(res.body.paths['/v1/webhooks/store-iap'].post.responses['415']).toBeUndefined();
    expect(res.body.components.schemas.TokenResponse.properties.token_type).toBeDefined();
    // the states listing documents its ETag, 304 and gzip
    const states = res.body.paths['/v1/entities/states'].get;
    expect(Object.keys(states.responses).sort()).toEqual(['200', '304', '401', '403', '503']);
    expect(states.responses['503'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorCode');
    // every route may answer 503 while the database is unreachable
    for (const item of Object.values(res.body.paths as Record<string, Record<string, { responses: object }>>)) {
      for (const op of Object.values(item)) expect(Object.keys(op.responses)).toContain('503');
    }
    expect(Object.keys(states.responses['200'].headers).sort()).toEqual(['etag', 'vary']);
    expect(
      states.parameters
        .filter((p: { in: string }) => p.in === 'header')
        .map((p: { name: string }) => p.name)
        .sort(),
    ).toEqual(['accept-encoding', 'if-none-match', 'x-organization-id']);
  });
  it('serves Swagger UI at /docs without auth, under the portal CSP, pointing at /openapi.json', async () => {
    const res = await t.get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const version = (
      JSON.parse(readFileSync(require.resolve('swagger-ui-dist/package.json'), 'utf8')) as { version: string }
    ).version;
    const scripts = [...res.text.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1]);
    expect(scripts).toEqual([`/docs/swagger-ui-${version}/swagger-ui-bundle.js`, '/docs/init.js']);
    // nothing inline: every script and style is a file the CSP allows
    expect(res.text).not.toMatch(/<script>|<style|style=/);
    expect([...res.text.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1])).toEqual([
      `/docs/swagger-ui-${version}/swagger-ui.css`,
      '/docs/docs.css',
    ]);
    const init = await t.get('/docs/init.js');
    expect(init.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(init.text).toContain('url: "/openapi.json"');
    expect(init.text).toContain('validatorUrl: null');
  });
  it('serves the package files themselves, cached for a year, gzipped when asked', async () => {
    const version = (
      JSON.parse(readFileSync(require.resolve('swagger-ui-dist/package.json'), 'utf8')) as { version: string }
    ).version;
    const dir = `/docs/swagger-ui-${version}`;
    const original = readFileSync(require.resolve('swagger-ui-dist/swagger-ui-bundle.js'));
    const plain = await fetch(`${t.url}${dir}/swagger-ui-bundle.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await plain.arrayBuffer()).equals(original)).toBe(true);
    // fetch decodes gzip itself: the same bytes arrive, announced as gzip
    const zipped = await fetch(`${t.url}${dir}/swagger-ui-bundle.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(Buffer.from(await zipped.arrayBuffer()).equals(original)).toBe(true);
    const css = await t.get(`${dir}/swagger-ui.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(css.text).toContain('.swagger-ui');
    // only the listed files: no path into node_modules
    for (const p of [`${dir}/package.json`, `${dir}/..%2fpackage.json`, '/docs/swagger-ui-0.0.0/swagger-ui.css']) {
      const res = await t.get(p);
      expect([p, res.status, res.body]).toEqual([p, 404, { message: 'not found' }]);
    }
  });
});
