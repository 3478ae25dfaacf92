import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type ApiResponse, type TestCloud } from '@smarthome/cloud/testing/harness';
import type { Edge } from '@smarthome/edge/edge';
import { mqttLamp, openAppSocket, pairEdge, until, type Cleanups } from './support.ts';

/**
 * Tenant isolation on the tunnel-backed routes, end to end and in-process: one real cloud and
 * three real edges paired over the tunnel:
 * - tenant A's personal edge (a "Desk lamp" → light.desk_lamp_desk, the demo integration, an
 *   automation with a webhook, a signed media URL);
 * - tenant B's personal edge (also a "Desk lamp" → the same entity_id and device id 1);
 * - organization O's edge (admin A, plain member M; a "Hall lamp" → light.hall_lamp_hall, an
 *   automation, a config flow A started and a config entry).
 * B (outside O) walks every device, config-flow, media and automation route against A's and
 * O's ids, with and without O's X-Organization-Id, and must get 403/404 (never A's data, never
 * 500); M may view and control O's edge but not edit it, and sees nothing of A's personal edge.
 */
const DESK = 'light.desk_lamp_desk';
const HALL = 'light.hall_lamp_hall';
const DEMO_LAMP = 'light.demo_living_room_lamp';
const SECRET = 'a-secret-marker';

const cleanups: Cleanups = [];

