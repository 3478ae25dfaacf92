import { describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { ws } from '@smarthome/protocol';
import type { Edge } from '../edge.ts';
import { collector, waitFor } from '../testing/edge.ts';
import { edgeWithDevice } from './fixture.ts';

/** A zigbee2mqtt remote's device triggers drive an automation (`platform: device`) and reach the bus. */

let edge: Edge;
let device: MqttClient;
const remote = {
  identifiers: ['zigbee2mqtt_0x90fd9ffffedf1266'],
  name: 'Remote',
  manufacturer: 'IKEA',
  model: 'TRADFRI remote control',
};
const trigger = (subtype: string) => ({
  automation_type: 'trigger',
  type: 'action',
  subtype,
  payload: subtype,
  topic: 'zigbee2mqtt/Remote/action',
  device: remote,
});
type Create = Parameters<Edge['features']['automations']['create']>[0];

edgeWithDevice({ username: 'z2m' }, (started) => ({ edge, device } = started));

describe('MQTT device triggers', () => {
  it('a remote press runs a platform: device automation; another button does not', async () => {
    await device.publishAsync(
      'homeassistant/device_automation/0x90fd9ffffedf1266/action_on/config',
      JSON.stringify(trigger('on')),
      { retain: true, qos: 1 },
    );
    await device.publishAsync(
      'homeassistant/device_automation/0x90fd9ffffedf1266/action_off/config',
      JSON.stringify(trigger('off')),
      { retain: true, qos: 1 },
    );
    await device.publishAsync(
      'homeassistant/switch/0x00/switch/config',
      JSON.stringify({ name: 'Lamp', unique_id: 'lamp', command_topic: 'zigbee2mqtt/Lamp/set' }),
      { retain: true, qos: 1 },
    );
    await waitFor(
      () => edge.discovery.triggers.list().length === 2 && edge.registry.getEntity('switch.lamp'),
      3000,
      'triggers and lamp',
    );
    const dev = edge.registry.findDevice(remote.identifiers);
    expect(dev).toMatchObject({ name: 'Remote', manufacturer: 'IKEA' });
    // a device with only triggers has no entities, and is still registered
    expect(edge.registry.entitiesOfDevice(dev!.id)).toEqual([]);

    const automation = await edge.features.automations.create({
      alias: 'remote on → lamp',
      mode: 'queued',
      enabled: true,
      condition: [],
      trigger: [
        {
          platform: 'device',
          domain: 'mqtt',
          device_id: String(dev!.id),
          type: 'action',
          subtype: 'on',
          discovery_id: '0x90fd9ffffedf1266 action_on',
        },
      ],
      action: [{ service: 'switch.turn_on', target: { entity_id: 'switch.lamp' } }],
    } as Create);
    const events: ws.BusEvent[] = [];
    edge.bus.on('event', (e) => {
      events.push(e.event);
    });
    const inbox = await collector(device, 'zigbee2mqtt/Lamp/set');

    await device.publishAsync('zigbee2mqtt/Remote/action', 'off', { qos: 1 });
    await waitFor(() => events.length === 1, 2000, 'off event');
    await device.publishAsync('zigbee2mqtt/Remote/action', 'on', { qos: 1 });
    expect(await inbox.next(1)).toEqual([{ topic: 'zigbee2mqtt/Lamp/set', payload: 'ON' }]);
    const traces = await waitFor(
      () => {
        const t = edge.features.automations.traces(automation.id).filter((x) => x.state === 'finished');
        return t.length ? t : undefined;
      },
      3000,
      'trace',
    );
    expect(traces).toHaveLength(1);
    // as HA: a device trigger is an mqtt trigger underneath, so trigger.platform is "mqtt"
    expect(traces[0].trigger).toEqual({
      id: '0',
      idx: '0',
      platform: 'mqtt',
      topic: 'zigbee2mqtt/Remote/action',
      payload: 'on',
      qos: 0,
      description: 'mqtt topic zigbee2mqtt/Remote/action',
      domain: 'mqtt',
      device_id: String(dev!.id),
      type: 'action',
      subtype: 'on',
      discovery_id: '0x90fd9ffffedf1266 action_on',
    });
    // the realtime APIs see the presses as bus events
    expect(events.filter((e) => e.event_type === 'mqtt_device_trigger').map((e) => e.data)).toEqual([
      {
        domain: 'mqtt',
        device_id: String(dev!.id),
        discovery_id: '0x90fd9ffffedf1266 action_off',
        type: 'action',
        subtype: 'off',
        topic: 'zigbee2mqtt/Remote/action',
        payload: 'off',
      },
      {
        domain: 'mqtt',
        device_id: String(dev!.id),
        discovery_id: '0x90fd9ffffedf1266 action_on',
        type: 'action',
        subtype: 'on',
        topic: 'zigbee2mqtt/Remote/action',
        payload: 'on',
      },
    ]);
  });

  it('removing the trigger configs removes the triggers and the device they kept', async () => {
    const dev = edge.registry.findDevice(remote.identifiers)!;
    await device.publishAsync('homeassistant/device_automation/0x90fd9ffffedf1266/action_on/config', '', {
      retain: true,
      qos: 1,
    });
    await waitFor(() => edge.discovery.triggers.list().length === 1, 2000, 'one trigger left');
    expect(edge.registry.getDevice(dev.id)).toBeDefined();
    await device.publishAsync('homeassistant/device_automation/0x90fd9ffffedf1266/action_off/config', '', {
      retain: true,
      qos: 1,
    });
    await waitFor(() => edge.registry.getDevice(dev.id) === undefined, 2000, 'device removed');
    expect(edge.discovery.triggers.list()).toEqual([]);
  });

  it('refuses a device trigger of another domain, and a config without a device', async () => {
    await expect(
      edge.features.automations.create({
        alias: 'zha',
        mode: 'single',
        enabled: true,
        condition: [],
        action: [],
        trigger: [{ platform: 'device', domain: 'zha', device_id: '1', type: 'remote_button_short_press' }],
      } as unknown as Create),
    ).rejects.toThrow();
    await device.publishAsync(
      'homeassistant/device_automation/nodev/action/config',
      JSON.stringify({ automation_type: 'trigger', type: 'action', subtype: 'x', topic: 't' }),
      { qos: 1 },
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(edge.discovery.triggers.list()).toEqual([]);
  });
});
