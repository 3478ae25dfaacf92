import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApiDocument, defineRoute } from '../route.ts';
import { installErrorHandling } from './app.ts';
import { HttpError, badRequest } from './errors.ts';
import { readJsonObject } from './body.ts';
import { SpecRouter } from './router.ts';

const Body = z.object({ name: z.string() }).meta({ id: 'RouterTestBody' });

const routerBodyRoute = defineRoute({
  method: 'post',
  path: '/router',
  summary: 'router reads the body',
  tag: 't',
  auth: 'none',
  body: Body,
  status: 200,
  response: z.object({ name: z.string() }),
  errors: [400],
});
const optionalBodyRoute = defineRoute({
  method: 'post',
  path: '/optional',
  summary: 'every body field is optional',
  tag: 't',
  auth: 'none',
  body: z.object({ name: z.string().optional() }),
  status: 200,
  response: z.object({ name: z.string() }),
  errors: [400],
});
const manualBodyRoute = defineRoute({
  method: 'post',
  path: '/manual',
  summary: 'handler reads the body',
  tag: 't',
  auth: 'none',
  query: z.object({ gate: z.enum(['open', 'closed']) }),
  body: Body,
  readBody: 'manual',
  status: 200,
  response: z.object({ got: z.unknown() }),
  errors: [400, 404],
  errorShapes: { 400: 'error' },
});

function app() {
  const hono = new Hono();
  installErrorHandling(hono, { error: () => {} });
  const router = new SpecRouter<null>(hono, { authenticate: async () => null });
  router.add(routerBodyRoute, ({ body }) => ({ name: body.name }));
  router.add(optionalBodyRoute, ({ body }) => ({ name: body.name ?? 'default' }));
  router.add(manualBodyRoute, async ({ c, query, body }) => {
    // a manual body is not parsed by the router: typed (and passed) as undefined
    const none: undefined = body;
    expect(none).toBeUndefined();
    if (query.gate === 'closed') throw new HttpError(404, 'closed');
    const read = await readJsonObject(c);
    if (read.explicit) throw new HttpError(400, 'explicit', { shape: 'message' });
    if (typeof read.name !== 'string') throw badRequest('name required');
    return { got: read };
  });
  const post = (path: string, body: string) =>
    hono.request(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  /** `contentType` null: no Content-Type header at all (a byte body gets none by default) */
  const postAs = (path: string, body: string, contentType: string | null) =>
    hono.request(path, {
      method: 'POST',
      body: new TextEncoder().encode(body),
      headers: contentType === null ? {} : { 'content-type': contentType },
    });
  return { router, post, postAs };
}

describe('SpecRouter readBody / errorShapes', () => {
  it("reads and validates the body by default ('router')", async () => {
    const { post } = app();
    expect(await (await post('/router', '{"name":"a"}')).json()).toEqual({ name: 'a' });
    const bad = await post('/router', '{}');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ message: expect.stringContaining('name') });
  });

  it("with readBody 'manual' leaves the body to the handler, which may answer before reading it", async () => {
    const { post } = app();
    const closed = await post('/manual?gate=closed', 'not json at all');
    expect(closed.status).toBe(404);
    expect(await closed.json()).toEqual({ message: 'closed' });
    const ok = await post('/manual?gate=open', '{"name":"a","extra":1}');
    expect(await ok.json()).toEqual({ got: { name: 'a', extra: 1 } });
  });

  it('answers HttpErrors of an overridden status in the spec shape, unless the error forces its own', async () => {
    const { post } = app();
    expect(await (await post('/manual?gate=open', '{}')).json()).toEqual({ error: 'name required' });
    expect(await (await post('/manual?gate=open', 'nope')).json()).toEqual({ error: 'malformed JSON body' });
    expect(await (await post('/manual?gate=nope', '{}')).json()).toEqual({ error: expect.stringContaining('gate') });
    expect(await (await post('/manual?gate=open', '{"explicit":true}')).json()).toEqual({ message: 'explicit' });
  });

  it('answers 415 {message} for a body not declared as JSON; an empty body needs no Content-Type (issue #13)', async () => {
    const { postAs } = app();
    for (const contentType of [
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonp',
      null,
    ]) {
      const res = await postAs('/router', '{"name":"a"}', contentType);
      expect([contentType, res.status, await res.json()]).toEqual([
        contentType,
        415,
        { message: 'Content-Type must be application/json' },
      ]);
    }
    for (const contentType of [
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON',
      'application/merge-patch+json',
    ]) {
      const res = await postAs('/router', '{"name":"a"}', contentType);
      expect([contentType, res.status, await res.json()]).toEqual([contentType, 200, { name: 'a' }]);
    }
    for (const contentType of [null, 'text/plain']) {
      const empty = await postAs('/optional', '', contentType);
      expect([empty.status, await empty.json()]).toEqual([200, { name: 'default' }]);
    }
  });

  it('documents a manual body and the overridden error shapes in OpenAPI', () => {
    const { router } = app();
    const doc = buildOpenApiDocument(router.routes, { title: 't' }) as any;
    const manual = doc.paths['/manual'].post;
    expect(manual.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/RouterTestBody');
    expect(manual.responses['400'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorCode');
    expect(manual.responses['404'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorMessage');
    expect(doc.paths['/router'].post.responses['400'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorMessage',
    );
    // the router refuses a body not declared as JSON; a manual reader decides for itself
    expect(doc.paths['/router'].post.responses['415'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorMessage',
    );
    expect(manual.responses['415']).toBeUndefined();
    // every body is read within a byte limit, documented or not in the route's own errors
    expect(doc.paths['/router'].post.responses['413'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorMessage',
    );
  });
});
