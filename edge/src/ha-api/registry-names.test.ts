import { afterAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { Edge } from '../edge.ts';
import { connect, haSession, waitFor } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

/**
 * HA's entity registry name and icon reach the state: a user's name replaces the whole
 * friendly_name (not prefixed with the device's name), a user's icon the integration's; null
 * restores the integration's. The state is written again at once (state_changed, subscribe_entities).
 */

let edge: Edge;
let device: MqttClient;
let token: string;

useEdge({}, async (started) => {
  edge = started;
  token = edge.tokens.create('names').token;
  device = await connect(edge, await edge.createMqttCredentials({ username: 'z2m' }));
});
afterAll(async () => {
  await device?.endAsync();
});

const id = 'sensor.plug_power';

describe('registry name and icon in the state', () => {
  it('become friendly_name and icon at once; null restores the integration’s', async () => {
    await device.publishAsync(
      'homeassistant/sensor/0xplug/power/config',
      JSON.stringify({
        name: 'Power',
        unique_id: '0xplug_power',
        state_topic: 'zigbee2mqtt/plug',
        value_template: '{{ value_json.power }}',
        icon: 'mdi:flash',
        device: { identifiers: ['zigbee2mqtt_0xplug'], name: 'Plug' },
      }),
      { qos: 1, retain: true },
    );
    await waitFor(() => edge.registry.getEntity(id), 3000, id);
    await device.publishAsync('zigbee2mqtt/plug', JSON.stringify({ power: 12 }), { qos: 1 });
    await waitFor(() => edge.states.get(id)?.state === '12' || undefined, 3000, 'state');
    expect(edge.states.get(id)?.attributes).toMatchObject({ friendly_name: 'Plug Power', icon: 'mdi:flash' });

    const ha = await haSession(edge, token);
    await ha.call({ type: 'subscribe_events', event_type: 'state_changed' });
    await ha.call({ type: 'subscribe_entities', entity_ids: [id] });
    const lastChanged = edge.states.get(id)?.last_changed;

    const renamed = await ha.call({
      type: 'config/entity_registry/update',
      entity_id: id,
      name: 'Desk',
      icon: 'mdi:desk',
    });
    expect(renamed.result.entity_entry).toMatchObject({ entity_id: id, name: 'Desk', icon: 'mdi:desk' });
    const changed = await waitFor(
      () => ha.messages.find((m) => m.event?.event_type === 'state_changed' && m.event.data.entity_id === id),
      3000,
      'state_changed',
    );
    expect(changed.event.data.old_state.attributes).toMatchObject({ friendly_name: 'Plug Power', icon: 'mdi:flash' });
    expect(changed.event.data.new_state).toMatchObject({
      state: '12',
      attributes: { friendly_name: 'Desk', icon: 'mdi:desk' },
    });
    const diff = await waitFor(() => ha.messages.find((m) => m.event?.c?.[id]), 3000, 'subscribe_entities change');
    expect(diff.event.c[id]['+'].a).toMatchObject({ friendly_name: 'Desk', icon: 'mdi:desk' });
    const state = (await ha.call({ type: 'get_states' })).result.find((s: any) => s.entity_id === id);
    expect(state.attributes).toMatchObject({ friendly_name: 'Desk', icon: 'mdi:desk' });
    expect(state.last_changed).toBe(lastChanged);

    // the integration's next state keeps the user's name and icon
    await device.publishAsync('zigbee2mqtt/plug', JSON.stringify({ power: 13 }), { qos: 1 });
    await waitFor(() => edge.states.get(id)?.state === '13' || undefined, 3000, 'next state');
    expect(edge.states.get(id)?.attributes).toMatchObject({ friendly_name: 'Desk', icon: 'mdi:desk' });

    await ha.call({ type: 'config/entity_registry/update', entity_id: id, name: null, icon: null });
    expect(edge.states.get(id)?.attributes).toMatchObject({ friendly_name: 'Plug Power', icon: 'mdi:flash' });
    await waitFor(
      () =>
        ha.messages.find(
          (m) =>
            m.event?.event_type === 'state_changed' &&
            m.event.data.new_state?.attributes.friendly_name === 'Plug Power',
        ),
      3000,
      'restored',
    );
    ha.close();
  });

  it('new_entity_id renames: the state moves, history follows, MQTT keeps feeding it; bad ids refused', async () => {
    const ha = await haSession(edge, token);
    await ha.call({ type: 'subscribe_events', event_type: 'state_changed' });
    const renamed = await ha.call({
      type: 'config/entity_registry/update',
      entity_id: id,
      new_entity_id: 'sensor.desk',
    });
    expect(renamed.result.entity_entry).toMatchObject({ entity_id: 'sensor.desk', unique_id: '0xplug_power' });
    const events = () => ha.messages.filter((m) => m.event?.event_type === 'state_changed').map((m) => m.event.data);
    await waitFor(() => events().find((d) => d.entity_id === 'sensor.desk'), 3000, 'added');
    expect(events().find((d) => d.entity_id === id)).toMatchObject({ new_state: null, old_state: { state: '13' } });
    expect(events().find((d) => d.entity_id === 'sensor.desk')).toMatchObject({
      old_state: null,
      new_state: { state: '13' },
    });
    expect(edge.states.get(id)).toBeUndefined();
    expect(edge.registry.getEntity(id)).toBeUndefined();

    await device.publishAsync('zigbee2mqtt/plug', JSON.stringify({ power: 14 }), { qos: 1 });
    await waitFor(() => edge.states.get('sensor.desk')?.state === '14' || undefined, 3000, 'renamed entity fed');
    edge.recorder!.flush();
    const history = await ha.call({
      type: 'history/history_during_period',
      start_time: new Date(Date.now() - 3_600_000).toISOString(),
      entity_ids: ['sensor.desk'],
      minimal_response: true,
    });
    const states = history.result['sensor.desk'].map((s: any) => s.s ?? s.state);
    expect(states).toEqual(expect.arrayContaining(['12', '13', '14']));

    for (const [new_entity_id, message] of [
      ['light.desk', 'New entity ID should be same domain'],
      ['sensor.Desk!', 'Invalid entity ID'],
    ]) {
      const bad = await ha.call({ type: 'config/entity_registry/update', entity_id: 'sensor.desk', new_entity_id });
      expect(bad, new_entity_id).toMatchObject({ success: false, error: { code: 'invalid_format', message } });
    }
    await device.publishAsync(
      'homeassistant/sensor/0xplug/other/config',
      JSON.stringify({ name: 'Other', unique_id: '0xplug_other', state_topic: 'x/y' }),
      { qos: 1 },
    );
    await waitFor(() => edge.registry.getEntity('sensor.other'), 3000, 'other');
    expect(
      await ha.call({ type: 'config/entity_registry/update', entity_id: 'sensor.desk', new_entity_id: 'sensor.other' }),
    ).toMatchObject({
      success: false,
      error: { code: 'invalid_format', message: 'Entity with this ID is already registered' },
    });
    ha.close();
  });
});
