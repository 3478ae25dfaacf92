import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import { connect, haSession } from '@smarthome/edge/testing/edge';
import type { Edge } from '@smarthome/edge/edge';
import { pairEdge, until, viewOnlyMember, type Cleanups } from './support.ts';

/**
 * HA's registries through the cloud, as on the edge: a zigbee2mqtt diagnostic sensor of a device
 * with a suggested area shows its entity_category and its device's area in the cloud's
 * registries, the edge's areas are listed (ids prefixed with the edge: every edge has its own
 * "living_room"), and config/entity_registry/update from the cloud is relayed to the edge, whose
 * change comes back to the mirror. Another tenant cannot see or change it; a view-only share may
 * not change it. A real edge paired over the tunnel, a real broker, a real cloud.
 */

const ID = 'sensor.plug_linkquality';

const cleanups: Cleanups = [];
let cloud: TestCloud;
let token: string;
let edge: Edge;
let edgeId: number;
let device: MqttClient;

beforeAll(async () => {
  cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  token = (await cloud.user()).token;
  ({ edge, id: edgeId } = await pairEdge(cloud, cleanups, token, 'home'));
  device = await connect(edge, await edge.createMqttCredentials({ role: 'device' }));
  cleanups.push(() => device.endAsync());
  await device.publishAsync('zigbee2mqtt/plug', JSON.stringify({ linkquality: 42 }), { qos: 1, retain: true });
  await device.publishAsync(
    'homeassistant/sensor/0xplug/linkquality/config',
    JSON.stringify({
      name: 'Linkquality',
      unique_id: '0xplug_linkquality',
      state_topic: 'zigbee2mqtt/plug',
      value_template: '{{ value_json.linkquality }}',
      entity_category: 'diagnostic',
      device: { identifiers: ['zigbee2mqtt_0xplug'], name: 'Plug', suggested_area: 'Living Room' },
    }),
    { qos: 1, retain: true },
  );
}, 60_000);
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
});

type Entry = Record<string, unknown>;

