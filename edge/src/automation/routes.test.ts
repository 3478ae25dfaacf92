import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@smarthome/protocol';
import { SpecRouter, installErrorHandling, planLimitReached } from '@smarthome/protocol/server';
import { mountAutomationRoutes } from './routes.ts';
import { harness, until, type Harness } from '../testing/automation.ts';

describe('automation routes over HTTP', () => {
  let h: Harness;
  let server: Server;
  let base = '';
  let app: Hono;
  let limit = Infinity;
  let router: SpecRouter<unknown>;
  beforeEach(async () => {
    limit = Infinity;
    h = await harness({
      deps: {
        webhookRate: { perSecond: 1, burst: 8 },
        planLimit: {
          assertCanCreate: (n) => {
            if (n >= limit) throw planLimitReached();
          },
        },
      },
    });
    app = new Hono();
    installErrorHandling(app, { error() {} });
    router = new SpecRouter<unknown>(app, { authenticate: async () => ({}) });
    mountAutomationRoutes(router, { engine: h.engine });
    server = createAdaptorServer({ fetch: app.fetch }) as Server;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await h.close();
  });
  const req = (method: string, path: string, body?: unknown, raw?: string) =>
    fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });

  it('CRUD with HA-style input, 400s that point at the field, 404s, plan limit', async () => {
    let res = await req('POST', '/v1/automations', {
      alias: 'Hallway',
      description: 'pasted from HA',
      mode: 'queued',
      max: 3,
      triggers: [
        { trigger: 'state', entity_id: 'binary_sensor.hall', to: 'on' },
        { trigger: 'webhook', webhook_id: 'mine' },
      ],
      conditions: [],
      actions: [{ action: 'light.turn_on', target: { entity_id: 'light.hall' } }],
    });
    expect(res.status).toBe(201);
    const created = (await res.json()) as Record<string, any>;
    expect(created).toMatchObject({
      alias: 'Hallway',
      mode: 'queued',
      max: 3,
      enabled: true,
      edge_id: null,
      description: 'pasted from HA',
    });
    expect(created.trigger[0]).toEqual({ platform: 'state', entity_id: 'binary_sensor.hall', to: 'on' });
    expect(created.action[0]).toEqual({ service: 'light.turn_on', target: { entity_id: 'light.hall' } });
    expect(created.webhook_id).toHaveLength(43);
    expect(created.webhook_id).not.toBe('mine');

    res = await req('GET', '/v1/automations');
    expect(((await res.json()) as unknown[]).length).toBe(1);
    res = await req('GET', `/v1/automations/${created.id}`);
    expect(((await res.json()) as { id: string }).id).toBe(created.id);

    res = await req('PUT', `/v1/automations/${created.id}`, {
      alias: 'Hall 2',
      trigger: [{ platform: 'webhook' }],
      action: { service: 'light.turn_off' },
    });
    expect(res.status).toBe(200);
    const updated = (await res.json()) as Record<string, any>;
    expect(updated).toMatchObject({ alias: 'Hall 2', webhook_id: created.webhook_id, mode: 'single' });

    for (const [body, message] of [
      [
        {
          alias: 'x',
          trigger: { platform: 'state', entity_id: 'a.b' },
          action: [{ service: 'a.b' }, { delay: { hourz: 1 } }],
        },
        'action[1].delay: Unrecognized key: "hourz"',
      ],
      [
        { alias: 'x', trigger: { platform: 'teleport' }, action: [] },
        'trigger[0].platform: Invalid discriminator value',
      ],
      [
        { alias: 'x', trigger: { platform: 'state', entity_id: 'a.b' }, action: [{ frobnicate: 1 }] },
        'action[0]: action needs one of: service',
      ],
      [
        {
          alias: 'x',
          trigger: { platform: 'state', entity_id: 'a.b' },
          action: [{ service: 'a.b', data: { x: '{{ oops ' } }],
        },
        'action[0].data.x: template does not parse',
      ],
      [
        { alias: 'x', trigger: { platform: 'state', entity_id: 'a.b' }, action: [{ delay: 'soon' }] },
        'action[0].delay: invalid duration',
      ],
      [{ trigger: { platform: 'state', entity_id: 'a.b' }, action: [] }, 'alias: '],
    ] as const) {
      res = await req('POST', '/v1/automations', body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toContain(message);
    }
    res = await req('POST', '/v1/automations', undefined, '{not json');
    expect(res.status).toBe(400);

    res = await req('GET', '/v1/automations/nope');
    expect([res.status, await res.json()]).toEqual([404, { message: 'automation not found' }]);
    res = await req('GET', `/v1/automations/${created.id}/traces`);
    expect([res.status, await res.json()]).toEqual([200, []]);

    limit = 1;
    res = await req('POST', '/v1/automations', { alias: 'y', trigger: { platform: 'time', at: '07:00' }, action: [] });
    expect([res.status, await res.json()]).toEqual([403, { error: 'plan_limit_reached' }]);

    res = await req('DELETE', `/v1/automations/${created.id}`);
    expect(res.status).toBe(200);
    res = await req('DELETE', `/v1/automations/${created.id}`);
    expect(res.status).toBe(404);
    res = await req('POST', `/v1/automations/webhook/${created.webhook_id}`, { a: 1 });
    expect([res.status, await res.json()]).toEqual([404, { message: 'webhook not found' }]);
  });

  it('trigger: runs the actions now with conditions skipped, shows the run in traces; 404 unknown, 409 disabled', async () => {
    const a = await h.create({
      alias: 'run me',
      trigger: { platform: 'state', entity_id: 'binary_sensor.never' },
      condition: [{ condition: 'state', entity_id: 'binary_sensor.never', state: 'on' }],
      action: [{ service: 'light.turn_on', target: { entity_id: 'light.hall' } }],
    });
    let res = await req('POST', `/v1/automations/${a.id}/trigger`);
    expect([res.status, await res.json()]).toEqual([200, { message: 'automation triggered' }]);
    await until(() => h.services.calls.length === 1);
    expect(h.services.calls[0]).toMatchObject({ domain: 'light', service: 'turn_on' });
    res = await req('GET', `/v1/automations/${a.id}/traces`);
    const traces = (await res.json()) as { state: string; steps: { path: string }[] }[];
    expect(traces.map((t) => [t.state, t.steps.map((x) => x.path)])).toEqual([['finished', ['action/0']]]);

    res = await req('POST', '/v1/automations/nope/trigger');
    expect([res.status, await res.json()]).toEqual([404, { message: 'automation not found' }]);
    await req('PUT', `/v1/automations/${a.id}`, {
      alias: 'run me',
      enabled: false,
      trigger: { platform: 'state', entity_id: 'binary_sensor.never' },
      action: [{ service: 'light.turn_on' }],
    });
    res = await req('POST', `/v1/automations/${a.id}/trigger`);
    expect([res.status, await res.json()]).toEqual([409, { message: 'automation is disabled' }]);
  });

  it('webhook receiver: OpenAPI documents its free-form JSON object body (read by the handler itself)', () => {
    const doc = buildOpenApiDocument(router.routes, { title: 'edge' }) as any;
    const op = doc.paths['/v1/automations/webhook/{webhook_id}'].post;
    expect(op.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/WebhookBody');
    expect(doc.components.schemas.WebhookBody).toMatchObject({ type: 'object' });
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '404', '413', '429']);
  });

  it('webhook receiver: 200 empty, 400, 404, 413, 429 + Retry-After; trigger.json and origin', async () => {
    const a = await h.create({
      alias: 'w',
      mode: 'parallel',
      max: 50,
      trigger: { platform: 'webhook' },
      action: [
        {
          service: 'x.hook',
          data: { v: '{{ trigger.json.v }}', origin: '{{ trigger.origin }}', addr: '{{ trigger.remote_addr }}' },
        },
      ],
    });
    const path = `/v1/automations/webhook/${a.webhook_id}`;
    let res = await fetch(`${base}${path}`, { method: 'POST', body: JSON.stringify({ v: 42 }) });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    await until(() => h.services.calls.length === 1);
    expect(h.services.calls[0].data).toEqual({ v: 42, origin: 'local', addr: '127.0.0.1' });

    for (const raw of ['[1,2]', '"str"', 'nope', '']) {
      res = await req('POST', path, undefined, raw);
      expect([raw, res.status, await res.json()]).toEqual([raw, 400, { message: expect.any(String) }]);
    }
    res = await req('POST', '/v1/automations/webhook/unknown-id', {});
    expect([res.status, await res.json()]).toEqual([404, { message: 'webhook not found' }]);
    res = await req('POST', '/v1/automations/webhook/bad!chars', {});
    expect(res.status).toBe(404);

    // 413: counted on bytes read, even when chunked without a Content-Length
    const big = JSON.stringify({ v: 'x'.repeat(1024 * 1024) });
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    res = await fetch(`${base}${path}`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect([res.status, await res.json()]).toEqual([413, { message: 'body too large' }]);

    // flood: burst 8 per webhook_id (6 used above) → 429 with Retry-After
    let limited: Response | undefined;
    for (let i = 0; i < 10 && !limited; i++) {
      const r = await req('POST', path, { v: i });
      if (r.status === 429) limited = r;
      else await r.text();
    }
    expect(limited).toBeDefined();
    expect(await limited!.json()).toEqual({ error: 'rate_limited' });
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // the same app reached in-process through the tunnel is a cloud call
    const other = await h.create({
      alias: 'lo',
      trigger: { platform: 'webhook', local_only: true },
      action: [{ service: 'x.lo' }],
    });
    res = await app.request(
      `/v1/automations/webhook/${other.webhook_id}`,
      { method: 'POST', body: '{}' },
      { trusted: { via: 'cloud' } },
    );
    expect(res.status).toBe(404);
    res = await req('POST', `/v1/automations/webhook/${other.webhook_id}`, {});
    expect(res.status).toBe(200);
  });
});
