import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

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
  it('serves a rendered reference at /docs without auth', async () => {
    const res = await t.get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.text).toContain('/v1/auth/register');
    expect(res.text).toContain('TokenResponse');
  });
});
