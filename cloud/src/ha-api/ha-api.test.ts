import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { sampleSnapshot } from '../testing/fixtures.ts';
import { connectHa, haWorld } from '../testing/ha.ts';
import { changeState } from './testing.ts';

/**
 * The cloud's Home Assistant API in-process: real cloud (SQLite or PostgreSQL), real ws
 * client on /api/websocket, real HTTP on /api/*. Edges are mirrored from snapshots and
 * never connect, so service calls meet an offline edge; live events are emitted on the hub
 * the way the tunnel emits them.
 */
let t: TestCloud;
let a: Awaited<ReturnType<TestCloud['user']>>;
let b: Awaited<ReturnType<TestCloud['user']>>;
let v: Awaited<ReturnType<TestCloud['user']>>;
let edgeA: number;
let edgeO: number;
let org: string;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  t = await startTestCloud();
  ({ a, b, v, org, edgeA, edgeO } = await haWorld(t));
  const office = sampleSnapshot({ devices: 1 });
  office.states[0] = { ...office.states[0], entity_id: 'light.lamp_1', state: 'on' };
  office.entities = office.entities.map((e) => ({ ...e, entity_id: 'light.office', unique_id: 'office' }));
  office.states = [
    { entity_id: 'light.office', name: 'Office', domain: 'light', platform: 'demo', state: 'on', attributes: {} },
  ];
  await t.cloud.services.mirror.replaceSnapshot(edgeO, office);
});
afterAll(async () => {
  for (const s of sockets) s.terminate();
  await t.stop();
});

/** A raw HA WebSocket client on this cloud (see testing.ts). */
const connect = (token: string, extra: Record<string, unknown> = {}, expectOk = true) =>
  connectHa(t.url, sockets, token, extra, expectOk);

const ids = (states: { entity_id: string }[]) => states.map((s) => s.entity_id).sort();

describe('cloud /api/websocket: authentication', () => {
  it('accepts an access token and a PAT; refuses garbage with auth_invalid and 4001', async () => {
    await connect(a.token);
    const pat = (await t.post('/v1/account/tokens', { token: a.token, body: { name: 'ha' } })).body.token as string;
    await connect(pat);
    const bad = await connect('not-a-token', {}, false);
    expect(bad.auth).toEqual({ type: 'auth_invalid', message: 'Invalid access token or password' });
    expect((await bad.closed).code).toBe(4001);
  });

  it('organization_id scopes like X-Organization-Id: a non-member is refused', async () => {
    const outsider = await connect(b.token, { organization_id: org }, false);
    expect(outsider.auth.type).toBe('auth_invalid');
    const scoped = await connect(a.token, { organization_id: org });
    expect(ids((await scoped.ask({ type: 'get_states' })).result)).toEqual(['light.office']);
  });

  it('revoking the PAT ends an idle session (auth_invalid, 4001)', async () => {
    const created = (await t.post('/v1/account/tokens', { token: a.token, body: { name: 'soon revoked' } })).body;
    const c = await connect(created.token);
    expect((await c.ask({ type: 'get_states' })).success).toBe(true);
    expect((await t.delete(`/v1/account/tokens/${created.id}`, { token: a.token })).status).toBe(200);
    expect((await c.next((m) => m.type === 'auth_invalid')).type).toBe('auth_invalid');
    expect((await c.closed).code).toBe(4001);
  });
});

describe('cloud /api/websocket: sessions live no longer than their credential', () => {
  it("a password change ends the other sign-ins' sessions (auth_invalid, 4001); the current one stays", async () => {
    const u = await t.user();
    const phone = (
      await t.post('/v1/auth/token', { body: { grant_type: 'password', email: u.email, password: u.password } })
    ).body;
    const phoneSession = await connect(phone.access_token);
    const current = await connect(u.token);
    const changed = await t.post('/v1/account/password', {
      token: u.token,
      headers: { 'x-account-verification': u.password },
      body: { password: 'a brand new password' },
    });
    expect(changed.status).toBe(200);
    expect((await phoneSession.next((m) => m.type === 'auth_invalid')).type).toBe('auth_invalid');
    expect((await phoneSession.closed).code).toBe(4001);
    expect((await current.ask({ type: 'ping' })).type).toBe('pong');
  });

  it("an access token's session ends at the token's expiry, by a timer", async () => {
    const short = await startTestCloud({ accessTokenTtlSeconds: 2 });
    try {
      const u = await short.user();
      const ws = new WebSocket(`${short.url.replace('http', 'ws')}/api/websocket`);
      sockets.push(ws);
      const inbox: any[] = [];
      ws.on('message', (d) => inbox.push(JSON.parse(d.toString())));
      const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
      await new Promise((r) => ws.once('open', r));
      ws.send(JSON.stringify({ type: 'auth', access_token: u.token }));
      expect(await closed).toBe(4001);
      expect(inbox.map((m) => m.type)).toEqual(['auth_required', 'auth_ok', 'auth_invalid']);
      expect(inbox[2].message).toBe('access token expired');
    } finally {
      await short.stop();
    }
  });
});

