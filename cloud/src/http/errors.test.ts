import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawPost } from '@smarthome/protocol/testing/raw-http';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud({ bodyLimitBytes: 64 * 1024 });
  // A route that fails unexpectedly, to see what a client gets for a 500.
  t.cloud.app.get('/__test/boom', () => {
    throw new Error('secret internals at /srv/app.ts:42');
  });
});
afterAll(async () => {
  await t.stop();
});

/** Raw HTTP so we control Content-Length and chunking. */
const rawRequest = (opts: { path: string; headers: Record<string, string | number>; chunks: Buffer[] }) =>
  rawPost(`${t.url}${opts.path}`, opts.headers, opts.chunks);

describe('error model', () => {
  it('unknown routes answer 404 {message:"not found"}', async () => {
    for (const [m, p] of [
      ['GET', '/v1/nope'],
      ['POST', '/v1/nope'],
      ['DELETE', '/v1/account/x/y'],
    ]) {
      const res = await t.request(m, p);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'not found' });
    }
  });
  it('malformed JSON and non-object bodies answer 400 {message}', async () => {
    for (const raw of ['{bad', '[1,2]', '"text"', '42', 'null', '\xff\xfe']) {
      const res = await t.post('/v1/auth/register', { raw });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['message']);
    }
  });
  it('an unexpected failure is 500 {error:"internal_error"} with no stack or internals', async () => {
    const res = await t.get('/__test/boom');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'internal_error' });
    expect(res.text).not.toContain('secret');
    expect(res.text).not.toContain('.ts');
  });
  it('an oversize body with an honest Content-Length answers 413 {message}', async () => {
    const big = Buffer.alloc(100 * 1024, 'a');
    const res = await rawRequest({
      path: '/v1/auth/register',
      headers: { 'content-type': 'application/json', 'content-length': big.length },
      chunks: [big],
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ message: 'body too large' });
  });
  it('an oversize chunked body without Content-Length answers 413 (bytes are counted as read)', async () => {
    const chunk = Buffer.alloc(16 * 1024, 'a');
    const res = await rawRequest({
      path: '/v1/auth/register',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      chunks: [Buffer.from('{"email":"'), ...Array.from({ length: 8 }, () => chunk), Buffer.from('"}')],
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ message: 'body too large' });
  });
  it('a small Content-Length in front of a large body reads only what was declared', async () => {
    const body = Buffer.from(JSON.stringify({ email: 'lie@example.test', password: 'password123' }));
    const res = await rawRequest({
      path: '/v1/auth/register',
      headers: { 'content-type': 'application/json', 'content-length': 10 },
      chunks: [body],
    });
    // Only 10 bytes of JSON arrive: malformed, not a bypass.
    expect(res.status).toBe(400);
  });
  it('a body not declared as JSON answers 415 {message}; a JSON type with parameters is fine (issue #13)', async () => {
    const body = JSON.stringify({ email: 'typed@example.test', password: 'password123' });
    for (const headers of [
      { 'content-type': 'text/plain' },
      {},
      { 'content-type': 'application/x-www-form-urlencoded' },
    ] as Record<string, string>[]) {
      const res = await rawRequest({ path: '/v1/auth/register', headers, chunks: [Buffer.from(body)] });
      expect([headers['content-type'], res.status, JSON.parse(res.body)]).toEqual([
        headers['content-type'],
        415,
        { message: 'Content-Type must be application/json' },
      ]);
    }
    const ok = await t.post('/v1/auth/register', {
      raw: body,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(ok.status).toBe(201);
  });
  it('NUL in a body string answers 400 and in a path parameter 404, on either engine (PostgreSQL cannot store it; issue #13 fuzz)', async () => {
    const owner = await t.user();
    const created = await t.post('/v1/organizations', { token: owner.token, raw: '{"name":"a\\u0000b"}' });
    expect([created.status, created.body]).toEqual([
      400,
      { message: 'JSON body strings may not contain NUL (U+0000)' },
    ]);
    const key = await t.post('/v1/organizations', { token: owner.token, raw: '{"name":"fine","x\\u0000":1}' });
    expect(key.status).toBe(400);
    // an escaped backslash followed by "u0000" is six ordinary characters, not NUL
    const literal = await t.post('/v1/organizations', { token: owner.token, raw: '{"name":"a\\\\u0000b"}' });
    expect([literal.status, literal.body.name]).toEqual([201, 'a\\u0000b']);
    for (const path of [
      '/v1/organizations/%00',
      `/v1/organizations/${literal.body.id}/members/%00`,
      '/v1/account/tokens/%00',
    ]) {
      const res = await t.request(path.startsWith('/v1/account') ? 'DELETE' : 'PATCH', path, {
        token: owner.token,
        body: { name: 'x', role: 'member' },
      });
      expect([path, res.status, res.body]).toEqual([path, 404, { message: 'not found' }]);
    }
  });
  it('the server keeps serving after all of the above', async () => {
    expect((await t.get('/healthz')).body).toEqual({ status: 'ok' });
  });
});