/** A raw GET whose path reaches the cloud byte for byte (fetch would resolve dot segments first). */
function rawGet(base: string, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(base);
    const req = http.request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** An app WebSocket, authenticated and subscribed to state_changed (subscription id 1). */
async function appSocket(cloud: TestCloud, token: string) {
  const socket = await openAppSocket(cloud.url, token, cleanups);
  expect((await socket.ask({ type: 'subscribe_events', event_type: 'state_changed' })).success).toBe(true);
  const events = () =>
    socket.inbox
      .filter((m) => m.type === 'event')
      .map((m) => m.event.data as { entity_id: string; new_state: { state: string; edge_id?: number } | null });
  return { ask: socket.ask, events };
}

interface World {
  cloud: TestCloud;
  a: Awaited<ReturnType<TestCloud['user']>>;
  b: Awaited<ReturnType<TestCloud['user']>>;
  m: Awaited<ReturnType<TestCloud['user']>>;
  orgId: string;
  edgeA: number;
  edgeB: number;
  edgeO: number;
  a1: Edge;
  b1: Edge;
  o1: Edge;
  lampA: Awaited<ReturnType<typeof mqttLamp>>;
  lampB: Awaited<ReturnType<typeof mqttLamp>>;
  lampO: Awaited<ReturnType<typeof mqttLamp>>;
  entryA: number;
  autoA: { id: string; webhook_id: string };
  autoO: { id: string; webhook_id: string };
  flowO: string;
  mediaA: { token: string; file: string };
  mediaB: { token: string; file: string };
}
let w: World;

async function signedMedia(cloud: TestCloud, token: string, edgeId: number): Promise<{ token: string; file: string }> {
  const res = await cloud.post('/v1/media-source/resolve', {
    token,
    body: { uri: 'media-source://demo/tones/a4-440hz.wav', edge_id: edgeId },
  });
  expect(res.status).toBe(200);
  const m = new RegExp(`/v1/edges/${edgeId}/media/([^/]+)/([^/]+)$`).exec(new URL(res.body.url).pathname);
  expect(m).not.toBeNull();
  return { token: m![1], file: m![2] };
}

beforeAll(async () => {
  const cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  const [a, b, m] = [await cloud.user(), await cloud.user(), await cloud.user()];
  const org = await cloud.post('/v1/organizations', { token: a.token, body: { name: 'Family O' } });
  expect(org.status).toBe(201);
  const orgId = org.body.id as string;
  const inv = await cloud.post(`/v1/organizations/${orgId}/invitations`, {
    token: a.token,
    body: { email: m.email, role: 'member' },
  });
  expect((await cloud.post(`/v1/invitations/${inv.body.token}/accept`, { token: m.token })).status).toBe(200);

  const [pa, pb, po] = await Promise.all([
    pairEdge(cloud, cleanups, a.token, 'A home'),
    pairEdge(cloud, cleanups, b.token, 'B home'),
    pairEdge(cloud, cleanups, a.token, 'Org home', orgId),
  ]);
  await until(
    async () =>
      pa.edge.link?.connected &&
      pb.edge.link?.connected &&
      po.edge.link?.connected &&
      (await cloud.get('/v1/edges', { token: a.token })).body[0]?.status === 'online' &&
      (await cloud.get('/v1/edges', { token: b.token })).body[0]?.status === 'online' &&
      (await cloud.get('/v1/edges', { token: a.token, org: orgId })).body[0]?.status === 'online',
  );

  // Same device and entity names on A's and B's edges: same entity_id, same device id 1.
  const [lampA, lampB, lampO] = await Promise.all([
    mqttLamp(pa.edge, cleanups, 'desk', 'Desk lamp', { manufacturer: 'Acme' }),
    mqttLamp(pb.edge, cleanups, 'desk', 'Desk lamp', { manufacturer: 'Bcme' }),
    mqttLamp(po.edge, cleanups, 'hall', 'Hall lamp', { manufacturer: 'Ocme' }),
  ]);
  await until(
    async () =>
      (await cloud.get(`/v1/entities/states/${DESK}`, { token: a.token })).body?.state === 'off' &&
      (await cloud.get(`/v1/entities/states/${DESK}`, { token: b.token })).body?.state === 'off' &&
      (await cloud.get(`/v1/entities/states/${HALL}`, { token: m.token })).body?.state === 'off',
  );

  // A: the demo integration on the personal edge (a config entry and more devices).
  const start = await cloud.post('/v1/config_flow', { token: a.token, body: { handler: 'demo', edge_id: pa.id } });
  expect(start.body).toMatchObject({ type: 'form', handler: 'demo', stepId: 'user' });
  const done = await cloud.post(`/v1/config_flow/${start.body.flowId}/advance`, {
    token: a.token,
    body: { name: 'A demo' },
  });
  expect(done.body).toMatchObject({ type: 'create_entry', stepId: 'done' });
  const entryA = done.body.result.config_entry_id as number;
  await until(async () => (await cloud.get(`/v1/entities/states/${DEMO_LAMP}`, { token: a.token })).status === 200);

  // A's automations: personal and organization, both with webhooks and a secret header.
  const automation = (alias: string, edgeId: number) => ({
    edge_id: edgeId,
    alias,
    trigger: [{ platform: 'webhook' }],
    action: [
      { call_url: { method: 'POST', url: 'http://127.0.0.1:9/hook', headers: { Authorization: `Bearer ${SECRET}` } } },
    ],
  });
  const autoA = await cloud.post('/v1/automations', { token: a.token, body: automation('A secret automation', pa.id) });
  const autoO = await cloud.post('/v1/automations', {
    token: a.token,
    org: orgId,
    body: automation('Org secret automation', po.id),
  });
  expect([autoA.status, autoO.status]).toEqual([201, 201]);

  // A starts a flow on the organization's edge and leaves it open.
  const flowO = await cloud.post('/v1/config_flow', {
    token: a.token,
    org: orgId,
    body: { handler: 'demo', edge_id: po.id },
  });
  expect(flowO.body).toMatchObject({ type: 'form', flowId: expect.stringMatching(/^[0-9a-f]{32}$/) });

  w = {
    cloud,
    a,
    b,
    m,
    orgId,
    edgeA: pa.id,
    edgeB: pb.id,
    edgeO: po.id,
    a1: pa.edge,
    b1: pb.edge,
    o1: po.edge,
    lampA,
    lampB,
    lampO,
    entryA,
    autoA: autoA.body,
    autoO: autoO.body,
    flowO: flowO.body.flowId,
    mediaA: await signedMedia(cloud, a.token, pa.id),
    mediaB: await signedMedia(cloud, b.token, pb.id),
  };
}, 30_000);

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Strings only A's (or O's) data contains. */
function markers(): string[] {
  return [
    'A home',
    'Org home',
    'A secret automation',
    'Org secret automation',
    SECRET,
    w.autoA.id,
    w.autoO.id,
    w.autoA.webhook_id,
    w.autoO.webhook_id,
    HALL,
    'light.demo_',
    'Acme',
    'Ocme',
    'Hall lamp',
    'Smarthome Demo',
    'A demo',
    w.flowO,
    w.mediaA.token,
  ];
}
function expectNoLeak(res: ApiResponse, what: string): void {
  for (const marker of markers()) expect(res.text.includes(marker), `${what} leaks ${marker}`).toBe(false);
}