describe('cloud /api/websocket: what the caller may view and control', () => {
  it('get_states: every edge the user reaches, in HA state shape; another tenant sees nothing', async () => {
    const states = (await (await connect(a.token)).ask({ type: 'get_states' })).result;
    expect(ids(states)).toEqual(['light.lamp_1', 'light.lamp_2', 'light.office']);
    expect(states.find((s: any) => s.entity_id === 'light.lamp_1')).toMatchObject({
      state: 'off',
      attributes: { brightness: 0 },
      context: { parent_id: null, user_id: null },
    });
    expect((await (await connect(b.token)).ask({ type: 'get_states' })).result).toEqual([]);
    // V: O's edge whole (member) and A's shared lamp_2
    expect(ids((await (await connect(v.token)).ask({ type: 'get_states' })).result)).toEqual([
      'light.lamp_2',
      'light.office',
    ]);
  });

  it('auth/current_user names the cloud user (an admin: Node-RED refuses others); floor and label registries are empty', async () => {
    const c = await connect(a.token);
    expect((await c.ask({ type: 'auth/current_user' })).result).toEqual({
      id: a.id,
      name: a.email.split('@')[0],
      is_owner: false,
      is_admin: true,
      credentials: [],
      mfa_modules: [],
    });
    expect((await c.ask({ type: 'config/floor_registry/list' })).result).toEqual([]);
    expect((await c.ask({ type: 'config/label_registry/list' })).result).toEqual([]);
  });

  it('get_services lists the services of the domains in scope; get_config, get_panels and registries answer', async () => {
    const c = await connect(a.token);
    expect(Object.keys((await c.ask({ type: 'get_services' })).result.light).sort()).toEqual([
      'toggle',
      'turn_off',
      'turn_on',
    ]);
    expect((await c.ask({ type: 'get_config' })).result).toMatchObject({
      version: '2026.11.0',
      state: 'RUNNING',
      components: expect.arrayContaining(['light']),
    });
    // minimal: no panels of HA's frontend to list
    expect((await c.ask({ type: 'get_panels' })).result).toEqual({});
    const entities = (await c.ask({ type: 'config/entity_registry/list' })).result;
    expect(entities.find((e: any) => e.entity_id === 'light.lamp_1')).toMatchObject({
      id: `${edgeA}_1`,
      device_id: `${edgeA}_1`,
      platform: 'demo',
    });
    expect((await c.ask({ type: 'config/device_registry/list' })).result.map((d: any) => d.id).sort()).toEqual(
      [`${edgeA}_1`, `${edgeA}_2`, `${edgeO}_1`].sort(),
    );
    expect(await (await connect(b.token)).ask({ type: 'get_services' })).toMatchObject({ success: true, result: {} });
  });

  it('call_service: view-only share is unauthorized, unknown is not_found, an offline edge is a clear error', async () => {
    const viewer = await connect(v.token);
    expect(
      (
        await viewer.ask({
          type: 'call_service',
          domain: 'light',
          service: 'turn_on',
          target: { entity_id: 'light.lamp_2' },
        })
      ).error,
    ).toEqual({ code: 'unauthorized', message: 'Not allowed to control this entity (view-only).' });
    expect(
      (
        await viewer.ask({
          type: 'call_service',
          domain: 'light',
          service: 'turn_on',
          target: { entity_id: 'light.lamp_1' },
        })
      ).error.code,
    ).toBe('not_found');
    const owner = await connect(a.token);
    expect(
      (
        await owner.ask({
          type: 'call_service',
          domain: 'light',
          service: 'turn_on',
          service_data: { entity_id: 'light.lamp_1' },
        })
      ).error,
    ).toEqual({ code: 'home_assistant_error', message: `Edge ${edgeA} is offline.` });
  });

  it('subscribe_events / subscribe_entities: live changes only of what the caller may view', async () => {
    const owner = await connect(a.token);
    const stranger = await connect(b.token);
    const viewer = await connect(v.token);
    expect((await owner.ask({ type: 'subscribe_events', event_type: 'state_changed' })).success).toBe(true);
    expect((await stranger.ask({ type: 'subscribe_events' })).success).toBe(true);
    const entities = await viewer.ask({ type: 'subscribe_entities' });
    expect(entities.success).toBe(true);
    const initial = await viewer.next((m) => m.type === 'event' && m.id === entities.id);
    expect(Object.keys(initial.event.a).sort()).toEqual(['light.lamp_2', 'light.office']);
    const { old } = await changeState(t, edgeA, 'light.lamp_2', 'on');
    const ev = await owner.next((m) => m.type === 'event');
    expect(ev.event).toMatchObject({
      event_type: 'state_changed',
      data: { entity_id: 'light.lamp_2', old_state: { state: 'off' }, new_state: { state: 'on' } },
    });
    expect((await viewer.next((m) => m.type === 'event' && m.id === entities.id)).event).toEqual({
      c: { 'light.lamp_2': { '+': expect.objectContaining({ s: 'on' }) } },
    });
    // a change on A's unshared lamp_1 reaches the owner only
    t.cloud.services.tunnel.emit('state_changed', {
      edgeId: edgeA,
      entity_id: 'light.lamp_1',
      old_state: null,
      new_state: { ...old, entity_id: 'light.lamp_1' },
    });
    expect((await owner.next((m) => m.type === 'event')).event.data.entity_id).toBe('light.lamp_1');
    expect((await viewer.ask({ type: 'ping' })).type).toBe('pong');
    expect(viewer.inbox.filter((m) => m.type === 'event')).toEqual([]);
    expect(stranger.inbox.filter((m) => m.type === 'event')).toEqual([]);
  });
});

