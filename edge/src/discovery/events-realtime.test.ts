import { beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { Edge } from '../edge.ts';
import { collector, haSession, waitFor } from '../testing/edge.ts';
import { edgeWithDevice, publish } from './fixture.ts';

/**
 * #18: "events must reach automations and the realtime APIs". An MQTT event entity (ESPHome's
 * doorbell) drives a `platform: state` automation as HA users write it (the event type read from
 * the new state's attributes), and both its state changes and a remote's device-trigger presses
 * reach a Home Assistant WebSocket client (`subscribe_events`, `subscribe_entities`).
 * An event fired through the edge's own HA API reaches automations as the cloud's does.
 * Real Aedes, real mqtt.js, real WebSocket.
 */

let edge: Edge;
let device: MqttClient;
let token: string;

edgeWithDevice({ username: 'esphome' }, (started) => ({ edge, device } = started));
beforeAll(() => {
  token = edge.tokens.create('events').token;
});

type Create = Parameters<Edge['features']['automations']['create']>[0];
const DOORBELL = 'event.porch_doorbell';

describe('MQTT events reach automations and the realtime APIs', () => {
  it('an event entity drives a state automation and reaches subscribe_events / subscribe_entities; so do device-trigger presses', async () => {
    // ESPHome's event config (mqtt_event.cpp) and a zigbee2mqtt remote's device trigger
    await publish(
      device,
      'homeassistant/event/porch/doorbell/config',
      {
        name: 'Doorbell',
        dev_cla: 'doorbell',
        evt_typ: ['press', 'double_press'],
        stat_t: 'porch/event/doorbell/state',
        uniq_id: 'porch_doorbell',
        dev: { ids: 'porch', name: 'porch', sw: 'esphome v2024.6.1', mdl: 'esp32dev', mf: 'espressif' },
      },
      true,
    );
    await publish(
      device,
      'homeassistant/switch/porch/light/config',
      { name: 'Light', uniq_id: 'porch_light', cmd_t: 'porch/switch/light/command', dev: { ids: 'porch' } },
      true,
    );
    await publish(
      device,
      'homeassistant/device_automation/0xremote/action_on/config',
      {
        automation_type: 'trigger',
        type: 'action',
        subtype: 'on',
        payload: 'on',
        topic: 'zigbee2mqtt/remote/action',
        device: { identifiers: ['zigbee2mqtt_0xremote'], name: 'remote' },
      },
      true,
    );
    await waitFor(
      () => edge.states.get(DOORBELL) && edge.registry.getEntity('switch.porch_light'),
      3000,
      'doorbell and light',
    );
    await waitFor(() => edge.discovery.triggers.list().length === 1, 3000, 'remote trigger');

    await edge.features.automations.create({
      alias: 'doorbell press → porch light',
      mode: 'queued',
      enabled: true,
      trigger: [{ platform: 'state', entity_id: DOORBELL }],
      condition: [{ condition: 'template', value_template: "{{ trigger.to_state.attributes.event_type == 'press' }}" }],
      action: [{ service: 'switch.turn_on', target: { entity_id: 'switch.porch_light' } }],
    } as Create);
    const inbox = await collector(device, 'porch/switch/light/command');

    const ha = await haSession(edge, token);
    await ha.call({ type: 'subscribe_events', event_type: 'state_changed' });
    await ha.call({ type: 'subscribe_events', event_type: 'mqtt_device_trigger' });
    await ha.call({ type: 'subscribe_entities', entity_ids: [DOORBELL] });
    await waitFor(() => ha.messages.find((m) => m.type === 'event' && m.event.a?.[DOORBELL]), 3000, 'initial');

    // a double press does not run the automation; a press does
    await device.publishAsync('porch/event/doorbell/state', JSON.stringify({ event_type: 'double_press' }), { qos: 1 });
    await waitFor(() => edge.states.get(DOORBELL)?.attributes.event_type === 'double_press', 2000, 'double press');
    await device.publishAsync('porch/event/doorbell/state', JSON.stringify({ event_type: 'press' }), { qos: 1 });
    expect(await inbox.next(1)).toEqual([{ topic: 'porch/switch/light/command', payload: 'ON' }]);
    await device.publishAsync('zigbee2mqtt/remote/action', 'on', { qos: 1 });

    const changes = await waitFor(
      () => {
        const c = ha.messages.filter(
          (m) => m.type === 'event' && m.event.event_type === 'state_changed' && m.event.data.entity_id === DOORBELL,
        );
        return c.length === 2 ? c : undefined;
      },
      3000,
      'two doorbell state_changed events',
    );
    expect(changes.map((m) => m.event.data.new_state.attributes.event_type)).toEqual(['double_press', 'press']);
    expect(changes[1].event.data.new_state.state).toMatch(/^\d{4}-\d\d-\d\dT/);
    // subscribe_entities: the compressed changes carry the event type
    const diffs = ha.messages.filter((m) => m.type === 'event' && m.event.c?.[DOORBELL]);
    expect(diffs.map((m) => m.event.c[DOORBELL]['+'].a?.event_type)).toEqual(['double_press', 'press']);

    const press = await waitFor(
      () => ha.messages.find((m) => m.type === 'event' && m.event.event_type === 'mqtt_device_trigger'),
      3000,
      'the remote press',
    );
    expect(press.event.data).toMatchObject({
      domain: 'mqtt',
      type: 'action',
      subtype: 'on',
      payload: 'on',
      topic: 'zigbee2mqtt/remote/action',
    });
    ha.close();
  });

  it("fire_event on the edge's WebSocket runs an event automation and reaches another client's subscribe_events", async () => {
    await edge.features.automations.create({
      alias: 'custom event → porch light',
      mode: 'queued',
      enabled: true,
      trigger: [{ platform: 'event', event_type: 'porch_visitor', event_data: { who: 'courier' } }],
      condition: [],
      action: [{ service: 'switch.turn_on', target: { entity_id: 'switch.porch_light' } }],
    } as Create);
    const inbox = await collector(device, 'porch/switch/light/command');
    const sender = await haSession(edge, token);
    const watcher = await haSession(edge, token);
    await watcher.call({ type: 'subscribe_events', event_type: 'porch_visitor' });
    await sender.call({ type: 'fire_event', event_type: 'porch_visitor', event_data: { who: 'courier' } });
    expect(await inbox.next(1)).toEqual([{ topic: 'porch/switch/light/command', payload: 'ON' }]);
    const seen = await waitFor(
      () => watcher.messages.find((m) => m.type === 'event' && m.event.event_type === 'porch_visitor'),
      3000,
      'the fired event',
    );
    expect(seen.event).toMatchObject({ data: { who: 'courier' }, origin: 'REMOTE' });
    sender.close();
    watcher.close();
  });
});