describe('tenant isolation on the tunnel-backed routes', () => {
  it("B's lists, WebSocket states and usage hold only B's rows; with O's X-Organization-Id every scoped route is 403", async () => {
    const { cloud, b, edgeB, orgId } = w;
    const lists: Record<string, (r: ApiResponse) => void> = {
      '/v1/devices': (r) => expect(r.body.map((d: any) => [d.id, d.manufacturer])).toEqual([[1, 'Bcme']]),
      '/v1/entities/states': (r) => expect(r.body.map((s: any) => [s.entity_id, s.edge_id])).toEqual([[DESK, edgeB]]),
      '/v1/config_entries': (r) => expect(r.body.every((e: any) => e.edge_id === edgeB)).toBe(true),
      '/v1/automations': (r) => expect(r.body).toEqual([]),
      '/v1/voice-assistant/endpoints': (r) => expect(r.body.map((e: any) => e.entity_id)).toEqual([DESK]),
      '/v2/smarthomes': (r) =>
        expect(r.body.items.map((i: any) => [i.id, i.devices, i.entities])).toEqual([[edgeB, 1, 1]]),
      '/v1/billing/usage': (r) =>
        expect([r.body.usage.devices.current, r.body.usage.automations.current]).toEqual([1, 0]),
      '/v1/edges': (r) => expect(r.body.map((e: any) => e.id)).toEqual([edgeB]),
      '/v1/automation/cloud-bootstrap': (r) => expect(r.body).toEqual({ organization_id: null, automations: [] }),
      '/v1/config_flow/handlers': (r) =>
        expect(r.body).toEqual(expect.arrayContaining([{ domain: 'demo', name: 'Demo' }])),
      '/v1/media-source/browse': (r) => expect(r.body.media_content_id).toBe('media-source://'),
      [`/v1/devices?edge_id=${w.edgeA}`]: (r) => expect(r.body).toEqual([]),
      [`/v1/config_entries?edge_id=${w.edgeA}`]: (r) => expect(r.body).toEqual([]),
      [`/v1/automations?edge_id=${w.edgeO}`]: (r) => expect(r.body).toEqual([]),
      '/v1/devices?edge_id=99999999999999999999': (r) => expect(r.body).toEqual([]),
    };
    for (const [path, check] of Object.entries(lists)) {
      const res = await cloud.get(path, { token: b.token });
      expect(res.status, path).toBe(200);
      check(res);
      expectNoLeak(res, path);
    }

    // O's header: B is not a member.
    const scoped: [string, string, unknown?][] = [
      ['GET', '/v1/devices'],
      ['GET', '/v1/entities/states'],
      ['GET', '/v1/config_entries'],
      ['GET', '/v1/voice-assistant/endpoints'],
      ['GET', '/v1/config_flow/handlers'],
      ['POST', '/v1/config_flow', { handler: 'demo', edge_id: w.edgeO }],
      ['DELETE', '/v1/config_entries/1'],
      [`DELETE`, `/v1/config_entries/1?edge_id=${w.edgeO}`],
      ['GET', '/v1/media-source/browse'],
      ['POST', '/v1/media-source/resolve', { uri: 'media-source://demo/tones/a4-440hz.wav', edge_id: w.edgeO }],
      ['GET', '/v1/automations'],
      [
        'POST',
        '/v1/automations',
        { edge_id: w.edgeO, alias: 'x', trigger: [{ platform: 'webhook' }], action: [{ event: 'x' }] },
      ],
      ['GET', `/v1/automations/${w.autoO.id}`],
      [
        'PUT',
        `/v1/automations/${w.autoO.id}`,
        { alias: 'x', trigger: [{ platform: 'webhook' }], action: [{ event: 'x' }] },
      ],
      ['DELETE', `/v1/automations/${w.autoO.id}`],
      ['GET', `/v1/automations/${w.autoO.id}/traces`],
      ['GET', '/v1/automation/cloud-bootstrap'],
      ['GET', '/v2/smarthomes'],
      ['GET', '/v1/billing/usage'],
      ['GET', '/v1/edges'],
    ];
    for (const [method, path, body] of scoped) {
      const res = await cloud.request(method, path, { token: b.token, org: orgId, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden' });
    }

    const ws = await appSocket(cloud, b.token);
    const states = await ws.ask({ type: 'get_states' });
    expect(states.result.map((s: any) => [s.entity_id, s.edge_id])).toEqual([[DESK, edgeB]]);
  });

  it("B reaches none of A's or O's ids: devices, entities, services, MQTT credentials, voice, flows, config entries, media, automations", async () => {
    const { cloud, b, a, edgeA, edgeO } = w;
    const resolve = { uri: 'media-source://demo/tones/a4-440hz.wav' };
    // B has no entry with A's id, so "without ?edge_id=" really asks for A's.
    expect((await cloud.get('/v1/config_entries', { token: b.token })).body.map((e: any) => e.id)).not.toContain(
      w.entryA,
    );
    const demoDevice = (await cloud.get(`/v1/devices?edge_id=${edgeA}`, { token: a.token })).body.find(
      (d: any) => d.manufacturer === 'Smarthome Demo',
    );
    expect(demoDevice.id).toBeGreaterThan(1);
    const probes: [string, string, number, unknown?][] = [
      ['GET', `/v1/devices/1?edge_id=${edgeA}`, 404],
      ['GET', `/v1/devices/1?edge_id=${edgeO}`, 404],
      ['GET', `/v1/devices/${demoDevice.id}`, 404],
      ['GET', '/v1/devices/99999999999999999999', 404],
      ['GET', `/v1/entities/states/${HALL}`, 404],
      ['GET', `/v1/entities/states/${DEMO_LAMP}`, 404],
      ['POST', '/v1/services/light/turn_on', 404, { entity_id: HALL }],
      ['POST', '/v1/services/light/turn_on', 404, { entity_id: [DESK, DEMO_LAMP] }],
      ['POST', `/v1/edges/${edgeA}/mqtt-credentials`, 404],
      ['POST', `/v1/edges/${edgeO}/mqtt-credentials`, 404],
      ['POST', '/v1/edges/99999999999999999999/mqtt-credentials', 404],
      ['PUT', `/v1/voice-assistant/endpoints/${HALL}`, 404, { exposed: false }],
      ['PUT', `/v1/voice-assistant/endpoints/${DEMO_LAMP}`, 404, { exposed: false }],
      ['GET', `/v1/config_flow/handlers?edge_id=${edgeA}`, 404],
      ['POST', '/v1/config_flow', 404, { handler: 'demo', edge_id: edgeA }],
      ['POST', '/v1/config_flow', 404, { handler: 'demo', edge_id: edgeO }],
      ['POST', `/v1/config_flow/${w.flowO}/advance`, 404, {}],
      ['DELETE', `/v1/config_flow/${w.flowO}`, 404],
      ['DELETE', `/v1/config_entries/${w.entryA}`, 404],
      ['DELETE', `/v1/config_entries/${w.entryA}?edge_id=${edgeA}`, 404],
      ['DELETE', `/v1/config_entries/1?edge_id=${edgeO}`, 404],
      ['DELETE', '/v1/config_entries/99999999999999999999', 404],
      ['GET', `/v1/media-source/browse?edge_id=${edgeA}`, 404],
      ['GET', `/v1/media-source/browse?edge_id=${edgeO}&uri=${encodeURIComponent('media-source://demo')}`, 404],
      ['POST', '/v1/media-source/resolve', 404, { ...resolve, edge_id: edgeA }],
      ['POST', '/v1/media-source/resolve', 404, { ...resolve, edge_id: edgeO }],
      // B's signature is not A's edge's, and the other way round
      ['GET', `/v1/edges/${edgeA}/media/${w.mediaB.token}/${w.mediaB.file}`, 403],
      ['GET', `/v1/edges/${w.edgeB}/media/${w.mediaA.token}/${w.mediaA.file}`, 403],
      ['GET', `/v1/automations/${w.autoA.id}`, 404],
      ['GET', `/v1/automations/${w.autoO.id}`, 404],
      [
        'PUT',
        `/v1/automations/${w.autoA.id}`,
        404,
        { alias: 'mine now', trigger: [{ platform: 'webhook' }], action: [{ event: 'x' }] },
      ],
      ['DELETE', `/v1/automations/${w.autoA.id}`, 404],
      ['DELETE', `/v1/automations/${w.autoO.id}`, 404],
      ['GET', `/v1/automations/${w.autoA.id}/traces`, 404],
      [
        'POST',
        '/v1/automations',
        404,
        { edge_id: edgeA, alias: 'x', trigger: [{ platform: 'webhook' }], action: [{ event: 'x' }] },
      ],
      [
        'POST',
        '/v1/automations',
        404,
        { edge_id: edgeO, alias: 'x', trigger: [{ platform: 'webhook' }], action: [{ event: 'x' }] },
      ],
    ];
    for (const [method, path, status, body] of probes) {
      const res = await cloud.request(method, path, { token: b.token, body });
      expect(res.status, `${method} ${path}`).toBe(status);
      expectNoLeak(res, `${method} ${path}`);
    }
    // nothing of A's or O's changed: their lamps got no command, the flow and automations are still there
    expect([...w.lampA.commands, ...w.lampO.commands]).toEqual([]);
    expect(w.a1.features.automations.get(w.autoA.id)?.alias).toBe('A secret automation');
    expect(w.o1.features.automations.get(w.autoO.id)?.alias).toBe('Org secret automation');
    expect(
      (await cloud.get(`/v1/config_entries?edge_id=${edgeA}`, { token: a.token })).body.map((e: any) => e.id),
    ).toContain(w.entryA);

    // WebSocket: B's call_service on O's entity is not found
    const ws = await appSocket(cloud, b.token);
    const call = await ws.ask({
      type: 'call_service',
      domain: 'light',
      service: 'turn_on',
      target: { entity_id: HALL },
    });
    expect(call).toMatchObject({ success: false, error: { code: 'not_found' } });
    expect(w.lampO.commands).toEqual([]);
  });

  it('device and entity ids collide across edges: each caller gets (and controls) its own', async () => {
    const { cloud, a, b, m, edgeA, edgeB, edgeO } = w;
    const mine = async (token: string, path: string) => (await cloud.get(path, { token })).body;
    expect((await mine(b.token, '/v1/devices/1')).device).toMatchObject({
      id: 1,
      name: 'Desk lamp',
      manufacturer: 'Bcme',
      user_id: b.id,
    });
    expect((await mine(b.token, '/v1/devices/1')).entities.map((e: any) => e.entity_id)).toEqual([DESK]);
    expect((await mine(a.token, `/v1/devices/1?edge_id=${edgeA}`)).device).toMatchObject({
      id: 1,
      manufacturer: 'Acme',
      user_id: a.id,
    });
    expect((await mine(a.token, `/v1/devices/1?edge_id=${edgeO}`)).device).toMatchObject({
      id: 1,
      manufacturer: 'Ocme',
      user_id: a.id,
    });
    expect((await mine(m.token, '/v1/devices/1')).device).toMatchObject({
      id: 1,
      name: 'Hall lamp',
      manufacturer: 'Ocme',
      user_id: a.id,
    }); // A created O
    expect((await mine(b.token, `/v1/entities/states/${DESK}`)).edge_id).toBe(edgeB);
    expect((await mine(a.token, `/v1/entities/states/${DESK}`)).edge_id).toBe(edgeA);

    const call = await cloud.post('/v1/services/light/turn_on', { token: b.token, body: { entity_id: DESK } });
    expect(call.status).toBe(200);
    expect(call.body.changed_states.every((s: any) => s.edge_id === edgeB)).toBe(true);
    await until(() => w.lampB.commands.includes('desk/set ON'));
    expect(w.lampA.commands).toEqual([]);
  });

  it("an org member views and controls the organization's edge but cannot edit it, and reaches nothing on the admin's personal edge", async () => {
    const { cloud, a, m, orgId, edgeA, edgeO } = w;
    for (const org of [undefined, orgId]) {
      const states = await cloud.get('/v1/entities/states', { token: m.token, org });
      expect(states.body.map((s: any) => [s.entity_id, s.edge_id])).toEqual([[HALL, edgeO]]);
      expect((await cloud.get('/v1/automations', { token: m.token, org })).body.map((x: any) => x.id)).toEqual([
        w.autoO.id,
      ]);
    }
    // the admin's personal edge (no share): invisible
    for (const [method, path, body] of [
      ['POST', '/v1/services/light/turn_on', { entity_id: DESK }],
      ['POST', '/v1/services/light/turn_on', { entity_id: DEMO_LAMP }],
      ['GET', `/v1/entities/states/${DESK}`],
      ['GET', `/v1/devices/1?edge_id=${edgeA}`],
      ['GET', `/v1/automations/${w.autoA.id}`],
      ['DELETE', `/v1/config_entries/${w.entryA}?edge_id=${edgeA}`],
      ['POST', `/v1/edges/${edgeA}/mqtt-credentials`],
    ] as [string, string, unknown?][]) {
      const res = await cloud.request(method, path, { token: m.token, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect(w.lampA.commands).toEqual([]);

    // the organization's edge: view and control
    expect((await cloud.get(`/v1/entities/states/${HALL}`, { token: m.token })).body).toMatchObject({
      entity_id: HALL,
      edge_id: edgeO,
    });
    expect((await cloud.post('/v1/services/light/turn_on', { token: m.token, body: { entity_id: HALL } })).status).toBe(
      200,
    );
    await until(() => w.lampO.commands.includes('hall/set ON'));
    const viewed = await cloud.get(`/v1/automations/${w.autoO.id}`, { token: m.token, org: orgId });
    expect(viewed.status).toBe(200);
    expect(viewed.body).toMatchObject({ id: w.autoO.id, edge_id: edgeO });
    expect((await cloud.get(`/v1/automations/${w.autoO.id}/traces`, { token: m.token })).status).toBe(200);

    // ... but no edits: automations, config flows, MQTT credentials
    for (const org of [undefined, orgId]) {
      for (const [method, path, body] of [
        [
          'PUT',
          `/v1/automations/${w.autoO.id}`,
          { alias: 'member edit', trigger: [{ platform: 'webhook' }], action: [{ event: 'x' }] },
        ],
        ['DELETE', `/v1/automations/${w.autoO.id}`],
        [
          'POST',
          '/v1/automations',
          { edge_id: edgeO, alias: 'x', trigger: [{ platform: 'webhook' }], action: [{ event: 'x' }] },
        ],
        ['POST', '/v1/config_flow', { handler: 'demo', edge_id: edgeO }],
        ['POST', `/v1/edges/${edgeO}/mqtt-credentials`],
      ] as [string, string, unknown?][]) {
        const res = await cloud.request(method, path, { token: m.token, org, body });
        expect(res.status, `${method} ${path} org=${org}`).toBe(403);
        expect(res.body).toEqual({ error: 'forbidden' });
      }
    }
    // A's open flow is A's alone
    expect((await cloud.post(`/v1/config_flow/${w.flowO}/advance`, { token: m.token, body: {} })).status).toBe(404);
    expect((await cloud.delete(`/v1/config_flow/${w.flowO}`, { token: m.token })).status).toBe(404);

    // A finishes it: a config entry on the organization's edge, which the member cannot delete
    const done = await cloud.post(`/v1/config_flow/${w.flowO}/advance`, { token: a.token, body: { name: 'Org demo' } });
    expect(done.body).toMatchObject({ type: 'create_entry', stepId: 'done' });
    const entryO = done.body.result.config_entry_id as number;
    await until(async () =>
      (await cloud.get('/v1/config_entries', { token: m.token })).body.some(
        (e: any) => e.id === entryO && e.edge_id === edgeO,
      ),
    );
    for (const path of [`/v1/config_entries/${entryO}`, `/v1/config_entries/${entryO}?edge_id=${edgeO}`]) {
      for (const org of [undefined, orgId]) {
        const res = await cloud.delete(path, { token: m.token, org });
        expect(res.status, `${path} org=${org}`).toBe(403);
      }
      expect((await cloud.delete(path, { token: w.b.token })).status).toBe(404);
    }
    expect(w.o1.registry.listConfigEntries().map((e) => e.id)).toContain(entryO);
    expect(w.o1.features.automations.get(w.autoO.id)?.alias).toBe('Org secret automation');
  });

  it("state_changed of one tenant never reaches another tenant's socket", async () => {
    const { cloud, a, b, m, edgeB } = w;
    const [sa, sb, sm] = [
      await appSocket(cloud, a.token),
      await appSocket(cloud, b.token),
      await appSocket(cloud, m.token),
    ];
    await w.lampA.client.publishAsync('desk/state', 'ON', { qos: 1 });
    await w.lampO.client.publishAsync('hall/state', 'ON', { qos: 1 });
    // A sees both (its personal edge and the organization's): both fan-outs are done
    await until(
      () =>
        sa.events().some((e) => e.entity_id === DESK && e.new_state?.state === 'on') &&
        sa.events().some((e) => e.entity_id === HALL && e.new_state?.state === 'on'),
    );
    await until(() => sm.events().some((e) => e.entity_id === HALL));
    // then B's own lamp changes: the only event B ever gets
    await w.lampB.client.publishAsync('desk/state', 'ON', { qos: 1 });
    await until(() => sb.events().length > 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(sb.events().map((e) => [e.entity_id, e.new_state?.state, e.new_state?.edge_id ?? edgeB])).toEqual([
      [DESK, 'on', edgeB],
    ]);
    // the member: the organization's lamp only, never the admin's personal edge
    expect(
      sm
        .events()
        .map((e) => e.entity_id)
        .filter((id) => id !== HALL),
    ).toEqual([]);
    expect(sb.events().some((e) => e.entity_id.startsWith('light.demo_') || e.entity_id === HALL)).toBe(false);
  });

  it("no parameter reaches another edge API path: '../', %2F, '?' and '#' in flow ids, entity ids, services, tokens and file names", async () => {
    const { cloud, a, m, edgeA, edgeO } = w;
    const mqttUsers = () => [w.a1.listMqttUsers().length, w.o1.listMqttUsers().length];
    const before = mqttUsers();
    const automationsBefore = (await cloud.get('/v1/automations', { token: a.token })).body.length;

    // As the owner (who could do anything through the proper routes): params must stay params.
    const rejected: [string, string, unknown?][] = [
      ['POST', '/v1/config_flow/..%2F..%2Fmqtt%2Fcredentials/advance', {}],
      ['POST', '/v1/config_flow/..%2F..%2Fautomations/advance', {}],
      ['POST', `/v1/config_flow/${w.flowO}%3Fx=1/advance`, {}],
      ['POST', `/v1/config_flow/${w.flowO}%23/advance`, {}],
      ['DELETE', '/v1/config_flow/..%2F..%2Fconfig_entries%2F1'],
      ['GET', '/v1/entities/states/..%2F..%2Fdevices'],
      ['GET', `/v1/entities/states/${DESK}%3Fx=1`],
      ['PUT', '/v1/voice-assistant/endpoints/..%2Fx', { exposed: true }],
      ['POST', '/v1/services/light/..%2F..%2Fmqtt%2Fcredentials', { entity_id: DESK }],
      ['POST', '/v1/services/..%2F..%2Fautomations/x', { entity_id: DESK }],
      ['POST', '/v1/services/light/turn_on%3Fx', { entity_id: DESK }],
      ['GET', '/v1/automations/..%2F..%2Fmqtt%2Fcredentials'],
      ['DELETE', '/v1/automations/x%23y'],
      ['GET', '/v1/automations/..%2Fautomations/traces'],
      ['DELETE', '/v1/config_entries/1%2F..%2F..%2Fautomations'],
      [`GET`, `/v1/config_entries?edge_id=${edgeA}%2F..`],
      ['POST', '/v1/automations/webhook/..%2F..%2Fmqtt%2Fcredentials', {}],
      ['GET', `/v1/edges/${edgeA}/media/..%2F..%2Fautomations/x`],
      ['GET', `/v1/edges/${edgeA}/media/${w.mediaA.token}/..%2F..%2Fautomations`],
      ['GET', `/v1/edges/${edgeA}/media/${w.mediaA.token}%3Fx/${w.mediaA.file}`],
      ['GET', `/v1/edges/${edgeA}/media/${w.mediaA.token}%23/${w.mediaA.file}`],
      ['GET', `/v1/edges/${edgeA}/media/${w.mediaA.token}/..`],
      ['GET', `/v1/edges/${edgeA}/media/..a/${w.mediaA.file}`],
    ];
    for (const [method, path, body] of rejected) {
      const res = await cloud.request(method, path, { token: a.token, body });
      // 400 from the cloud's schemas; the edge's media route alone may still answer 403 to a bad token
      expect([400, 403, 404], `${method} ${path} → ${res.status} ${res.text}`).toContain(res.status);
      if (res.status === 403) expect(res.body).toEqual({ error: 'invalid_signature' });
      expectNoLeak({ ...res, text: res.text.replace(w.mediaA.token, '') }, `${method} ${path}`);
    }
    // Raw dot segments (fetch would resolve them before sending): never relayed as a path on the edge.
    for (const path of [
      `/v1/edges/${edgeA}/media/%2e%2e/automations`,
      `/v1/edges/${edgeA}/media/../automations`,
      `/v1/edges/${edgeA}/media/.%2E/devices`,
      `/v1/edges/${edgeA}/media/%2e%2e/%2e%2e`,
      `/v1/edges/${edgeA}/media/${w.mediaA.token}/%2e%2e`,
      `/v1/edges/${edgeA}/media/%2e/config_entries`,
    ]) {
      const res = await rawGet(cloud.url, path);
      expect([400, 404], `${path} → ${res.status} ${res.text}`).toContain(res.status);
      expect(res.text).not.toContain(w.autoA.webhook_id);
      expect(res.text).not.toContain('Acme');
    }
    // The signed URL itself still works for anyone holding it (the signature is the authorization).
    const media = await fetch(`${cloud.url}/v1/edges/${edgeA}/media/${w.mediaA.token}/${w.mediaA.file}`, {
      headers: { range: 'bytes=0-3' },
    });
    expect(media.status).toBe(206);
    expect(Buffer.from(await media.arrayBuffer()).toString('latin1')).toBe('RIFF');

    // The app WebSocket's domain and service are path segments on the edge too: a member who may
    // control one entity of the organization's edge must not reach its other routes with them.
    const ws = await appSocket(cloud, m.token);
    for (const [domain, service] of [
      ['light', '../../mqtt/credentials'],
      ['..', '../mqtt/credentials'],
      ['x', '../../automations'],
      ['light', 'turn_on?x=1'],
      ['light', 'turn_on#x'],
    ]) {
      const res = await ws.ask({
        type: 'call_service',
        domain,
        service,
        target: { entity_id: HALL },
        service_data: { alias: 'injected', trigger: [{ platform: 'webhook' }], action: [{ event: 'x' }] },
      });
      expect(res, `${domain}/${service}`).toMatchObject({ success: false, error: { code: 'invalid_format' } });
    }
    expect(mqttUsers()).toEqual(before);
    expect(w.o1.features.automations.list().map((x) => x.id)).toEqual([w.autoO.id]);
    expect((await cloud.get('/v1/automations', { token: a.token })).body.length).toBe(automationsBefore);
    expect((await cloud.get('/v1/automations', { token: a.token, org: w.orgId })).body.map((x: any) => x.id)).toEqual([
      w.autoO.id,
    ]);
    expect(edgeO).toBeGreaterThan(0);
  });
});
