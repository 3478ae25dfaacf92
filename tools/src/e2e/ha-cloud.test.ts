import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  callService,
  createConnection,
  createLongLivedTokenAuth,
  getConfig,
  getServices,
  getStates,
  subscribeEntities,
  type Connection,
  type HassEntities,
} from 'home-assistant-js-websocket';
import { addMember } from '@smarthome/cloud/testing/fixtures';
import { TestCloud, startTestCloud } from '@smarthome/cloud/testing/harness';
import { redisReachable } from '@smarthome/cloud/testing/redis';
import type { Edge } from '@smarthome/edge/edge';
import { DESK_LAMP, mqttLamp, pairEdge, sharedDeskLamp, startReplicaPair, until, type Cleanups } from './support.ts';

/**
 * The Home Assistant API on the CLOUD, with the client HA's frontend uses
 * (home-assistant-js-websocket 9.7): a real cloud, a real edge paired over the tunnel, a real
 * MQTT lamp. The same client code as against an edge; the cloud answers across the caller's
 * edges, for what the caller may view and control.
 */
const DESK = DESK_LAMP;
const redis = await redisReachable();

const cleanups: Cleanups = [];
let cloud: TestCloud;
let edge: Edge;
let lamp: Awaited<ReturnType<typeof mqttLamp>>;
type User = Awaited<ReturnType<TestCloud['user']>>;
let a: User;
let v: User;
let b: User;
let pat: { id: string; token: string };

/** A connection as HA's frontend opens one: long-lived token auth against the cloud's base URL. */
async function haConnect(token: string): Promise<Connection> {
  const conn = await createConnection({ auth: createLongLivedTokenAuth(cloud.url, token) });
  cleanups.push(() => conn.close());
  return conn;
}

beforeAll(async () => {
  (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
  cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  [a, v, b] = [await cloud.user(), await cloud.user(), await cloud.user()];
  const org = (await cloud.post('/v1/organizations', { token: a.token, body: { name: 'Family' } })).body.id as string;
  await addMember(cloud, org, v.id, 'member');
  ({ edge } = await pairEdge(cloud, cleanups, a.token, 'House'));
  ({ lamp } = await sharedDeskLamp(cloud, cleanups, edge, a.token, org, v.id));
  pat = (await cloud.post('/v1/account/tokens', { token: a.token, body: { name: 'home assistant' } })).body;
}, 60_000);
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
});

