import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { Edge } from '../edge.ts';
import { connect, startEdge, tempDir, waitFor } from '../testing/edge.ts';
import { edgeWithDevice, publish, stateWhere } from './fixture.ts';

let edge: Edge;
let device: MqttClient;

edgeWithDevice({ username: 'dev1' }, (started) => ({ edge, device } = started));

const pub = (topic: string, payload: unknown, retain = true) => publish(device, topic, payload, retain);
const state = (id: string) => edge.states.get(id);
const waitState = (id: string, pred: Parameters<typeof stateWhere>[2]) => stateWhere(edge, id, pred);

describe('MQTT discovery', () => {
  it('creates a sensor with abbreviations, device block, unit and value_template', async () => {
    await pub('homeassistant/sensor/kitchen/temp/config', {
      name: 'Temperature',
      uniq_id: 'kitchen-temp',
      stat_t: 'kitchen/sensor',
      unit_of_meas: '°C',
      dev_cla: 'temperature',
      val_tpl: '{{ value_json.temperature }}',
      json_attr_t: 'kitchen/sensor',
      json_attr_tpl: '{{ value_json.extra | tojson }}',
      dev: { ids: ['kitchen-1'], name: 'Kitchen', mf: 'Acme', mdl: 'T1000', sw: '1.2' },
    });
    await waitFor(() => edge.registry.getEntity('sensor.kitchen_temperature'), 3000, 'entity');
    const entity = edge.registry.getEntity('sensor.kitchen_temperature')!;
    expect(entity).toMatchObject({
      domain: 'sensor',
      platform: 'mqtt',
      unique_id: 'kitchen-temp',
      name: 'Kitchen Temperature',
    });
    const dev = edge.registry.getDevice(entity.device_registry_id!)!;
    expect(dev).toMatchObject({
      name: 'Kitchen',
      manufacturer: 'Acme',
      model: 'T1000',
      sw_version: '1.2',
      identifiers: ['kitchen-1'],
      user_id: null,
    });
    expect(entity.config_entry_id).toBe(dev.config_entry_id);
    expect(edge.registry.getConfigEntry(entity.config_entry_id!)?.domain).toBe('mqtt');
    expect(state('sensor.kitchen_temperature')).toMatchObject({
      state: null,
      attributes: { unit_of_measurement: '°C', device_class: 'temperature' },
    });

    await pub('kitchen/sensor', { temperature: 21.5, extra: { battery: 97, linkquality: 120 } }, false);
    const s = await waitState('sensor.kitchen_temperature', (x) => x.state === '21.5');
    expect(s.attributes).toEqual({
      friendly_name: 'Kitchen Temperature',
      unit_of_measurement: '°C',
      device_class: 'temperature',
      battery: 97,
      linkquality: 120,
    });
    expect(s.last_changed).toBeTruthy();
  });

  it('creates a binary_sensor and maps ON/OFF', async () => {
    await pub('homeassistant/binary_sensor/hall_motion/config', {
      name: 'Hall motion',
      stat_t: 'hall/motion',
      dev_cla: 'motion',
      uniq_id: 'hall-m',
    });
    await waitFor(() => edge.registry.getEntity('binary_sensor.hall_motion'));
    await pub('hall/motion', 'ON', false);
    await waitState('binary_sensor.hall_motion', (s) => s.state === 'on');
    await pub('hall/motion', 'OFF', false);
    const s = await waitState('binary_sensor.hall_motion', (x) => x.state === 'off');
    expect(s.attributes.device_class).toBe('motion');
  });

  it('creates a default-schema light with brightness, color temp and rgb state topics (~ base topic)', async () => {
    await pub('homeassistant/light/lamp1/config', {
      '~': 'home/lamp1',
      name: 'Lamp',
      uniq_id: 'lamp1',
      cmd_t: '~/set',
      stat_t: '~/state',
      bri_cmd_t: '~/bri/set',
      bri_stat_t: '~/bri',
      bri_scl: 100,
      clr_temp_cmd_t: '~/ct/set',
      clr_temp_stat_t: '~/ct',
      rgb_cmd_t: '~/rgb/set',
      rgb_stat_t: '~/rgb',
    });
    await waitFor(() => edge.registry.getEntity('light.lamp'));
    expect(state('light.lamp')!.attributes.supported_color_modes).toEqual(['color_temp', 'rgb']);
    await pub('home/lamp1/state', 'ON', false);
    await pub('home/lamp1/bri', '50', false);
    await pub('home/lamp1/rgb', '255,10,0', false);
    const s = await waitState('light.lamp', (x) => x.state === 'on' && Array.isArray(x.attributes.rgb_color));
    expect(s.attributes).toMatchObject({ brightness: 128, rgb_color: [255, 10, 0], color_mode: 'rgb' });
    await pub('home/lamp1/ct', '300', false);
    await waitState('light.lamp', (x) => x.attributes.color_temp === 300 && x.attributes.color_mode === 'color_temp');
  });

  it('creates a JSON-schema light and reads its JSON state', async () => {
    await pub('homeassistant/light/zb/strip/config', {
      name: 'Strip',
      uniq_id: 'strip',
      schema: 'json',
      cmd_t: 'zigbee2mqtt/strip/set',
      stat_t: 'zigbee2mqtt/strip',
      brightness: true,
      sup_clrm: ['rgb'],
    });
    await waitFor(() => edge.registry.getEntity('light.strip'));
    await pub(
      'zigbee2mqtt/strip',
      { state: 'ON', brightness: 200, color: { r: 1, g: 2, b: 3 }, color_mode: 'rgb' },
      false,
    );
    const s = await waitState('light.strip', (x) => x.state === 'on');
    expect(s.attributes).toMatchObject({
      brightness: 200,
      rgb_color: [1, 2, 3],
      color_mode: 'rgb',
      supported_color_modes: ['rgb'],
    });
  });

  it('creates switch, cover, lock, climate, fan, button, number and select entities with their states', async () => {
    await pub('homeassistant/switch/plug/config', {
      name: 'Plug',
      uniq_id: 'plug',
      cmd_t: 'plug/set',
      stat_t: 'plug/state',
    });
    await pub('homeassistant/cover/garage/config', {
      name: 'Garage',
      uniq_id: 'garage',
      cmd_t: 'garage/set',
      stat_t: 'garage/state',
      pos_t: 'garage/pos',
      set_pos_t: 'garage/pos/set',
      dev_cla: 'garage',
    });
    await pub('homeassistant/lock/front/config', {
      name: 'Front door',
      uniq_id: 'front',
      cmd_t: 'front/set',
      stat_t: 'front/state',
    });
    await pub('homeassistant/climate/thermo/config', {
      name: 'Thermostat',
      uniq_id: 'thermo',
      mode_cmd_t: 'thermo/mode/set',
      mode_stat_t: 'thermo/mode',
      temp_cmd_t: 'thermo/temp/set',
      temp_stat_t: 'thermo/temp',
      curr_temp_t: 'thermo/current',
      curr_temp_tpl: '{{ value_json.t }}',
      modes: ['off', 'heat', 'cool'],
      min_temp: 10,
      max_temp: 30,
    });
    await pub('homeassistant/fan/ceiling/config', {
      name: 'Ceiling fan',
      uniq_id: 'ceiling',
      cmd_t: 'fan/set',
      stat_t: 'fan/state',
      pct_cmd_t: 'fan/pct/set',
      pct_stat_t: 'fan/pct',
      pr_mode_cmd_t: 'fan/preset/set',
      pr_modes: ['eco', 'boost'],
    });
    await pub('homeassistant/button/reboot/config', { name: 'Reboot', uniq_id: 'reboot', cmd_t: 'router/reboot' });
    await pub('homeassistant/number/volume/config', {
      name: 'Volume',
      uniq_id: 'volume',
      cmd_t: 'speaker/volume/set',
      stat_t: 'speaker/volume',
      min: 0,
      max: 50,
      step: 5,
    });
    await pub('homeassistant/select/mode/config', {
      name: 'Washer mode',
      uniq_id: 'washer',
      cmd_t: 'washer/mode/set',
      stat_t: 'washer/mode',
      ops: ['eco', 'quick', 'cotton'],
    });
    await waitFor(() => edge.registry.getEntity('select.washer_mode'), 3000, 'all entities');
    for (const id of [
      'switch.plug',
      'cover.garage',
      'lock.front_door',
      'climate.thermostat',
      'fan.ceiling_fan',
      'button.reboot',
      'number.volume',
    ]) {
      await waitFor(() => edge.registry.getEntity(id), 3000, id);
    }

    await pub('plug/state', 'ON', false);
    await pub('garage/pos', '40', false);
    await pub('garage/state', 'opening', false);
    await pub('front/state', 'LOCKED', false);
    await pub('thermo/mode', 'heat', false);
    await pub('thermo/temp', '21.5', false);
    await pub('thermo/current', '{"t": 19.25}', false);
    await pub('fan/state', 'ON', false);
    await pub('fan/pct', '66', false);
    await pub('speaker/volume', '15', false);
    await pub('washer/mode', 'quick', false);
    await pub('washer/mode', 'not-an-option', false);

    await waitState('switch.plug', (s) => s.state === 'on');
    expect(await waitState('cover.garage', (s) => s.state === 'opening')).toMatchObject({
      attributes: { current_position: 40, device_class: 'garage' },
    });
    await waitState('lock.front_door', (s) => s.state === 'locked');
    const climate = await waitState(
      'climate.thermostat',
      (s) => s.state === 'heat' && s.attributes.current_temperature === 19.25,
    );
    expect(climate.attributes).toMatchObject({
      temperature: 21.5,
      hvac_modes: ['off', 'heat', 'cool'],
      min_temp: 10,
      max_temp: 30,
    });
    expect(await waitState('fan.ceiling_fan', (s) => s.state === 'on')).toMatchObject({
      attributes: { percentage: 66, preset_modes: ['eco', 'boost'] },
    });
    expect(await waitState('number.volume', (s) => s.state === '15')).toMatchObject({
      attributes: { min: 0, max: 50, step: 5 },
    });
    expect(await waitState('select.washer_mode', (s) => s.state === 'quick')).toMatchObject({
      attributes: { options: ['eco', 'quick', 'cotton'] },
    });
    expect(state('button.reboot')!.state).toBeNull();
  });

  it('marks entities unavailable from their availability topic and back', async () => {
    await pub('homeassistant/switch/avail/config', {
      name: 'Avail plug',
      uniq_id: 'avail',
      cmd_t: 'avail/set',
      stat_t: 'avail/state',
      avty_t: 'avail/lwt',
      pl_avail: 'Online',
      pl_not_avail: 'Offline',
    });
    await waitFor(() => edge.registry.getEntity('switch.avail_plug'));
    await pub('avail/state', 'ON', false);
    await waitState('switch.avail_plug', (s) => s.state === 'on');
    await pub('avail/lwt', 'Offline');
    await waitState('switch.avail_plug', (s) => s.state === 'unavailable');
    await pub('avail/lwt', 'Online');
    await waitState('switch.avail_plug', (s) => s.state === 'on');
  });

  it('uses state published (retained) before the config arrived', async () => {
    await pub('early/state', 'ON', true);
    await pub('homeassistant/switch/early/config', {
      name: 'Early',
      uniq_id: 'early',
      cmd_t: 'early/set',
      stat_t: 'early/state',
    });
    await waitState('switch.early', (s) => s.state === 'on');
  });

  it('supports device-based discovery (cmps)', async () => {
    await pub('homeassistant/device/multi1/config', {
      dev: { ids: 'multi1', name: 'Multi', mf: 'Acme' },
      o: { name: 'sim' },
      stat_t: 'multi1/state',
      cmps: {
        t: { p: 'sensor', name: 'Temp', val_tpl: '{{ value_json.t }}', uniq_id: 'multi1_t', unit_of_meas: '°C' },
        h: { p: 'sensor', name: 'Humidity', val_tpl: '{{ value_json.h }}', uniq_id: 'multi1_h', unit_of_meas: '%' },
      },
    });
    await waitFor(() => edge.registry.getEntity('sensor.multi_humidity'));
    await pub('multi1/state', { t: 20, h: 45 }, false);
    await waitState('sensor.multi_temp', (s) => s.state === '20');
    await waitState('sensor.multi_humidity', (s) => s.state === '45');
    const devId = edge.registry.getEntity('sensor.multi_temp')!.device_registry_id!;
    expect(
      edge.registry
        .entitiesOfDevice(devId)
        .map((e) => e.entity_id)
        .sort(),
    ).toEqual(['sensor.multi_humidity', 'sensor.multi_temp']);
    // a component reduced to {p} is removed
    await pub('homeassistant/device/multi1/config', {
      dev: { ids: 'multi1', name: 'Multi' },
      stat_t: 'multi1/state',
      cmps: {
        t: { p: 'sensor', name: 'Temp', val_tpl: '{{ value_json.t }}', uniq_id: 'multi1_t' },
        h: { p: 'sensor' },
      },
    });
    await waitFor(() => !edge.registry.getEntity('sensor.multi_humidity'));
    expect(edge.registry.getEntity('sensor.multi_temp')).toBeDefined();
  });

  it('removes an entity (and its now empty device) on an empty config payload', async () => {
    const events: string[] = [];
    const off = edge.bus.onAny((type, e) =>
      events.push(`${type}:${'entity_id' in e ? e.entity_id : 'id' in e ? e.id : ''}`),
    );
    const devId = edge.registry.getEntity('sensor.kitchen_temperature')!.device_registry_id!;
    await pub('homeassistant/sensor/kitchen/temp/config', '');
    await waitFor(() => !edge.registry.getEntity('sensor.kitchen_temperature'));
    off();
    expect(edge.states.get('sensor.kitchen_temperature')).toBeUndefined();
    expect(edge.registry.getDevice(devId)).toBeUndefined();
    expect(events).toContain('entity_remove:sensor.kitchen_temperature');
    expect(events).toContain('state_changed:sensor.kitchen_temperature');
    expect(events).toContain(`device_remove:${devId}`);
  });

  it('ignores invalid configs and unsupported components', async () => {
    await pub('homeassistant/switch/bad/config', '{not json');
    await pub('homeassistant/switch/nocmd/config', { name: 'No command', stat_t: 'x' });
    await pub('homeassistant/vacuum/v/config', { name: 'Vac', cmd_t: 'v/set' });
    await pub('homeassistant/sensor/badtpl/config', { name: 'Bad tpl', stat_t: 'x', val_tpl: '{% if %}' });
    await new Promise((r) => setTimeout(r, 100));
    const ids = edge.registry.listEntities().map((e) => e.entity_id);
    expect(ids).not.toContain('switch.no_command');
    expect(ids.some((id) => id.startsWith('vacuum.'))).toBe(false);
    expect(ids).not.toContain('sensor.bad_tpl');
  });

  it('emits state_changed with old and new state', async () => {
    const seen: { old: string | null | undefined; new: string | null | undefined }[] = [];
    const off = edge.bus.on('state_changed', (e) => {
      if (e.entity_id === 'switch.plug') seen.push({ old: e.old_state?.state, new: e.new_state?.state });
    });
    await pub('plug/state', 'OFF', false);
    await waitFor(() => seen.length >= 1);
    off();
    expect(seen[0]).toEqual({ old: 'on', new: 'off' });
  });
});

