import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptsGzip, CONTENT_SECURITY_POLICY, createPortal, diskAssets } from '@smarthome/web/serve';
import { ensurePortalBuilt } from '@smarthome/web/serve/build';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

describe('portal files (createPortal over a build folder)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'portal-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<html><head><meta name="smarthome-portal" content=""></head></html>');
  writeFileSync(path.join(dir, 'assets/index-abc123.js'), 'console.log(1)');
  writeFileSync(path.join(dir, 'favicon.svg'), '<svg/>');
  writeFileSync(path.join(os.tmpdir(), 'secret.txt'), 'outside');
  const portal = createPortal('edge', diskAssets(dir));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const get = (p: string, method = 'GET', headers: Record<string, string> = {}) =>
    portal.respond(new Request(`http://h${p}`, { method, headers }));
  const js = 'console.log(1);\n'.repeat(200);
  writeFileSync(path.join(dir, 'assets/big-abc123.js'), js);

  it('hashed text assets go gzip-compressed to a client that accepts gzip, identity otherwise', async () => {
    const z = get('/assets/big-abc123.js', 'GET', { 'accept-encoding': 'gzip, deflate, br' })!;
    expect(z.status).toBe(200);
    expect(z.headers.get('content-encoding')).toBe('gzip');
    expect(z.headers.get('vary')).toBe('Accept-Encoding');
    expect(z.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const body = new Uint8Array(await z.arrayBuffer());
    expect(body.length).toBeLessThan(js.length / 10);
    expect(gunzipSync(body).toString('utf8')).toBe(js);
    // the second answer comes from the kept copy: the same bytes
    const again = get('/assets/big-abc123.js', 'GET', { 'accept-encoding': 'gzip' })!;
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(body);

    for (const headers of [
      {} as Record<string, string>,
      { 'accept-encoding': 'br' },
      { 'accept-encoding': 'gzip;q=0, br' },
    ]) {
      const plain = get('/assets/big-abc123.js', 'GET', headers)!;
      expect(plain.headers.get('content-encoding'), JSON.stringify(headers)).toBeNull();
      expect(plain.headers.get('vary')).toBe('Accept-Encoding');
      expect(await plain.text()).toBe(js);
    }
    const ranged = get('/assets/big-abc123.js', 'GET', { 'accept-encoding': 'gzip', range: 'bytes=0-9' })!;
    expect(ranged.headers.get('content-encoding')).toBeNull();
    expect(await ranged.text()).toBe(js);
    // unhashed files and the page are not compressed here
    expect(get('/favicon.svg', 'GET', { 'accept-encoding': 'gzip' })!.headers.get('content-encoding')).toBeNull();
    expect(get('/', 'GET', { 'accept-encoding': 'gzip' })!.headers.get('content-encoding')).toBeNull();
    const head = get('/assets/big-abc123.js', 'HEAD', { 'accept-encoding': 'gzip' })!;
    expect(head.headers.get('content-encoding')).toBe('gzip');
    expect(head.body).toBeNull();
  });

  it('reads Accept-Encoding with its q-values', () => {
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('deflate, GZIP;q=0.5')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('gzip; q=0.000')).toBe(false);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('*;q=0')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip('')).toBe(false);
    expect(acceptsGzip(null)).toBe(false);
  });

  it('hashed assets are immutable for a year; the page is revalidated and names the server', async () => {
    const js = get('/assets/index-abc123.js')!;
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await js.text()).toBe('console.log(1)');
    const page = get('/devices/12')!;
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await page.text()).toContain('<meta name="smarthome-portal" content="edge">');
    expect(get('/favicon.svg')!.headers.get('cache-control')).toBe('no-cache');
  });

  it('every answer carries the strict CSP and nosniff', () => {
    for (const p of ['/', '/assets/index-abc123.js', '/assets/gone-1.js']) {
      const res = get(p)!;
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
    }
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
  });

  it('never answers API paths, other methods, missing files or paths outside the build', async () => {
    for (const p of [
      '/v1/devices',
      '/v2/smarthomes',
      '/api/states',
      '/openapi.json',
      '/docs',
      '/healthz',
      '/auth/token',
      '/V1/x',
    ])
      expect(get(p), p).toBeNull();
    expect(get('/', 'POST')).toBeNull();
    expect(get('/assets/gone-1.js')!.status).toBe(404);
    const escape = get('/%2e%2e/secret.txt')!;
    expect(escape.status).toBe(404);
    expect(await escape.text()).not.toContain('outside');
    expect(get('/', 'HEAD')!.body).toBeNull();
  });

  it('without a build: a page saying how to build it', async () => {
    const res = createPortal('cloud', null).respond(new Request('http://h/'))!;
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('pnpm build');
  });
});

describe('the cloud serves the portal at / without shadowing its API', () => {
  let cloud: TestCloud;
  beforeAll(async () => {
    await ensurePortalBuilt();
    cloud = await startTestCloud();
  }, 120_000);
  afterAll(() => cloud?.stop());

  it('the page on / and on client-side routes, JSON on API paths', async () => {
    for (const p of ['/', '/homes', '/dashboards/3']) {
      const res = await cloud.get(p);
      expect(res.status, p).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.text).toContain('<meta name="smarthome-portal" content="cloud">');
      expect(res.text).toMatch(/<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js">/);
      expect(res.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    }
    const script = /src="(\/assets\/[^"]+\.js)"/.exec((await cloud.get('/')).text)![1];
    const js = await cloud.get(script);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toContain('immutable');
    // over real HTTP (node:http does not decompress): the compressed bytes and their headers
    const raw = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const req = httpRequest(cloud.url + script, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(raw.headers['vary']).toBe('Accept-Encoding');
    expect(gunzipSync(raw.body).toString('utf8')).toBe(js.text);
    const missing = await cloud.get('/v1/no-such-route');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/json');
    expect((await cloud.get('/v1/account')).status).toBe(401);
    expect((await cloud.get('/openapi.json')).body.openapi).toMatch(/^3\.1/);
    expect((await cloud.get('/healthz')).body).toEqual({ status: 'ok' });
    const post = await cloud.post('/', { body: {} });
    expect(post.status).toBe(404);
    expect(post.headers.get('content-type')).toContain('application/json');
  });
});