describe('cloud /api/* (REST)', () => {
  it('bearer auth as HA: 401 plain without a token; states and one state of the caller only', async () => {
    const none = await t.get('/api/states');
    expect([none.status, none.text]).toEqual([401, '401: Unauthorized']);
    expect(ids((await t.get('/api/states', { token: a.token })).body)).toEqual([
      'light.lamp_1',
      'light.lamp_2',
      'light.office',
    ]);
    expect((await t.get('/api/states/light.lamp_1', { token: b.token })).status).toBe(404);
    expect((await t.get('/api/states/light.lamp_1', { token: a.token })).body).toMatchObject({
      entity_id: 'light.lamp_1',
      state: 'off',
    });
  });

  it('POST /api/services: 401 for a view-only share, 400 with the reason for an offline edge', async () => {
    expect(
      (await t.post('/api/services/light/turn_on', { token: v.token, body: { entity_id: 'light.lamp_2' } })).status,
    ).toBe(401);
    const offline = await t.post('/api/services/light/turn_on', {
      token: a.token,
      body: { entity_id: 'light.lamp_1' },
    });
    expect([offline.status, offline.body]).toEqual([400, { message: `Edge ${edgeA} is offline.` }]);
  });

  it('POST /api/events: only owners and admins of an edge in scope may fire; offline edges say so', async () => {
    expect((await t.post('/api/events/doorbell', { token: b.token, body: {} })).status).toBe(401);
    expect((await t.post('/api/events/doorbell', { token: a.token, body: {} })).body).toEqual({
      message: `Edge ${edgeA} is offline.`,
    });
  });

  it('data nested deeper than a request body may be is a 400 {message}, never relayed', async () => {
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    for (const path of ['/api/services/light/turn_on', '/api/events/doorbell']) {
      const res = await t.post(path, { token: a.token, raw: deep });
      expect([res.status, typeof res.body?.message], path).toEqual([400, 'string']);
    }
  });

  it('/openapi.json documents the HA routes', async () => {
    const doc = (await t.get('/openapi.json')).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/api/states', '/api/services/{domain}/{service}', '/api/events/{event_type}']),
    );
  });
});