describe('MQTT discovery: a re-announced config never rolls a state back to an older retained value', () => {
  const config = { name: 'Rollback', uniq_id: 'rollback', stat_t: 'rollback/state', avty_t: 'rollback/avail' };
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('keeps the newer non-retained state while the edge runs', async () => {
    await pub('homeassistant/sensor/rollback/config', config);
    await waitFor(() => edge.registry.getEntity('sensor.rollback'));
    await pub('rollback/state', 'A', true);
    await waitState('sensor.rollback', (s) => s.state === 'A');
    await pub('rollback/state', 'B', false);
    await waitState('sensor.rollback', (s) => s.state === 'B');
    // the device re-announces (as on the edge's birth message): its retained A is older than B
    await pub('homeassistant/sensor/rollback/config', config);
    await new Promise((r) => setTimeout(r, 200));
    expect(state('sensor.rollback')!.state).toBe('B');
  });

  it('keeps the newer stored state across a restart; a retained availability still applies', async () => {
    const data = tempDir();
    cleanups.push(data.cleanup);
    const first = await startEdge(data.dir);
    const creds = await first.createMqttCredentials({ username: 'dev-rollback' });
    const dev = await connect(first, creds);
    await dev.publishAsync('homeassistant/sensor/rollback/config', JSON.stringify(config), { qos: 1, retain: true });
    await waitFor(() => first.registry.getEntity('sensor.rollback'));
    await dev.publishAsync('rollback/state', 'A', { qos: 1, retain: true });
    await dev.publishAsync('rollback/state', 'B', { qos: 1 });
    await waitFor(() => first.states.get('sensor.rollback')?.state === 'B');
    await dev.endAsync();
    await first.stop();

    const second = await startEdge(data.dir);
    cleanups.push(() => second.stop());
    expect(second.states.get('sensor.rollback')!.state).toBe('B');
    const again = await connect(second, creds);
    cleanups.push(() => again.endAsync());
    await again.publishAsync('homeassistant/sensor/rollback/config', JSON.stringify(config), { qos: 1, retain: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(second.states.get('sensor.rollback')!.state).toBe('B');
    // availability is not a value that goes stale this way: the retained LWT is replayed as before
    await again.publishAsync('rollback/avail', 'offline', { qos: 1, retain: true });
    await waitFor(() => second.states.get('sensor.rollback')?.state === 'unavailable');
    await again.publishAsync('homeassistant/sensor/rollback/config', JSON.stringify(config), { qos: 1, retain: true });
    await new Promise((r) => setTimeout(r, 200));
    expect(second.states.get('sensor.rollback')!.state).toBe('unavailable');
  });

  it('applies a retained state kept on disk that is newer than the stored state (the crash lost the state write)', async () => {
    const data = tempDir();
    cleanups.push(data.cleanup);
    const first = await startEdge(data.dir);
    const creds = await first.createMqttCredentials({ username: 'dev-newer' });
    const dev = await connect(first, creds);
    await dev.publishAsync('homeassistant/sensor/rollback/config', JSON.stringify(config), { qos: 1, retain: true });
    await waitFor(() => first.registry.getEntity('sensor.rollback'));
    await dev.publishAsync('rollback/state', 'A', { qos: 1 });
    await waitFor(() => first.states.get('sensor.rollback')?.state === 'A');
    const storedAt = Date.parse(first.states.get('sensor.rollback')!.last_updated!);
    await dev.endAsync();
    await first.stop();
    // what a kill -9 can leave: the retained C (received after A) written, the state C not yet
    const db = new Database(path.join(data.dir, 'edge.db'));
    db.prepare('INSERT INTO mqtt_retained (topic, payload, qos, updated_at, received_at) VALUES (?, ?, 1, ?, ?)').run(
      'rollback/state',
      Buffer.from('C'),
      new Date().toISOString(),
      new Date(storedAt + 5).toISOString(),
    );
    db.close();

    const second = await startEdge(data.dir);
    cleanups.push(() => second.stop());
    expect(second.states.get('sensor.rollback')!.state).toBe('A');
    const again = await connect(second, creds);
    cleanups.push(() => again.endAsync());
    await again.publishAsync('homeassistant/sensor/rollback/config', JSON.stringify(config), { qos: 1, retain: true });
    await waitFor(() => second.states.get('sensor.rollback')?.state === 'C', 3000, 'the newer retained state');
  });
});
