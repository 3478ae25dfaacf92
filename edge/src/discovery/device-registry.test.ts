import { afterAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { Edge } from '../edge.ts';
import { connect, haSession, waitFor } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

/**
 * device.via_device and device.suggested_area as HA's device registry keeps them: the parent
 * device (created from its identifier when unknown, named when its own config arrives) and the
 * area (created from the name, assigned while the device has none), shown by
 * config/device_registry/list and config/area_registry/list. Real broker, real WebSocket.
 */

let edge: Edge;
let device: MqttClient;
let token: string;

const fixture = useEdge({}, async (started) => {
  edge = started;
  token = edge.tokens.create('devices').token;
  device = await connect(edge, await edge.createMqttCredentials({ username: 'z2m', role: 'integration' }));
});
afterAll(async () => {
  await device?.endAsync();
});

const announce = (topic: string, cfg: Record<string, unknown>) =>
  device.publishAsync(topic, JSON.stringify(cfg), { qos: 1, retain: true });
const sensor = (id: string, dev: Record<string, unknown>) => ({
  name: 'Temperature',
  unique_id: `${id}_temperature`,
  device_class: 'temperature',
  state_topic: `zigbee2mqtt/${id}`,
  value_template: '{{ value_json.temperature }}',
  device: { identifiers: [`zigbee2mqtt_${id}`], ...dev },
});

describe('device registry: via_device and suggested_area', () => {
  it('links a device to its bridge and puts it in its suggested area, as HA does', async () => {
    // zigbee2mqtt: every device names the bridge as via_device before (or without) the bridge's own config
    await announce(
      'homeassistant/sensor/0xa1/temperature/config',
      sensor('0xa1', { name: 'Kitchen sensor', via_device: 'zigbee2mqtt_bridge_0x00124b', suggested_area: 'Kitchen' }),
    );
    const child = await waitFor(() => edge.registry.findDevice(['zigbee2mqtt_0xa1']), 3000, 'child device');
    const bridge = edge.registry.findDevice(['zigbee2mqtt_bridge_0x00124b']);
    expect(bridge).toBeDefined();
    expect(edge.registry.deviceLinks(child.id)).toEqual({ via_device_id: bridge?.id, area_id: 'kitchen' });

    // the bridge's own config names it; another device with the same area name (other case) shares the area
    await announce('homeassistant/binary_sensor/bridge/connection_state/config', {
      name: 'Connection state',
      unique_id: 'bridge_0x00124b_connection_state',
      state_topic: 'zigbee2mqtt/bridge/state',
      device: { identifiers: ['zigbee2mqtt_bridge_0x00124b'], name: 'Zigbee2MQTT Bridge' },
    });
    await waitFor(() => edge.registry.getDevice(bridge?.id as number)?.name === 'Zigbee2MQTT Bridge', 3000, 'named');
    await announce(
      'homeassistant/sensor/0xa2/temperature/config',
      sensor('0xa2', { name: 'Fridge sensor', via_device: 'zigbee2mqtt_bridge_0x00124b', suggested_area: ' kitchen' }),
    );
    const second = await waitFor(() => edge.registry.findDevice(['zigbee2mqtt_0xa2']), 3000, 'second device');
    expect(edge.registry.deviceLinks(second.id)).toEqual({ via_device_id: bridge?.id, area_id: 'kitchen' });

    // a device that has an area keeps it when the suggestion changes (HA only fills an empty area)
    await announce(
      'homeassistant/sensor/0xa1/temperature/config',
      sensor('0xa1', { name: 'Kitchen sensor', via_device: 'zigbee2mqtt_bridge_0x00124b', suggested_area: 'Garage' }),
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(edge.registry.deviceLinks(child.id).area_id).toBe('kitchen');

    const ha = await haSession(edge, token);
    const devices = (await ha.call({ type: 'config/device_registry/list' })).result as Record<string, unknown>[];
    expect(devices.find((d) => d.id === String(child.id))).toMatchObject({
      via_device_id: String(bridge?.id),
      area_id: 'kitchen',
    });
    expect(devices.find((d) => d.id === String(bridge?.id))).toMatchObject({ via_device_id: null, area_id: null });
    expect((await ha.call({ type: 'config/area_registry/list' })).result).toEqual([
      { area_id: 'kitchen', name: 'Kitchen', aliases: [], floor_id: null, icon: null, labels: [], picture: null },
    ]);
    ha.close();
  });

  it('keeps the links across a restart', async () => {
    const child = edge.registry.findDevice(['zigbee2mqtt_0xa1']) as { id: number };
    const before = edge.registry.deviceLinks(child.id);
    edge = await fixture.restart();
    expect(edge.registry.deviceLinks(child.id)).toEqual(before);
    expect(edge.registry.areas.list().map((a) => a.name)).toEqual(['Kitchen']);
    device = await connect(edge, await edge.createMqttCredentials({ username: 'z2m2', role: 'integration' }));
  });
});
