import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { MqttClient } from 'mqtt';
import { startTestCloud } from '@smarthome/cloud/testing/harness';
import { connect, startEdge, tempDir } from '@smarthome/edge/testing/edge';
import type { Edge } from '@smarthome/edge/edge';
import { until } from './support.ts';

/** End to end, in-process: a real cloud, a real edge paired over the tunnel, real MQTT and HTTP. */
/** Home Assistant names a device's entity "<device> <entity>": light.desk_lamp_desk. */
const DESK = 'light.desk_lamp_desk';
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function system() {
  const cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  const owner = await cloud.user();
  const created = await cloud.post('/v1/edges', { token: owner.token, body: { name: 'Home' } });
  expect(created.status).toBe(201);
  expect(created.body.edge.status).toBe('pending');
  const data = tempDir();
  cleanups.push(data.cleanup);
  const run = async () => {
    const edge = await startEdge(data.dir, { cloudUrl: cloud.url, token: created.body.token });
    cleanups.push(() => edge.stop());
    return edge;
  };
  const edge = await run();
  return { cloud, owner, edgeId: created.body.edge.id as number, edge, run, data };
}

async function lamp(edge: Edge): Promise<MqttClient> {
  const creds = await edge.createMqttCredentials({ role: 'device' });
  const device = await connect(edge, creds);
  cleanups.push(() => device.endAsync());
  await device.publishAsync(
    'homeassistant/light/desk/config',
    JSON.stringify({
      name: 'Desk',
      uniq_id: 'desk',
      cmd_t: 'desk/set',
      stat_t: 'desk/state',
      bri_cmd_t: 'desk/bri',
      bri_stat_t: 'desk/bri_state',
      dev: { ids: 'desk-1', name: 'Desk lamp', mf: 'Acme', mdl: 'L1' },
    }),
    { qos: 1, retain: true },
  );
  await device.publishAsync('desk/state', 'OFF', { qos: 1 });
  return device;
}