describe('HA registries through the cloud', () => {
  it('shows entity_category and the edge’s areas; an update is relayed to the edge and mirrored back', async () => {
    const ha = await haSession(cloud.url, token);
    cleanups.push(() => ha.close());
    const entry = async () =>
      ((await ha.call({ type: 'config/entity_registry/list' })).result as Entry[]).find((e) => e.entity_id === ID);
    await until(async () => (await entry())?.entity_category === 'diagnostic', 10_000, 'entity mirrored');
    const record = edge.registry.getEntity(ID)!;
    expect(record.entity_category).toBe('diagnostic');
    expect(await entry()).toMatchObject({
      id: `${edgeId}_${record.id}`,
      device_id: `${edgeId}_${record.device_registry_id}`,
      entity_category: 'diagnostic',
      area_id: null,
      name: null,
      original_name: 'Plug Linkquality',
      icon: null,
      hidden_by: null,
    });
    // not a state attribute in HA
    expect((await cloud.get(`/api/states/${ID}`, { token })).body.attributes).not.toHaveProperty('entity_category');
    const devices = (await ha.call({ type: 'config/device_registry/list' })).result as Entry[];
    expect(devices.find((d) => d.id === `${edgeId}_${record.device_registry_id}`)?.area_id).toBe(
      `${edgeId}_living_room`,
    );

    // an area made on the edge after the snapshot reaches the cloud as a delta
    edge.registry.areas.getOrCreate('Kitchen');
    const areas = async () => (await ha.call({ type: 'config/area_registry/list' })).result as Entry[];
    await until(async () => (await areas()).length === 2, 10_000, 'kitchen mirrored');
    expect((await areas()).map((a) => [a.area_id, a.name])).toEqual([
      [`${edgeId}_kitchen`, 'Kitchen'],
      [`${edgeId}_living_room`, 'Living Room'],
    ]);

    const updated = await ha.call({
      type: 'config/entity_registry/update',
      entity_id: ID,
      name: 'Plug signal',
      icon: 'mdi:wifi',
      area_id: `${edgeId}_kitchen`,
      hidden_by: 'user',
    });
    const want = {
      id: `${edgeId}_${record.id}`,
      entity_id: ID,
      name: 'Plug signal',
      original_name: 'Plug Linkquality',
      icon: 'mdi:wifi',
      area_id: `${edgeId}_kitchen`,
      hidden_by: 'user',
      entity_category: 'diagnostic',
      disabled_by: null,
    };
    expect(updated).toMatchObject({ success: true, result: { entity_entry: want } });
    expect(edge.registry.getEntity(ID)).toMatchObject({
      name_by_user: 'Plug signal',
      icon: 'mdi:wifi',
      area_id: 'kitchen',
      hidden_by: 'user',
    });
    await until(async () => (await entry())?.name === 'Plug signal', 10_000, 'update mirrored');
    expect(await entry()).toMatchObject(want);
    expect((await ha.call({ type: 'config/entity_registry/get', entity_id: ID })).result).toMatchObject(want);
    // the user's name and icon reach the state, in the cloud's mirror too
    const cloudState = async () => (await cloud.get(`/api/states/${ID}`, { token })).body.attributes as Entry;
    await until(async () => (await cloudState()).friendly_name === 'Plug signal', 10_000, 'state mirrored');
    expect(await cloudState()).toMatchObject({ friendly_name: 'Plug signal', icon: 'mdi:wifi' });

    // null clears; an area of no edge of the caller, or the edge's bare id, is not found
    const cleared = await ha.call({ type: 'config/entity_registry/update', entity_id: ID, area_id: null });
    expect((cleared.result as { entity_entry: Entry }).entity_entry.area_id).toBeNull();
    await ha.call({ type: 'config/entity_registry/update', entity_id: ID, name: null, icon: null });
    await until(async () => (await cloudState()).friendly_name === 'Plug Linkquality', 10_000, 'name restored');
    expect(await cloudState()).not.toHaveProperty('icon');
    await ha.call({ type: 'config/entity_registry/update', entity_id: ID, name: 'Plug signal', icon: 'mdi:wifi' });
    for (const area_id of ['kitchen', `${edgeId}_cellar`, `${edgeId + 1}_kitchen`]) {
      const bad = await ha.call({ type: 'config/entity_registry/update', entity_id: ID, area_id });
      expect(bad, area_id).toMatchObject({ success: false, error: { code: 'not_found' } });
    }
    const unknown = await ha.call({ type: 'config/entity_registry/update', entity_id: ID, aliases: ['x'] });
    expect(unknown).toMatchObject({ success: false, error: { code: 'invalid_format' } });

    // new_entity_id: renamed on the edge, the mirror drops the old id and adds the new one
    const NEW = 'sensor.plug_signal';
    const renamed = await ha.call({ type: 'config/entity_registry/update', entity_id: ID, new_entity_id: NEW });
    expect(renamed).toMatchObject({ success: true, result: { entity_entry: { entity_id: NEW } } });
    await until(async () => (await cloud.get(`/api/states/${NEW}`, { token })).status === 200, 10_000, 'new id');
    expect((await cloud.get(`/api/states/${NEW}`, { token })).body).toMatchObject({ state: '42' });
    expect((await cloud.get(`/api/states/${ID}`, { token })).status).toBe(404);
    expect(await entry()).toBeUndefined();
    const other = await ha.call({ type: 'config/entity_registry/update', entity_id: NEW, new_entity_id: 'light.x' });
    expect(other).toMatchObject({ success: false, error: { message: 'New entity ID should be same domain' } });
    // back, for the next test
    await ha.call({ type: 'config/entity_registry/update', entity_id: NEW, new_entity_id: ID });
    await until(async () => (await cloud.get(`/api/states/${ID}`, { token })).status === 200, 10_000, 'old id back');
  });

  it('another tenant cannot see or change the entity; a view-only share may not change it', async () => {
    const stranger = await haSession(cloud.url, (await cloud.user()).token);
    cleanups.push(() => stranger.close());
    expect(await stranger.call({ type: 'config/entity_registry/update', entity_id: ID, name: 'x' })).toMatchObject({
      success: false,
      error: { code: 'not_found' },
    });
    expect(await stranger.call({ type: 'config/entity_registry/get', entity_id: ID })).toMatchObject({
      success: false,
      error: { code: 'not_found' },
    });
    expect((await stranger.call({ type: 'config/area_registry/list' })).result).toEqual([]);

    const member = await viewOnlyMember(cloud, token, ID);
    const viewer = await haSession(cloud.url, member.token);
    cleanups.push(() => viewer.close());
    expect(await viewer.call({ type: 'config/entity_registry/update', entity_id: ID, name: 'x' })).toMatchObject({
      success: false,
      error: { code: 'unauthorized' },
    });
    expect(edge.registry.getEntity(ID)?.name_by_user).toBe('Plug signal');
  });
});