describe('home-assistant-js-websocket against the cloud', () => {
  it('getStates, getConfig, getServices with a PAT', async () => {
    const conn = await haConnect(pat.token);
    expect(conn.haVersion).toBe('2026.11.0');
    const desk = (await getStates(conn)).find((s) => s.entity_id === DESK);
    expect(desk).toMatchObject({
      entity_id: DESK,
      state: 'off',
      attributes: { friendly_name: 'Desk lamp Desk' },
      context: { parent_id: null, user_id: null },
    });
    expect(desk!.context.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const config = await getConfig(conn);
    expect(config).toMatchObject({ version: '2026.11.0', state: 'RUNNING', unit_system: { temperature: '°C' } });
    expect(config.components).toContain('light');
    expect(Object.keys((await getServices(conn)).light).sort()).toEqual(['toggle', 'turn_off', 'turn_on']);
  });

  it('subscribeEntities: the initial state, then a live update after the device publishes over MQTT', async () => {
    const conn = await haConnect(a.token);
    let entities: HassEntities = {};
    const unsubscribe = subscribeEntities(conn, (e) => {
      entities = e;
    });
    await until(() => entities[DESK]?.state === 'off', 5000, 'initial entities');
    await lamp.client.publishAsync('desk/state', 'ON', { qos: 1 });
    await until(() => entities[DESK]?.state === 'on', 5000, 'live update');
    unsubscribe();
    await lamp.client.publishAsync('desk/state', 'OFF', { qos: 1 });
    await until(
      async () => (await cloud.get(`/v1/entities/states/${DESK}`, { token: a.token })).body?.state === 'off',
      5000,
      'lamp off again',
    );
  });

  it('callService: relayed through the tunnel, the lamp receives its command', async () => {
    const conn = await haConnect(pat.token);
    lamp.commands.length = 0;
    await callService(conn, 'light', 'turn_on', undefined, { entity_id: DESK });
    await until(() => lamp.commands.includes('desk/set ON'), 5000, "the lamp's command");
    expect(lamp.commands).toEqual(['desk/set ON']);
  });

  it('fire_event goes to the edge through the tunnel and comes back to the subscribers of that event type', async () => {
    const conn = await haConnect(pat.token);
    const received: { event_type: string; data: unknown; origin: string }[] = [];
    const unsubscribe = await conn.subscribeEvents<{ event_type: string; data: unknown; origin: string }>((e) => {
      received.push(e);
    }, 'doorbell');
    await conn.sendMessagePromise({ type: 'fire_event', event_type: 'doorbell', event_data: { door: 'front' } });
    const rest = await cloud.post('/api/events/doorbell', { token: pat.token, body: { door: 'back' } });
    expect([rest.status, rest.body]).toEqual([200, { message: 'Event doorbell fired.' }]);
    await until(() => received.length === 2, 5000, 'both events');
    expect(received.map((e) => [e.event_type, e.data, e.origin])).toEqual([
      ['doorbell', { door: 'front' }, 'REMOTE'],
      ['doorbell', { door: 'back' }, 'REMOTE'],
    ]);
    await unsubscribe();
    // the edge refuses to let anyone fake its own events
    await expect(conn.sendMessagePromise({ type: 'fire_event', event_type: 'state_changed' })).rejects.toMatchObject({
      code: 'invalid_format',
    });
  });

  it('a view-only share sees the lamp but cannot control it', async () => {
    const conn = await haConnect(v.token);
    expect((await getStates(conn)).map((s) => s.entity_id)).toEqual([DESK]);
    lamp.commands.length = 0;
    await expect(callService(conn, 'light', 'turn_on', undefined, { entity_id: DESK })).rejects.toEqual({
      code: 'unauthorized',
      message: 'Not allowed to control this entity (view-only).',
    });
    expect(lamp.commands).toEqual([]);
  });

  it('another tenant sees nothing and controls nothing', async () => {
    const conn = await haConnect(b.token);
    expect(await getStates(conn)).toEqual([]);
    expect(await getServices(conn)).toEqual({});
    await expect(callService(conn, 'light', 'turn_on', undefined, { entity_id: DESK })).rejects.toMatchObject({
      code: 'not_found',
    });
    const rest = await cloud.get(`/api/states/${DESK}`, { token: b.token });
    expect(rest.status).toBe(404);
  });

  it('revoking the PAT ends the session: disconnected, and reconnecting is refused (ERR_INVALID_AUTH)', async () => {
    const created = (await cloud.post('/v1/account/tokens', { token: a.token, body: { name: 'revoked soon' } })).body;
    const conn = await haConnect(created.token);
    const events: string[] = [];
    conn.addEventListener('disconnected', () => events.push('disconnected'));
    conn.addEventListener('reconnect-error', (_c, err) => events.push(`reconnect-error ${String(err)}`));
    expect((await getStates(conn)).length).toBe(1);
    expect((await cloud.delete(`/v1/account/tokens/${created.id}`, { token: a.token })).status).toBe(200);
    // ERR_INVALID_AUTH = 2
    await until(() => events.includes('reconnect-error 2'), 10_000, 'the refused reconnect');
    expect(events[0]).toBe('disconnected');
    expect(conn.connected).toBe(false);
  });
});

describe('home-assistant-js-websocket against the cloud: commands relayed to the edge or rendered in the cloud', () => {
  it('render_template: a subscription re-rendered after the lamp publishes over MQTT through the edge', async () => {
    const conn = await haConnect(pat.token);
    const results: unknown[] = [];
    const unsubscribe = await conn.subscribeMessage<{ result: unknown }>((e) => results.push(e.result), {
      type: 'render_template',
      template: `desk is {{ states('${DESK}') }}`,
    });
    await until(() => results.length === 1, 5000, 'the first render');
    expect(results).toEqual(['desk is off']);
    await lamp.client.publishAsync('desk/state', 'ON', { qos: 1 });
    await until(() => results.length === 2, 5000, 'the render after the change');
    expect(results[1]).toBe('desk is on');
    await unsubscribe();
    const rest = await cloud.post('/api/template', {
      token: pat.token,
      body: { template: `{{ is_state('${DESK}', 'on') }}` },
    });
    expect([rest.status, rest.text]).toEqual([200, 'True']);
    await lamp.client.publishAsync('desk/state', 'OFF', { qos: 1 });
    await until(
      async () => (await cloud.get(`/v1/entities/states/${DESK}`, { token: a.token })).body?.state === 'off',
      5000,
      'lamp off again',
    );
  });

  it("history/history_during_period and logbook: the lamp's changes, from the edge's recorder", async () => {
    const conn = await haConnect(pat.token);
    const start_time = new Date(Date.now() - 3_600_000).toISOString();
    const history = await conn.sendMessagePromise<Record<string, { s: string }[]>>({
      type: 'history/history_during_period',
      start_time,
      entity_ids: [DESK],
      minimal_response: true,
    });
    expect(Object.keys(history)).toEqual([DESK]);
    expect(history[DESK].map((x) => x.s)).toEqual(expect.arrayContaining(['off', 'on']));
    const rest = await cloud.get(`/api/history/period/${start_time}?filter_entity_id=${DESK}`, { token: a.token });
    expect(rest.status).toBe(200);
    expect(rest.body[0][0]).toMatchObject({ entity_id: DESK });
    const logbook = await conn.sendMessagePromise<{ entity_id?: string; state?: string }[]>({
      type: 'logbook/get_events',
      start_time,
      entity_ids: [DESK],
    });
    expect(logbook.map((e) => e.state)).toContain('on');
    // the view-only share reads the lamp's history too; another tenant gets nothing
    const viewer = await haConnect(v.token);
    const seen = await viewer.sendMessagePromise<Record<string, unknown[]>>({
      type: 'history/history_during_period',
      start_time,
      entity_ids: [DESK],
    });
    expect(Object.keys(seen)).toEqual([DESK]);
    const stranger = await haConnect(b.token);
    expect(
      await stranger.sendMessagePromise({ type: 'history/history_during_period', start_time, entity_ids: [DESK] }),
    ).toEqual({});
  });

  it('execute_script runs on the edge for its owner; a view-only share cannot run it', async () => {
    const sequence = [{ service: 'light.turn_on', target: { entity_id: DESK } }];
    const viewer = await haConnect(v.token);
    lamp.commands.length = 0;
    await expect(viewer.sendMessagePromise({ type: 'execute_script', sequence })).rejects.toMatchObject({
      code: 'unauthorized',
    });
    expect(lamp.commands).toEqual([]);
    const conn = await haConnect(pat.token);
    expect(await conn.sendMessagePromise({ type: 'execute_script', sequence })).toMatchObject({ response: null });
    await until(() => lamp.commands.includes('desk/set ON'), 5000, "the script's command");
    expect(
      await conn.sendMessagePromise({ type: 'validate_config', trigger: { platform: 'state', entity_id: DESK } }),
    ).toEqual({ trigger: { valid: true, error: null } });
  });

  it('POST /api/states creates a state on the edge, DELETE removes it; another tenant cannot', async () => {
    const made = await cloud.post('/api/states/sensor.cloud_made', { token: a.token, body: { state: '21' } });
    expect([made.status, made.body.state]).toEqual([201, '21']);
    await until(
      async () => (await cloud.get('/api/states/sensor.cloud_made', { token: a.token })).body?.state === '21',
      5000,
      'the new state mirrored',
    );
    expect((await cloud.delete('/api/states/sensor.cloud_made', { token: b.token })).status).toBe(404);
    expect((await cloud.delete('/api/states/sensor.cloud_made', { token: a.token })).body).toEqual({
      message: 'Entity removed.',
    });
  });
});

describe.skipIf(!redis)(
  "home-assistant-js-websocket on one cloud replica, the edge's tunnel on another (in-process replicas over Redis)",
  () => {
    it('live updates, service calls and fired events cross replicas', async () => {
      const [A, B] = await startReplicaPair(cleanups, 'ha-replicas');
      const owner = await A.user();
      // the edge pairs with B; the HA client talks to A
      const { edge: edgeB } = await pairEdge(B, cleanups, owner.token, 'Cabin');
      const cabin = await mqttLamp(edgeB, cleanups, 'desk', 'Desk lamp');
      await until(
        async () => (await A.get(`/v1/entities/states/${DESK}`, { token: owner.token })).body?.state === 'off',
        10_000,
        'lamp mirrored',
      );
      const conn = await createConnection({ auth: createLongLivedTokenAuth(A.url, owner.token) });
      cleanups.push(() => conn.close());
      let entities: HassEntities = {};
      subscribeEntities(conn, (e) => {
        entities = e;
      });
      await until(() => entities[DESK]?.state === 'off', 5000, 'initial entities');
      await cabin.client.publishAsync('desk/state', 'ON', { qos: 1 });
      await until(() => entities[DESK]?.state === 'on', 5000, 'the live update from B');
      await callService(conn, 'light', 'turn_off', undefined, { entity_id: DESK });
      await until(() => cabin.commands.includes('desk/set OFF'), 5000, 'the command relayed through B');
      const fired: unknown[] = [];
      await conn.subscribeEvents((e: { data: unknown }) => {
        fired.push(e.data);
      }, 'doorbell');
      await conn.sendMessagePromise({ type: 'fire_event', event_type: 'doorbell', event_data: { door: 'cabin' } });
      await until(() => fired.length === 1, 5000, 'the event back from B');
      expect(fired).toEqual([{ door: 'cabin' }]);
    }, 60_000);
  },
);
