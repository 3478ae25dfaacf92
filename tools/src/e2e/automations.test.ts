import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestCloud } from '@smarthome/cloud/testing/harness';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import { addMember } from '@smarthome/cloud/testing/fixtures';
import { pairEdge, until, type Cleanups } from './support.ts';

/**
 * Automations through the cloud, end to end and in-process: a real cloud, a real edge paired
 * over the tunnel, the cloud's webhook receiver relaying to the edge, call_url reaching a
 * local HTTP server.
 */
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const MiB = 1024 * 1024;

async function system() {
  const cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  const owner = await cloud.user();
  const { id: edgeId, edge } = await pairEdge(cloud, cleanups, owner.token, 'Home');
  await until(
    async () =>
      edge.link?.connected && (await cloud.get('/v1/edges', { token: owner.token })).body[0]?.status === 'online',
  );
  return { cloud, owner, edgeId, edge };
}

/** A plain HTTP server on 127.0.0.1 that records what it receives. */
async function receiver() {
  const received: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** POSTs with no Authorization, as an external integrator would. */
async function hook(
  base: string,
  webhookId: string,
  body: string | Uint8Array | ReadableStream<Uint8Array>,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) {
  const init: RequestInit & { duplex?: 'half' } = { method: 'POST', headers, body };
  if (body instanceof ReadableStream) init.duplex = 'half';
  const res = await fetch(`${base}/v1/automations/webhook/${webhookId}`, init);
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const webhookAutomation = (alias: string, action: unknown[], extra: Record<string, unknown> = {}) => ({
  alias,
  trigger: [{ platform: 'webhook', ...extra }],
  action,
});

describe('automations through the cloud', () => {
  it('an external webhook call to the cloud runs the automation on the edge, whose call_url reaches a local server with the templated body', async () => {
    const { cloud, owner, edgeId } = await system();
    const target = await receiver();
    const created = await cloud.post('/v1/automations', {
      token: owner.token,
      body: webhookAutomation('Forward webhook', [
        {
          call_url: {
            method: 'POST',
            url: `${target.url}/hook`,
            headers: { 'Content-Type': 'application/json', 'X-Source': '{{ trigger.platform }}' },
            body: '{"value": "{{ trigger.json.x }}", "who": "{{ trigger.json.name }}"}',
          },
        },
      ]),
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ alias: 'Forward webhook', edge_id: edgeId, enabled: true, mode: 'single' });
    const webhookId = created.body.webhook_id as string;
    expect(webhookId).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes
    expect(created.body.trigger[0].webhook_id).toBe(webhookId);

    const res = await hook(cloud.url, webhookId, JSON.stringify({ x: 42, name: 'kitchen' }));
    expect(res.status).toBe(200);
    expect(res.text).toBe('');

    const got = await until(async () => target.received[0]);
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/hook');
    expect(got.body).toBe('{"value": "42", "who": "kitchen"}');
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-source']).toBe('webhook');

    // The edge knew the call came through the cloud, not from its LAN.
    const traces = await until(async () => {
      const r = await cloud.get(`/v1/automations/${created.body.id}/traces`, { token: owner.token });
      return r.status === 200 && r.body[0]?.state === 'finished' ? r.body : null;
    });
    expect(traces).toHaveLength(1);
    expect(traces[0].trigger).toMatchObject({
      platform: 'webhook',
      webhook_id: webhookId,
      json: { x: 42, name: 'kitchen' },
      origin: 'cloud',
      method: 'POST',
    });
    expect(traces[0].steps[0]).toMatchObject({
      path: 'action/0',
      result: { method: 'POST', url: `${target.url}/hook`, status: 200 },
    });
    expect(traces[0].error).toBeNull();
  });

  it('creates, reads, lists, updates and deletes through the cloud; the edge stores it; deleting revokes the webhook', async () => {
    const { cloud, owner, edgeId, edge } = await system();
    // Home Assistant's newer spelling, pasted as is.
    const created = await cloud.post('/v1/automations', {
      token: owner.token,
      body: {
        edge_id: edgeId,
        alias: 'Evening',
        description: 'lights at dusk',
        mode: 'queued',
        max: 3,
        triggers: [{ trigger: 'state', entity_id: 'sun.sun', to: 'below_horizon' }],
        actions: [{ action: 'light.turn_on', target: { entity_id: 'light.porch' } }],
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({
      edge_id: edgeId,
      alias: 'Evening',
      description: 'lights at dusk',
      mode: 'queued',
      max: 3,
      enabled: true,
      webhook_id: null,
      trigger: [{ platform: 'state', entity_id: 'sun.sun', to: 'below_horizon' }],
      condition: [],
      action: [{ service: 'light.turn_on', target: { entity_id: 'light.porch' } }],
    });
    expect(edge.features.automations.get(id)?.alias).toBe('Evening');

    const one = await cloud.get(`/v1/automations/${id}`, { token: owner.token });
    expect(one.status).toBe(200);
    expect(one.body).toEqual(created.body);
    // the list (mirror) has it at once
    expect((await cloud.get('/v1/automations', { token: owner.token })).body).toEqual([
      { id, edge_id: edgeId, alias: 'Evening', enabled: true, mode: 'queued', webhook_id: null },
    ]);
    expect((await cloud.get(`/v1/automations/${id}/traces`, { token: owner.token })).body).toEqual([]);

    // bad input: the cloud's schema names the field; what only the edge can check (templates) passes through
    const bad = await cloud.put(`/v1/automations/${id}`, {
      token: owner.token,
      body: { alias: 'x', trigger: [{ platform: 'numeric_state', entity_id: 'sensor.t' }], action: [] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'trigger[0].above: numeric_state needs above and/or below' });
    const badTemplate = await cloud.put(`/v1/automations/${id}`, {
      token: owner.token,
      body: {
        alias: 'x',
        trigger: [{ platform: 'webhook' }],
        action: [{ event: 'e', event_data: { v: '{{ trigger.json.x ' } }],
      },
    });
    expect(badTemplate.status).toBe(400);
    expect(badTemplate.body.message).toMatch(/^action\[0\]\.event_data\.v: /);

    const updated = await cloud.put(`/v1/automations/${id}`, {
      token: owner.token,
      body: { alias: 'Evening hook', trigger: [{ platform: 'webhook' }], action: [{ event: 'evening' }] },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id, edge_id: edgeId, alias: 'Evening hook', mode: 'single' });
    const webhookId = updated.body.webhook_id as string;
    expect(webhookId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const again = await cloud.put(`/v1/automations/${id}`, {
      token: owner.token,
      body: { alias: 'Evening hook 2', trigger: [{ platform: 'webhook' }], action: [{ event: 'evening' }] },
    });
    expect(again.body.webhook_id).toBe(webhookId);
    expect((await hook(cloud.url, webhookId, '{}')).status).toBe(200);

    const del = await cloud.delete(`/v1/automations/${id}`, { token: owner.token });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: 'automation deleted' });
    expect(edge.features.automations.get(id)).toBeUndefined();
    expect((await cloud.get(`/v1/automations/${id}`, { token: owner.token })).body).toEqual({
      message: 'automation not found',
    });
    expect((await cloud.delete(`/v1/automations/${id}`, { token: owner.token })).status).toBe(404);
    expect((await cloud.get('/v1/automations', { token: owner.token })).body).toEqual([]);
    const revoked = await hook(cloud.url, webhookId, '{}');
    expect(revoked.status).toBe(404);
    expect(revoked.body).toEqual({ message: 'webhook not found' });

    // another user: nothing to see, nothing to reach
    const other = await cloud.user();
    const mine = await cloud.post('/v1/automations', {
      token: owner.token,
      body: webhookAutomation('Mine', [{ event: 'x' }]),
    });
    expect((await cloud.get('/v1/automations', { token: other.token })).body).toEqual([]);
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await cloud.request(method, `/v1/automations/${mine.body.id}`, {
        token: other.token,
        body: method === 'PUT' ? webhookAutomation('Theirs', [{ event: 'x' }]) : undefined,
      });
      expect(res.status, method).toBe(404);
    }
    expect(edge.features.automations.get(mine.body.id)?.alias).toBe('Mine');
  });

  it('webhook receiver statuses through the cloud: 200 empty, 400 not an object, 413 beyond 1 MiB (declared or chunked), 429 with Retry-After, 503 when the edge is gone', async () => {
    const { cloud, owner, edge } = await system();
    const created = await cloud.post('/v1/automations', {
      token: owner.token,
      body: webhookAutomation('Sink', [{ event: 'sink' }], { id: 'sink' }),
    });
    const webhookId = created.body.webhook_id as string;

    for (const body of ['[1,2]', '"text"', '42', 'null', '', '{"x":']) {
      const res = await hook(cloud.url, webhookId, body);
      expect(res.status, body).toBe(400);
      expect(Object.keys(res.body)).toEqual(['message']);
    }
    expect((await hook(cloud.url, webhookId, '[]')).body).toEqual({ message: 'body must be a JSON object' });

    // exactly 1 MiB is accepted (and crosses the tunnel); one byte more is not
    const exact = `{"p":"${'a'.repeat(MiB - 8)}"}`;
    expect(Buffer.byteLength(exact)).toBe(MiB);
    const ok = await hook(cloud.url, webhookId, exact);
    expect(ok.status).toBe(200);
    expect(ok.text).toBe('');
    const over = `{"p":"${'a'.repeat(MiB - 7)}"}`;
    const declared = await hook(cloud.url, webhookId, over);
    expect(declared.status).toBe(413);
    expect(declared.body).toEqual({ message: 'body too large' });
    const bytes = new TextEncoder().encode(over);
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.byteLength; i += 64 * 1024) controller.enqueue(bytes.subarray(i, i + 64 * 1024));
        controller.close();
      },
    });
    const streamed = await hook(cloud.url, webhookId, chunked);
    expect(streamed.status).toBe(413);
    expect(streamed.body).toEqual({ message: 'body too large' });

    // flooding one webhook (20 tokens, 10 back per second): a flood larger than what refills while it is
    // served, so a slow, loaded machine still drains the bucket; a few floods at most
    let results: Awaited<ReturnType<typeof hook>>[] = [];
    for (let flood = 0; flood < 3 && !results.some((r) => r.status === 429); flood++)
      results = await Promise.all(Array.from({ length: 100 }, () => hook(cloud.url, webhookId, '{}')));
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(results.filter((r) => r.status !== 429).every((r) => r.status === 200)).toBe(true);
    expect(limited[0].body).toEqual({ error: 'rate_limited' });
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const runs = edge.features.automations.traces(created.body.id);
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.every((r) => r.trigger.origin === 'cloud')).toBe(true);

    await new Promise((r) => setTimeout(r, 1100)); // some tokens back
    await edge.stop();
    await until(async () => (await cloud.get('/v1/edges', { token: owner.token })).body[0].status === 'offline');
    const offline = await hook(cloud.url, webhookId, '{}');
    expect(offline.status).toBe(503);
    expect(offline.body).toEqual({ error: 'edge_offline' });
  });

  it("passes the edge's own 429 through the cloud with its Retry-After", async () => {
    const { cloud, owner, edge, edgeId } = await system();
    const created = await cloud.post('/v1/automations', {
      token: owner.token,
      body: webhookAutomation('Busy', [{ event: 'busy' }]),
    });
    const webhookId = created.body.webhook_id as string;
    // Drain the edge's bucket locally (the cloud's bucket for this webhook stays full), then ask
    // through the tunnel and through the cloud at once; retried in case a token refilled (10/s) meanwhile.
    const viaTunnel = () =>
      cloud.cloud.services.tunnel.request(edgeId, {
        method: 'POST',
        path: `/v1/automations/webhook/${webhookId}`,
        body: {},
        origin: { via: 'cloud', user_id: null, remote_addr: '203.0.113.9' },
      });
    let rpc: Awaited<ReturnType<typeof viaTunnel>> | undefined;
    let relayed: Awaited<ReturnType<typeof hook>> | undefined;
    for (let attempt = 0; attempt < 5 && !(rpc?.status === 429 && relayed?.status === 429); attempt++) {
      const local = await Promise.all(
        Array.from({ length: 25 }, () => hook(`http://127.0.0.1:${edge.ports.http}`, webhookId, '{}')),
      );
      expect(local.filter((r) => r.status === 429).length).toBeGreaterThan(0);
      [rpc, relayed] = await Promise.all([viaTunnel(), hook(cloud.url, webhookId, '{}')]);
    }
    // the tunnel carries the edge's Retry-After (not a default filled in by the cloud)
    expect(rpc).toMatchObject({ status: 429, body: { error: 'rate_limited' }, headers: { 'retry-after': '1' } });
    expect(relayed?.status).toBe(429);
    expect(relayed?.body).toEqual({ error: 'rate_limited' });
    expect(Number(relayed?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('a local_only webhook refuses the cloud-relayed call but accepts a POST on the edge itself', async () => {
    const { cloud, owner, edge } = await system();
    const created = await cloud.post('/v1/automations', {
      token: owner.token,
      body: webhookAutomation('LAN only', [{ event: 'lan' }], { local_only: true }),
    });
    expect(created.status).toBe(201);
    const webhookId = created.body.webhook_id as string;
    const viaCloud = await hook(cloud.url, webhookId, '{"x":1}');
    expect(viaCloud.status).toBe(404);
    expect(viaCloud.body).toEqual({ message: 'webhook not found' });
    expect(edge.features.automations.traces(created.body.id)).toEqual([]);

    const local = await hook(`http://127.0.0.1:${edge.ports.http}`, webhookId, '{"x":2}');
    expect(local.status).toBe(200);
    expect(local.text).toBe('');
    const traces = await until(async () => {
      const r = await cloud.get(`/v1/automations/${created.body.id}/traces`, { token: owner.token });
      return r.body.length ? r.body : null;
    });
    expect(traces[0].trigger).toMatchObject({ platform: 'webhook', json: { x: 2 }, origin: 'local' });
  });

  it('shows an organization member the automation without its call_url secrets; the admin sees them', async () => {
    const cloud = await startTestCloud();
    cleanups.push(() => cloud.stop());
    const admin = await cloud.user();
    const member = await cloud.user();
    const org = (await cloud.post('/v1/organizations', { token: admin.token, body: { name: 'Home Org' } })).body
      .id as string;
    await addMember(cloud, org, member.id, 'member');
    const created = await cloud.post('/v1/edges', { token: admin.token, org, body: { name: 'Org home' } });
    expect(created.status).toBe(201);
    const data = tempDir();
    cleanups.push(data.cleanup);
    const edge = await startEdge(data.dir, { cloudUrl: cloud.url, token: created.body.token });
    cleanups.push(() => edge.stop());
    await until(async () => (await cloud.get('/v1/edges', { token: admin.token, org })).body[0]?.status === 'online');
    const definition = webhookAutomation('Notify', [
      {
        call_url: {
          url: 'https://bot:pw123@hooks.example.com/n',
          headers: { Authorization: 'Bearer tok-123' },
          body: { x: 1 },
        },
      },
    ]);
    const made = await cloud.post('/v1/automations', { token: admin.token, org, body: definition });
    expect(made.status).toBe(201);
    const id = made.body.id as string;

    const seenByAdmin = await cloud.get(`/v1/automations/${id}`, { token: admin.token, org });
    expect(seenByAdmin.body.action[0].call_url).toMatchObject({
      url: 'https://bot:pw123@hooks.example.com/n',
      headers: { Authorization: 'Bearer tok-123' },
    });
    const seenByMember = await cloud.get(`/v1/automations/${id}`, { token: member.token, org });
    expect(seenByMember.status).toBe(200);
    expect(seenByMember.body.action[0].call_url).toEqual({
      method: 'POST',
      url: 'https://bot:**redacted**@hooks.example.com/n',
      headers: { Authorization: '**redacted**' },
      body: { x: 1 },
    });
    const bootstrap = await cloud.get('/v1/automation/cloud-bootstrap', { token: member.token, org });
    expect(JSON.stringify(bootstrap.body)).not.toMatch(/tok-123|pw123/);
    expect(
      JSON.stringify((await cloud.get('/v1/automation/cloud-bootstrap', { token: admin.token, org })).body),
    ).toContain('tok-123');
    expect((await cloud.put(`/v1/automations/${id}`, { token: member.token, org, body: definition })).status).toBe(403);

    // secrets in query strings and bodies, and values the owner marked secret, in the definition and in traces
    const target = await receiver();
    const marked = webhookAutomation('Unlock', [
      {
        call_url: { method: 'POST', url: `${target.url}/hook?chat=7&api_key=qk-555`, body: 'user=bob&password=fp-666' },
      },
      {
        call_url: {
          method: 'POST',
          url: `${target.url}/json`,
          body: { note: 'hi', nested: { client_secret: 'cs-777' } },
        },
      },
      { call_url: { method: 'GET', url: `${target.url}/locks/door-8841` } },
      {
        service: 'lock.unlock',
        target: { entity_id: 'lock.front' },
        data: { code: 'door-8841' },
        continue_on_error: true,
      },
    ]);
    const made2 = await cloud.post('/v1/automations', {
      token: admin.token,
      org,
      body: { ...marked, secrets: ['door-8841'] },
    });
    expect(made2.status).toBe(201);
    expect(made2.body.secrets).toEqual(['door-8841']);
    const id2 = made2.body.id as string;
    expect((await cloud.get(`/v1/automations/${id2}`, { token: admin.token, org })).body).toMatchObject({
      secrets: ['door-8841'],
      action: marked.action,
    });
    const memberView = (await cloud.get(`/v1/automations/${id2}`, { token: member.token, org })).body;
    expect(memberView.secrets).toEqual(['**redacted**']);
    expect(memberView.action[0].call_url).toMatchObject({
      url: `${target.url}/hook?chat=7&api_key=**redacted**`,
      body: 'user=bob&password=**redacted**',
    });
    expect(memberView.action[1].call_url.body).toEqual({ note: 'hi', nested: { client_secret: '**redacted**' } });
    expect(memberView.action[2].call_url.url).toBe(`${target.url}/locks/**redacted**`);
    expect(memberView.action[3].data).toEqual({ code: '**redacted**' });
    const memberBootstrap = JSON.stringify(
      (await cloud.get('/v1/automation/cloud-bootstrap', { token: member.token, org })).body,
    );
    expect(memberBootstrap).not.toMatch(/qk-555|fp-666|cs-777|door-8841/);
    expect(memberBootstrap).toContain('chat=7');

    expect((await hook(cloud.url, made2.body.webhook_id, '{}')).status).toBe(200);
    await until(() => target.received.length === 3);
    const adminTraces = await until(async () => {
      const r = await cloud.get(`/v1/automations/${id2}/traces`, { token: admin.token, org });
      return r.body.length && r.body[0].state !== 'running' ? r.body : null;
    });
    expect(JSON.stringify(adminTraces)).toContain('qk-555');
    expect(JSON.stringify(adminTraces)).toContain('door-8841');
    const memberTraces = await cloud.get(`/v1/automations/${id2}/traces`, { token: member.token, org });
    expect(memberTraces.status).toBe(200);
    expect(memberTraces.body[0].steps[0].result.url).toBe(`${target.url}/hook?chat=7&api_key=**redacted**`);
    expect(JSON.stringify(memberTraces.body)).not.toMatch(/qk-555|door-8841/);
  });

  it("cloud-bootstrap answers the enabled full definitions of the scope's edges", async () => {
    const { cloud, owner, edgeId } = await system();
    const on = await cloud.post('/v1/automations', {
      token: owner.token,
      body: webhookAutomation('On', [{ event: 'on' }]),
    });
    const off = await cloud.post('/v1/automations', {
      token: owner.token,
      body: { ...webhookAutomation('Off', [{ event: 'off' }]), enabled: false },
    });
    expect([on.status, off.status]).toEqual([201, 201]);
    const res = await cloud.get('/v1/automation/cloud-bootstrap', { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ organization_id: null, automations: [on.body] });
    expect(res.body.automations[0]).toMatchObject({
      edge_id: edgeId,
      trigger: [{ platform: 'webhook', webhook_id: on.body.webhook_id }],
      action: [{ event: 'on' }],
    });
    // the disabled one exists (list) but does not run: its webhook is unknown to callers
    expect(
      (await cloud.get('/v1/automations', { token: owner.token })).body
        .map((a: { alias: string; enabled: boolean }) => `${a.alias}:${a.enabled}`)
        .sort(),
    ).toEqual(['Off:false', 'On:true']);
    expect((await hook(cloud.url, off.body.webhook_id, '{}')).status).toBe(404);
    expect((await cloud.get('/v1/automation/cloud-bootstrap')).status).toBe(401);
  });

  it('the free plan stops at 5 automations; the list still answers (last known) while the edge is offline', async () => {
    const { cloud, owner, edgeId, edge } = await system();
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const res = await cloud.post('/v1/automations', {
        token: owner.token,
        body: webhookAutomation(`A${i}`, [{ event: 'e' }]),
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const sixth = await cloud.post('/v1/automations', {
      token: owner.token,
      body: webhookAutomation('A6', [{ event: 'e' }]),
    });
    expect(sixth.status).toBe(403);
    expect(sixth.body).toEqual({ error: 'plan_limit_reached' });
    expect(edge.features.automations.list()).toHaveLength(5);
    expect((await cloud.get('/v1/billing/usage', { token: owner.token })).body.usage.automations).toEqual({
      current: 5,
      limit: 5,
    });
    expect((await cloud.delete(`/v1/automations/${ids[4]}`, { token: owner.token })).status).toBe(200);
    expect(
      (await cloud.post('/v1/automations', { token: owner.token, body: webhookAutomation('A6', [{ event: 'e' }]) }))
        .status,
    ).toBe(201);

    const before = (await cloud.get('/v1/automations', { token: owner.token })).body;
    expect(before).toHaveLength(5);
    await edge.stop();
    await until(async () => (await cloud.get('/v1/edges', { token: owner.token })).body[0].status === 'offline');
    const list = await cloud.get('/v1/automations', { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual(before);
    expect(list.body.every((a: { edge_id: number }) => a.edge_id === edgeId)).toBe(true);
    const one = await cloud.get(`/v1/automations/${ids[0]}`, { token: owner.token });
    expect(one.status).toBe(503);
    expect(one.body).toEqual({ error: 'edge_offline' });
    expect(
      (await cloud.post('/v1/automations', { token: owner.token, body: webhookAutomation('A7', [{ event: 'e' }]) }))
        .status,
    ).toBe(403);
    expect((await cloud.get('/v1/automation/cloud-bootstrap', { token: owner.token })).body).toEqual({
      organization_id: null,
      automations: [],
    });
  });
});
