import { describe, expect, it } from 'vitest';
import mqtt, { type MqttClient } from 'mqtt';
import type { StateChangedEvent } from '../bus.ts';
import type { Edge } from '../edge.ts';
import { waitFor } from '../testing/edge.ts';
import { edgeWithDevice, publish, stateWhere } from './fixture.ts';

/**
 * Discovery options whose effect the corpus does not show (it checks states and command payloads):
 * `force_update`, `qos` and `retain` on commands, `availability_mode` any/latest, and which
 * JSON attributes Home Assistant lets a `json_attributes_topic` set. Real Aedes, real mqtt.js.
 */

let edge: Edge;
let device: MqttClient;

edgeWithDevice({ username: 'opts' }, (started) => ({ edge, device } = started));

const pub = (topic: string, payload: unknown, retain = false) => publish(device, topic, payload, retain);
const waitState = (id: string, pred: Parameters<typeof stateWhere>[2]) => stateWhere(edge, id, pred);
const dev = (id: string) => ({ identifiers: [id], name: id });

function stateChanges(entityId: string): StateChangedEvent[] {
  const seen: StateChangedEvent[] = [];
  edge.bus.on('state_changed', (e) => {
    if (e.entity_id === entityId) seen.push(e);
  });
  return seen;
}

describe('MQTT discovery options', () => {
  it('force_update: the same reading again is a state change (new last_changed); without it, nothing happens', async () => {
    // Tasmota's DS18B20 config (frc_upd) next to the same sensor without it
    for (const [id, force] of [
      ['forced', true],
      ['plain', false],
    ] as const) {
      await pub(`homeassistant/sensor/${id}/temp/config`, {
        name: 'Temperature',
        uniq_id: `${id}_temp`,
        stat_t: `tele/${id}/SENSOR`,
        val_tpl: '{{ value_json.DS18B20.Temperature }}',
        dev_cla: 'temperature',
        unit_of_meas: '°C',
        frc_upd: force,
        dev: dev(id),
      });
    }
    const forced = 'sensor.forced_temperature';
    const plain = 'sensor.plain_temperature';
    await waitFor(() => edge.registry.getEntity(forced) && edge.registry.getEntity(plain), 3000, 'both sensors');
    const reading = { DS18B20: { Temperature: 22.4 } };
    await pub('tele/forced/SENSOR', reading);
    await pub('tele/plain/SENSOR', reading);
    const first = await waitState(forced, (s) => s.state === '22.4');
    await waitState(plain, (s) => s.state === '22.4');
    const forcedChanges = stateChanges(forced);
    const plainChanges = stateChanges(plain);
    await new Promise((r) => setTimeout(r, 5)); // a later timestamp
    await pub('tele/forced/SENSOR', reading);
    await pub('tele/plain/SENSOR', reading);
    await waitFor(() => forcedChanges.length === 1, 2000, 'the forced update');
    const again = edge.states.get(forced)!;
    expect(again.state).toBe('22.4');
    expect(String(again.last_updated) > String(first.last_updated)).toBe(true);
    expect(String(again.last_changed) > String(first.last_changed)).toBe(true);
    expect(forcedChanges[0].old_state?.state).toBe('22.4');
    // a later message on the plain sensor's topic shows its repeat was handled (and dropped)
    await pub('tele/plain/SENSOR', { DS18B20: { Temperature: 22.5 } });
    await waitState(plain, (s) => s.state === '22.5');
    expect(plainChanges.map((e) => e.new_state?.state)).toEqual(['22.5']);
  });

  it('qos and retain apply to every command the entity publishes; the defaults are QoS 0, not retained', async () => {
    await pub('homeassistant/switch/retained/relay/config', {
      name: 'Relay',
      unique_id: 'retained_relay',
      command_topic: 'opts/retained/set',
      state_topic: 'opts/retained/state',
      qos: 2,
      retain: true,
      device: dev('retained'),
    });
    await pub('homeassistant/light/plain/light/config', {
      name: 'Light',
      unique_id: 'plain_light',
      command_topic: 'opts/plain/set',
      brightness_command_topic: 'opts/plain/brightness/set',
      device: dev('plain'),
    });
    await waitFor(
      () => edge.registry.getEntity('switch.retained_relay') && edge.registry.getEntity('light.plain_light'),
      3000,
      'switch and light',
    );
    // a second client (a device listening at QoS 2 gets what the edge published with)
    const listener = await mqtt.connectAsync(`mqtt://127.0.0.1:${edge.ports.mqtt}`, {
      ...(await edge.createMqttCredentials({ username: 'listener', role: 'integration' })),
      reconnectPeriod: 0,
    });
    try {
      const got: { topic: string; payload: string; qos: number }[] = [];
      listener.on('message', (topic, payload, packet) =>
        got.push({ topic, payload: String(payload), qos: packet.qos }),
      );
      await listener.subscribeAsync(['opts/retained/set', 'opts/plain/#'], { qos: 2 });
      await edge.callService('switch', 'turn_on', 'switch.retained_relay', {});
      await edge.callService('light', 'turn_on', 'light.plain_light', { brightness: 80 });
      await waitFor(() => got.length === 3, 2000, 'three commands');
      // QoS 2 takes a longer handshake: compare per topic, not in arrival order
      got.sort((a, b) => a.topic.localeCompare(b.topic));
      expect(got).toEqual([
        { topic: 'opts/plain/brightness/set', payload: '80', qos: 0 },
        { topic: 'opts/plain/set', payload: 'ON', qos: 0 },
        { topic: 'opts/retained/set', payload: 'ON', qos: 2 },
      ]);
      expect(String((await edge.broker.retained('opts/retained/set'))?.payload)).toBe('ON');
      expect(await edge.broker.retained('opts/plain/set')).toBeUndefined();
      expect(await edge.broker.retained('opts/plain/brightness/set')).toBeUndefined();
    } finally {
      await listener.endAsync();
    }
  });

  it('availability_mode any: available while one topic says online; latest (the default): the last message decides', async () => {
    const avail = [
      { topic: 'opts/bridge/state', payload_available: 'online', payload_not_available: 'offline' },
      { topic: 'opts/node/LWT', payload_available: 'Online', payload_not_available: 'Offline' },
    ];
    for (const mode of ['any', 'latest'] as const) {
      await pub(`homeassistant/binary_sensor/${mode}/motion/config`, {
        unique_id: `${mode}_motion`,
        state_topic: `opts/${mode}/motion`,
        device_class: 'motion',
        availability: avail,
        ...(mode === 'any' ? { availability_mode: 'any' } : {}),
        device: dev(mode),
      });
    }
    const any = 'binary_sensor.any_motion';
    const latest = 'binary_sensor.latest_motion';
    await waitFor(() => edge.registry.getEntity(any) && edge.registry.getEntity(latest), 3000, 'both sensors');
    await pub('opts/any/motion', 'ON');
    await pub('opts/latest/motion', 'ON');
    await pub('opts/bridge/state', 'online');
    await pub('opts/node/LWT', 'Offline');
    await waitState(latest, (s) => s.state === 'unavailable');
    expect(edge.states.get(any)?.state).toBe('on');
    await pub('opts/bridge/state', 'offline');
    await waitState(any, (s) => s.state === 'unavailable');
    await pub('opts/node/LWT', 'Online');
    await waitState(any, (s) => s.state === 'on');
    await waitState(latest, (s) => s.state === 'on');
    // latest: the bridge going offline after the node came online wins
    await pub('opts/bridge/state', 'offline');
    await waitState(latest, (s) => s.state === 'unavailable');
    expect(edge.states.get(any)?.state).toBe('on');
  });

  it("JSON attributes cannot override what HA blocks (state, icon, unit, the platform's own attributes); the rest show", async () => {
    await pub('homeassistant/sensor/attrs/power/config', {
      name: 'Power',
      unique_id: 'attrs_power',
      state_topic: 'opts/attrs/state',
      value_template: '{{ value_json.power }}',
      json_attributes_topic: 'opts/attrs/state',
      unit_of_measurement: 'W',
      device_class: 'power',
      state_class: 'measurement',
      icon: 'mdi:flash',
      device: dev('attrs'),
    });
    await pub('homeassistant/cover/attrs/blind/config', {
      name: 'Blind',
      unique_id: 'attrs_blind',
      command_topic: 'opts/blind/set',
      position_topic: 'opts/blind/state',
      position_template: '{{ value_json.position }}',
      json_attributes_topic: 'opts/blind/state',
      device: dev('attrs'),
    });
    const power = 'sensor.attrs_power';
    const blind = 'cover.attrs_blind';
    await waitFor(() => edge.registry.getEntity(power) && edge.registry.getEntity(blind), 3000, 'sensor and cover');
    await pub('opts/attrs/state', {
      power: 12,
      voltage: 230,
      state: 'ON',
      icon: 'mdi:x',
      unit_of_measurement: 'kW',
      state_class: 'total',
      friendly_name: 'Hacked',
      available: false,
    });
    const s = await waitState(power, (x) => x.state === '12');
    expect(s.attributes).toEqual({
      friendly_name: 'attrs Power',
      unit_of_measurement: 'W',
      device_class: 'power',
      state_class: 'measurement',
      icon: 'mdi:flash',
      power: 12,
      voltage: 230,
    });
    await pub('opts/blind/state', { position: 40, current_position: 99, current_tilt_position: 5, motor: 'ok' });
    const b = await waitState(blind, (x) => x.attributes.current_position === 40);
    expect(b.attributes).toMatchObject({ position: 40, motor: 'ok' });
    expect(b.attributes).not.toHaveProperty('current_tilt_position');
  });
});
