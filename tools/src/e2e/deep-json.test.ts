import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import type { Edge } from '@smarthome/edge/edge';
import { until } from './support.ts';

/**
 * Issue #13 item 5: JSON nested thousands of levels deep overflowed the stack somewhere behind
 * the body parser (JSON.stringify in the tunnel, zod on recursive automation conditions, the
 * dashboard store) and answered 500/502. Depth is bounded where JSON enters, on both servers:
 * 400 {message} for HTTP bodies, an error result on the app WebSocket.
 */
const DEMO_LAMP = 'light.demo_living_room_lamp';
const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
const deepConditions = (levels: number): unknown => {
  let c: unknown = { condition: 'template', value_template: '{{ true }}' };
  for (let i = 0; i < levels; i++) c = { condition: 'and', conditions: [c] };
  return c;
};

let cloud: TestCloud;
let edge: Edge;
let token: string;
let edgeId: number;
let edgeToken: string;
let edgeUrl: string;
let webhookId: string;
const data = tempDir();

beforeAll(async () => {
  cloud = await startTestCloud();
  token = (await cloud.user()).token;
  const created = await cloud.post('/v1/edges', { token, body: { name: 'Home' } });
  edgeId = created.body.edge.id;
  edge = await startEdge(data.dir, { cloudUrl: cloud.url, token: created.body.token });
  edgeUrl = `http://127.0.0.1:${edge.ports.http}`;
  edgeToken = edge.tokens.create('test').token;
  await until(
    async () => edge.link?.connected && (await cloud.get(`/v1/edges/${edgeId}`, { token })).body?.status === 'online',
  );
  const flow = await cloud.post('/v1/config_flow', { token, body: { handler: 'demo', edge_id: edgeId } });
  await cloud.post(`/v1/config_flow/${flow.body.flowId}/advance`, { token, body: { name: 'Demo' } });
  await until(async () => (await cloud.get(`/v1/entities/states/${DEMO_LAMP}`, { token })).status === 200);
  const hook = await cloud.post('/v1/automations', {
    token,
    body: { edge_id: edgeId, alias: 'hook', trigger: [{ platform: 'webhook' }], action: [{ delay: '00:00:00' }] },
  });
  webhookId = hook.body.webhook_id;
}, 30_000);
afterAll(async () => {
  await edge?.stop();
  await cloud?.stop();
  data.cleanup();
});

async function post(base: string, path: string, raw: string, auth?: string, method = 'POST') {
  const res = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
    body: raw,
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as unknown };
}

describe('JSON nested 5,000 levels deep', () => {
  it('answers 400 {message} on the cloud: service call, config flow advance, webhook receiver, dashboards, automations', async () => {
    const flow = await cloud.post('/v1/config_flow', { token, body: { handler: 'demo', edge_id: edgeId } });
    const cases: Array<[string, string, string | undefined, string]> = [
      ['POST', `/v1/services/light/turn_on`, token, `{"entity_id":"${DEMO_LAMP}","data":${deep(5000)}}`],
      ['POST', `/v1/config_flow/${flow.body.flowId}/advance`, token, `{"name":${deep(5000)}}`],
      ['POST', `/v1/automations/webhook/${webhookId}`, undefined, `{"x":${deep(5000)}}`],
      [
        'PUT',
        '/v1/ui-dashboard',
        token,
        JSON.stringify({ name: 'deep', config: { views: [{ title: 'v', cards: [JSON.parse(deep(3000))] }] } }),
      ],
      [
        'POST',
        '/v1/automations',
        token,
        JSON.stringify({
          edge_id: edgeId,
          alias: 'deep',
          trigger: [{ platform: 'webhook' }],
          condition: [deepConditions(1000)],
          action: [],
        }),
      ],
      ['POST', '/v1/auth/register', undefined, deep(5000)],
    ];
    for (const [method, path, auth, raw] of cases) {
      const res = await post(cloud.url, path, raw, auth, method);
      expect([path, res.status, res.body]).toEqual([path, 400, { message: expect.stringContaining('nested') }]);
    }
  });

  it('answers 400 {error} on the store receiver (its documented 400 shape)', async () => {
    const res = await post(cloud.url, '/v1/webhooks/store-iap', `{"signedPayload":${deep(5000)}}`);
    expect([res.status, res.body]).toEqual([400, { error: expect.stringContaining('nested') }]);
  });

  it('answers 400 {message} on the edge: service call, config flow advance, webhook receiver, automations', async () => {
    const flow = await post(edgeUrl, '/v1/config_flow', '{"handler":"demo"}', edgeToken);
    const cases: Array<[string, string | undefined, string]> = [
      [`/v1/services/light/turn_on`, edgeToken, `{"entity_id":"${DEMO_LAMP}","data":${deep(5000)}}`],
      [`/v1/config_flow/${(flow.body as { flowId: string }).flowId}/advance`, edgeToken, `{"name":${deep(5000)}}`],
      [`/v1/automations/webhook/${webhookId}`, undefined, `{"x":${deep(5000)}}`],
      [
        '/v1/automations',
        edgeToken,
        JSON.stringify({
          alias: 'deep',
          trigger: [{ platform: 'webhook' }],
          condition: [deepConditions(1000)],
          action: [],
        }),
      ],
    ];
    for (const [path, auth, raw] of cases) {
      const res = await post(edgeUrl, path, raw, auth);
      expect([path, res.status, res.body]).toEqual([path, 400, { message: expect.stringContaining('nested') }]);
    }
  });

  it('gets an error result on the app WebSocket, which keeps working', async () => {
    const ws = new WebSocket(`${cloud.url.replace('http', 'ws')}/v1/websocket`);
    const inbox: any[] = [];
    ws.on('message', (d) => inbox.push(JSON.parse(d.toString())));
    try {
      await until(async () => inbox.find((m) => m.type === 'auth_required'));
      ws.send(JSON.stringify({ type: 'auth', access_token: token }));
      await until(async () => inbox.find((m) => m.type === 'auth_ok'));
      ws.send(
        `{"id":1,"type":"call_service","domain":"light","service":"turn_on","target":{"entity_id":"${DEMO_LAMP}"},"service_data":{"x":${deep(5000)}}}`,
      );
      const result = await until(async () => inbox.find((m) => m.type === 'result' && m.success === false));
      expect(result.error).toEqual({ code: 'invalid_format', message: expect.stringContaining('nested') });
      ws.send(JSON.stringify({ id: 2, type: 'ping' }));
      expect(await until(async () => inbox.find((m) => m.id === 2))).toEqual({ id: 2, type: 'pong' });
    } finally {
      ws.close();
    }
  });

  it('leaves ordinary nesting alone (a dashboard 20 levels deep is stored)', async () => {
    const res = await cloud.put('/v1/ui-dashboard', {
      token,
      body: { name: 'fine', config: { views: [{ title: 'v', cards: [JSON.parse(deep(20))] }] } },
    });
    expect(res.status).toBe(200);
  });
});