describe('cloud ↔ edge end to end', () => {
  it('pairs, mirrors discovery, relays service calls to MQTT, and streams state_changed to the app WebSocket', async () => {
    const { cloud, owner, edgeId, edge } = await system();
    await until(async () => (await cloud.get('/v1/edges', { token: owner.token })).body[0]?.status === 'online');
    const listed = (await cloud.get('/v1/edges', { token: owner.token })).body[0];
    expect(listed.paired_at).not.toBeNull();
    const device = await lamp(edge);

    const state = await until(async () => {
      const res = await cloud.get(`/v1/entities/states/${DESK}`, { token: owner.token });
      return res.status === 200 && res.body.state === 'off' ? res.body : null;
    });
    expect(state).toMatchObject({
      entity_id: DESK,
      name: 'Desk lamp Desk',
      domain: 'light',
      platform: 'mqtt',
      state: 'off',
      edge_id: edgeId,
    });
    const all = await cloud.get('/v1/entities/states', { token: owner.token });
    expect(all.body.map((s: { entity_id: string }) => s.entity_id)).toContain(DESK);
    const devices = await cloud.get('/v1/devices', { token: owner.token });
    const desk = devices.body.find((d: { name: string }) => d.name === 'Desk lamp');
    expect(desk).toMatchObject({ manufacturer: 'Acme', model: 'L1' });
    const one = await cloud.get(`/v1/devices/${desk.id}`, { token: owner.token });
    expect(one.body.entities.map((e: { entity_id: string }) => e.entity_id)).toEqual([DESK]);

    // App WebSocket, Home Assistant style.
    const ws = new WebSocket(`${cloud.url.replace('http', 'ws')}/v1/websocket`);
    cleanups.push(() => ws.close());
    const inbox: any[] = [];
    ws.on('message', (d) => inbox.push(JSON.parse(d.toString())));
    await until(async () => inbox.find((m) => m.type === 'auth_required'));
    ws.send(JSON.stringify({ type: 'auth', access_token: owner.token }));
    await until(async () => inbox.find((m) => m.type === 'auth_ok'));
    ws.send(JSON.stringify({ id: 1, type: 'subscribe_events', event_type: 'state_changed' }));
    await until(async () => inbox.find((m) => m.id === 1 && m.type === 'result' && m.success));

    // A service call through the cloud reaches the device's command topic.
    const commands: string[] = [];
    await device.subscribeAsync('desk/#');
    device.on('message', (topic, payload) => commands.push(`${topic} ${payload}`));
    const call = await cloud.post('/v1/services/light/turn_on', {
      token: owner.token,
      body: { entity_id: DESK, brightness: 128 },
    });
    expect(call.status).toBe(200);
    await until(async () => commands.includes('desk/set ON') && commands.includes('desk/bri 128'));

    // The device reports back; the app sees state_changed with old and new state.
    await device.publishAsync('desk/state', 'ON', { qos: 1 });
    const event = await until(async () =>
      inbox.find(
        (m) => m.type === 'event' && m.event.data.entity_id === DESK && m.event.data.new_state?.state === 'on',
      ),
    );
    expect(event.id).toBe(1);
    expect(event.event.event_type).toBe('state_changed');
    expect(event.event.data.old_state.state).toBe('off');

    ws.send(JSON.stringify({ id: 2, type: 'get_states' }));
    const states = await until(async () => inbox.find((m) => m.id === 2));
    expect(states.result.find((s: { entity_id: string }) => s.entity_id === DESK).state).toBe('on');
    ws.send(
      JSON.stringify({
        id: 3,
        type: 'call_service',
        domain: 'light',
        service: 'turn_off',
        target: { entity_id: DESK },
      }),
    );
    await until(async () => inbox.find((m) => m.id === 3 && m.success));
    await until(async () => commands.includes('desk/set OFF'));
  });

  it('goes offline when the edge stops (503 on calls, last state still readable) and resyncs on restart', async () => {
    const ctx = await system();
    const { cloud, owner, edgeId } = ctx;
    await lamp(ctx.edge);
    await until(
      async () => (await cloud.get(`/v1/entities/states/${DESK}`, { token: owner.token })).body?.state === 'off',
    );
    await ctx.edge.stop();
    await until(async () => (await cloud.get('/v1/edges', { token: owner.token })).body[0].status === 'offline');
    const read = await cloud.get(`/v1/entities/states/${DESK}`, { token: owner.token });
    expect(read.status).toBe(200);
    expect(read.body.state).toBe('off');
    const call = await cloud.post('/v1/services/light/turn_on', { token: owner.token, body: { entity_id: DESK } });
    expect(call.status).toBe(503);
    expect(call.body).toEqual({ error: 'edge_offline' });

    // While the edge is down nothing changes; after restart the mirror matches the edge again.
    const edge2 = await ctx.run();
    await until(async () => (await cloud.get('/v1/edges', { token: owner.token })).body[0].status === 'online');
    const creds = await edge2.createMqttCredentials({ role: 'device' });
    const dev = await connect(edge2, creds);
    cleanups.push(() => dev.endAsync());
    await dev.publishAsync('desk/state', 'ON', { qos: 1 });
    await until(
      async () => (await cloud.get(`/v1/entities/states/${DESK}`, { token: owner.token })).body?.state === 'on',
    );
    const mirrored = (await cloud.get('/v1/entities/states', { token: owner.token })).body
      .map((s: { entity_id: string; state: string }) => `${s.entity_id}=${s.state}`)
      .sort();
    const local = edge2.states
      .all()
      .map((s) => `${s.entity_id}=${s.state}`)
      .sort();
    expect(mirrored).toEqual(local);
    expect(edgeId).toBeGreaterThan(0);
  });

  it('drops the tunnel of a revoked edge at once and refuses it afterwards', async () => {
    const { cloud, owner, edgeId, edge } = await system();
    await until(
      async () =>
        edge.link?.connected && (await cloud.get('/v1/edges', { token: owner.token })).body[0].status === 'online',
    );
    const del = await cloud.delete(`/v1/edges/${edgeId}`, { token: owner.token });
    expect(del.status).toBe(200);
    await until(async () => !edge.link?.connected);
    await new Promise((r) => setTimeout(r, 700));
    expect(edge.link?.connected).toBe(false);
    expect((await cloud.get('/v1/edges', { token: owner.token })).body[0].status).toBe('revoked');
  });

  it('lets an organization member with a can_view share see an entity but not control it; can_control allows it', async () => {
    const { cloud, owner, edge } = await system();
    await lamp(edge);
    await until(async () => (await cloud.get(`/v1/entities/states/${DESK}`, { token: owner.token })).status === 200);
    const org = await cloud.post('/v1/organizations', { token: owner.token, body: { name: 'Family' } });
    const member = await cloud.user();
    const inv = await cloud.post(`/v1/organizations/${org.body.id}/invitations`, {
      token: owner.token,
      body: { email: member.email, role: 'member' },
    });
    expect((await cloud.post(`/v1/invitations/${inv.body.token}/accept`, { token: member.token })).status).toBe(200);
    const stranger = await cloud.user();

    expect((await cloud.get(`/v1/entities/states/${DESK}`, { token: member.token })).status).toBe(404);
    const share = await cloud.post(`/v1/organizations/${org.body.id}/shares`, {
      token: owner.token,
      body: { resource_type: 'entity', resource_id: DESK, can_view: true, can_control: false, can_edit: false },
    });
    expect(share.status).toBe(201);
    const seen = await cloud.get(`/v1/entities/states/${DESK}`, { token: member.token });
    expect(seen.status).toBe(200);
    expect(
      (await cloud.get('/v1/entities/states', { token: member.token })).body.map(
        (s: { entity_id: string }) => s.entity_id,
      ),
    ).toEqual([DESK]);
    const denied = await cloud.post('/v1/services/light/turn_on', { token: member.token, body: { entity_id: DESK } });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden' });
    expect((await cloud.get(`/v1/entities/states/${DESK}`, { token: stranger.token })).status).toBe(404);
    expect(
      (await cloud.post('/v1/services/light/turn_on', { token: stranger.token, body: { entity_id: DESK } })).status,
    ).toBe(404);

    await cloud.delete(`/v1/organizations/${org.body.id}/shares/${share.body.id}`, { token: owner.token });
    await cloud.post(`/v1/organizations/${org.body.id}/shares`, {
      token: owner.token,
      body: { resource_type: 'entity', resource_id: DESK, can_view: true, can_control: true, can_edit: false },
    });
    const allowed = await cloud.post('/v1/services/light/turn_on', { token: member.token, body: { entity_id: DESK } });
    expect(allowed.status).toBe(200);
  });
});
