import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import { connect, haSession } from '@smarthome/edge/testing/edge';
import type { Edge } from '@smarthome/edge/edge';
import { pairEdge, until, type Cleanups } from './support.ts';

/**
 * A disabled entity through the cloud, as on the edge (and in HA): a zigbee2mqtt sensor with
 * `enabled_by_default: false` is in the cloud's entity registry with disabled_by "integration" and
 * has no state in any cloud listing (v1 and HA API); enabled on the edge's /api/websocket it
 * appears in the cloud with its state; disabled again it leaves (subscribe_entities sends `r`).
 * The plug connects through a bridge (via_device): the cloud's device registry links them.
 * A real edge paired over the tunnel, a real broker, a real cloud.
 */

const ID = 'sensor.plug_linkquality';
const SIBLING = 'sensor.plug_power';

const cleanups: Cleanups = [];
let cloud: TestCloud;
let token: string;
let edge: Edge;
let device: MqttClient;

const config = (key: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    name: key[0]!.toUpperCase() + key.slice(1),
    unique_id: `0xplug_${key}`,
    state_topic: 'zigbee2mqtt/plug',
    value_template: `{{ value_json.${key} }}`,
    device: { identifiers: ['zigbee2mqtt_0xplug'], name: 'Plug', via_device: 'zigbee2mqtt_bridge_0x00' },
    ...extra,
  });

beforeAll(async () => {
  cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  token = (await cloud.user()).token;
  ({ edge } = await pairEdge(cloud, cleanups, token, 'home'));
  device = await connect(edge, await edge.createMqttCredentials({ role: 'device' }));
  cleanups.push(() => device.endAsync());
  await device.publishAsync('zigbee2mqtt/plug', JSON.stringify({ linkquality: 42, power: 7 }), {
    qos: 1,
    retain: true,
  });
  await device.publishAsync(
    'homeassistant/sensor/0xplug/linkquality/config',
    config('linkquality', {
      enabled_by_default: false,
    }),
    { qos: 1, retain: true },
  );
  await device.publishAsync('homeassistant/sensor/0xplug/power/config', config('power'), { qos: 1, retain: true });
}, 60_000);
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
});

const v1Ids = async () =>
  ((await cloud.get('/v1/entities/states', { token })).body as { entity_id: string }[]).map((s) => s.entity_id);
const restIds = async () =>
  ((await cloud.get('/api/states', { token })).body as { entity_id: string }[]).map((s) => s.entity_id);

describe('a disabled entity through the cloud', () => {
  it('has no state in the cloud until the edge enables it, and loses it when disabled again', async () => {
    // the enabled sibling's state shows the mirror has the device's entities
    await until(
      async () => (await cloud.get(`/v1/entities/states/${SIBLING}`, { token })).body?.state === '7',
      10_000,
      'sibling mirrored',
    );
    const ha = await haSession(cloud.url, token);
    cleanups.push(() => ha.close());
    const registry = async () =>
      ((await ha.call({ type: 'config/entity_registry/list' })).result as { entity_id: string }[]).find(
        (e) => e.entity_id === ID,
      );
    expect(await registry()).toMatchObject({ entity_id: ID, disabled_by: 'integration' });
    expect(await v1Ids()).toContain(SIBLING);
    expect(await v1Ids()).not.toContain(ID);
    expect((await cloud.get(`/v1/entities/states/${ID}`, { token })).status).toBe(404);
    expect(await restIds()).toContain(SIBLING);
    expect(await restIds()).not.toContain(ID);
    expect((await cloud.get(`/api/states/${ID}`, { token })).status).toBe(404);
    const states = (await ha.call({ type: 'get_states' })).result as { entity_id: string }[];
    expect(states.map((s) => s.entity_id)).toContain(SIBLING);
    expect(states.map((s) => s.entity_id)).not.toContain(ID);
    await ha.call({ type: 'subscribe_entities' });
    const initial = await until(
      () => ha.messages.find((m) => m.type === 'event' && m.event.a),
      3000,
      'subscribe_entities initial',
    );
    expect(Object.keys(initial.event.a)).toContain(SIBLING);
    expect(Object.keys(initial.event.a)).not.toContain(ID);

    // enabled on the edge: its retained state reaches the cloud's listings and subscribers
    const local = await haSession(edge, edge.tokens.create('test').token);
    cleanups.push(() => local.close());
    const enabled = await local.call({ type: 'config/entity_registry/update', entity_id: ID, disabled_by: null });
    expect(enabled).toMatchObject({ success: true });
    await until(
      async () => (await cloud.get(`/v1/entities/states/${ID}`, { token })).body?.state === '42',
      10_000,
      'enabled state in the cloud',
    );
    expect(await v1Ids()).toContain(ID);
    expect(await restIds()).toContain(ID);
    expect(await registry()).toMatchObject({ entity_id: ID, disabled_by: null });
    await until(
      () =>
        ha.messages.find(
          (m) => m.type === 'event' && (m.event.a?.[ID]?.s === '42' || m.event.c?.[ID]?.['+']?.s === '42'),
        ),
      3000,
      'subscribe_entities add',
    );

    // disabled again by the user: gone from every listing, `r` to subscribers, still registered
    await local.call({ type: 'config/entity_registry/update', entity_id: ID, disabled_by: 'user' });
    await until(() => ha.messages.find((m) => m.type === 'event' && m.event.r?.includes(ID)), 5000, 'removal');
    expect(await v1Ids()).not.toContain(ID);
    expect((await cloud.get(`/api/states/${ID}`, { token })).status).toBe(404);
    expect(await registry()).toMatchObject({ entity_id: ID, disabled_by: 'user' });
  });

  it("shows the devices' via_device_id in the cloud's device registry (as the edge's)", async () => {
    const ha = await haSession(cloud.url, token);
    cleanups.push(() => ha.close());
    const devices = (await ha.call({ type: 'config/device_registry/list' })).result as {
      id: string;
      name: string;
      identifiers: [string, string][];
      via_device_id: string | null;
    }[];
    const bridge = devices.find((d) => d.identifiers.some(([, i]) => i === 'zigbee2mqtt_bridge_0x00'));
    const plug = devices.find((d) => d.name === 'Plug');
    expect(bridge).toMatchObject({ via_device_id: null });
    expect(plug?.via_device_id).toBe(bridge?.id);

    // the bridge removed on the edge: the plug loses its link in the cloud too, as in HA
    const local = edge.registry.findDevice(['zigbee2mqtt_bridge_0x00']);
    expect(edge.registry.removeDevice(local!.id)).toBe(true);
    await until(
      async () => {
        const list = (await ha.call({ type: 'config/device_registry/list' })).result as typeof devices;
        const p = list.find((d) => d.name === 'Plug');
        return p && p.via_device_id === null && !list.some((d) => d.id === bridge?.id);
      },
      5000,
      'link dropped in the cloud',
    );
  });
});
