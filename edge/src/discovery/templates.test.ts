import { describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { Edge } from '../edge.ts';
import { recordingLogger, waitFor } from '../testing/edge.ts';
import { edgeWithDevice, publish, stateWhere } from './fixture.ts';

/**
 * Templates from real discovery configs (zigbee2mqtt, Tasmota), over real MQTT: they parse as
 * Jinja and render with Home Assistant's semantics; one that fails at render time makes its
 * value unavailable (and logs one line) but keeps the entity; one that does not parse is
 * rejected when the config arrives, as Home Assistant's schema does.
 */

let edge: Edge;
let device: MqttClient;
const log = recordingLogger();

edgeWithDevice({ username: 'z2m' }, (started) => ({ edge, device } = started), { logger: log });

const pub = (topic: string, payload: unknown, retain = false) => publish(device, topic, payload, retain);
const waitState = (id: string, pred: Parameters<typeof stateWhere>[2]) => stateWhere(edge, id, pred);

describe('discovery templates (real Jinja)', () => {
  it("zigbee2mqtt thermostat: {% set values = {…} %} action map and a fan mode map with default('None')", async () => {
    // zigbee2mqtt's climate discovery (lib/extension/homeassistant.ts), trimmed to the template parts
    await pub('homeassistant/climate/0x54ef441000/climate/config', {
      name: null,
      unique_id: '0x54ef441000_climate_zigbee2mqtt',
      object_id: 'trv_living',
      device: { identifiers: ['zigbee2mqtt_0x54ef441000'], name: 'TRV living', manufacturer: 'Danfoss' },
      state_topic: 'zigbee2mqtt/trv_living',
      json_attributes_topic: 'zigbee2mqtt/trv_living',
      current_temperature_topic: 'zigbee2mqtt/trv_living',
      current_temperature_template: '{{ value_json.local_temperature }}',
      temperature_state_topic: 'zigbee2mqtt/trv_living',
      temperature_state_template: '{{ value_json.occupied_heating_setpoint }}',
      temperature_command_topic: 'zigbee2mqtt/trv_living/set/occupied_heating_setpoint',
      mode_state_topic: 'zigbee2mqtt/trv_living',
      mode_state_template: '{{ value_json.system_mode }}',
      mode_command_topic: 'zigbee2mqtt/trv_living/set/system_mode',
      modes: ['off', 'heat'],
      min_temp: '5',
      max_temp: '35',
      action_topic: 'zigbee2mqtt/trv_living',
      action_template:
        "{% set values = {None:None,'idle':'idle','heat':'heating','cool':'cooling','fan_only':'fan'} %}{{ values[value_json.running_state] }}",
      fan_mode_state_topic: 'zigbee2mqtt/trv_living',
      fan_mode_command_topic: 'zigbee2mqtt/trv_living/set/fan_mode',
      fan_mode_state_template: "{{ {'off':0,'low':1}[value_json.fan_mode] | default('None') }}",
      fan_modes: ['off', 'low'],
    });
    const id = await waitFor(
      () => edge.registry.getEntityByUniqueId('mqtt', '0x54ef441000_climate_zigbee2mqtt')?.entity_id,
      3000,
      'climate entity',
    );
    await pub('zigbee2mqtt/trv_living', {
      local_temperature: 19.5,
      occupied_heating_setpoint: 21,
      system_mode: 'heat',
      running_state: 'heat',
      fan_mode: 'low',
    });
    const s = await waitState(id, (x) => x.attributes.hvac_action === 'heating');
    expect(s.state).toBe('heat');
    expect(s.attributes).toMatchObject({
      hvac_action: 'heating',
      current_temperature: 19.5,
      temperature: 21,
      fan_mode: '1',
    });
    await pub('zigbee2mqtt/trv_living', {
      local_temperature: 19.5,
      occupied_heating_setpoint: 21,
      system_mode: 'heat',
      running_state: 'idle',
      fan_mode: 'turbo',
    });
    expect((await waitState(id, (x) => x.attributes.hvac_action === 'idle')).attributes.fan_mode).toBe('None');
  });

  it("Tasmota: {{ value_json.HSBColor.split(',')[0:2] | join(',') }} and a light config with hs templates is accepted", async () => {
    await pub('homeassistant/sensor/tasmota_A1B2C3/hsb/config', {
      name: 'Bulb HS',
      unique_id: 'A1B2C3_hs',
      state_topic: 'stat/tasmota_A1B2C3/RESULT',
      value_template: "{{ value_json.HSBColor.split(',')[0:2] | join(',') }}",
    });
    await pub('homeassistant/light/A1B2C3_LI_1/config', {
      name: 'Bulb',
      unique_id: 'A1B2C3_LI_1',
      command_topic: 'cmnd/tasmota_A1B2C3/POWER',
      state_topic: 'tele/tasmota_A1B2C3/STATE',
      state_value_template: '{{ value_json.POWER }}',
      payload_on: 'ON',
      payload_off: 'OFF',
      brightness_command_topic: 'cmnd/tasmota_A1B2C3/Dimmer',
      brightness_state_topic: 'tele/tasmota_A1B2C3/STATE',
      brightness_scale: 100,
      brightness_value_template: '{{ value_json.Dimmer }}',
      hs_command_topic: 'cmnd/tasmota_A1B2C3/HSBColor',
      hs_state_topic: 'tele/tasmota_A1B2C3/STATE',
      hs_value_template: "{{ value_json.HSBColor.split(',')[0:2] | join(',') }}",
    });
    await waitFor(() => edge.registry.getEntity('light.bulb'), 3000, 'light.bulb');
    await pub('stat/tasmota_A1B2C3/RESULT', { POWER: 'ON', Dimmer: 40, HSBColor: '120,80,40' });
    await waitState('sensor.bulb_hs', (x) => x.state === '120,80');
    await pub('tele/tasmota_A1B2C3/STATE', { POWER: 'ON', Dimmer: 40, HSBColor: '120,80,40' });
    expect((await waitState('light.bulb', (x) => x.state === 'on')).attributes.brightness).toBe(102);
  });

  it('now().strftime(…) and HA filters in a value_template', async () => {
    await pub('homeassistant/sensor/clock/stamp/config', {
      name: 'Stamp',
      unique_id: 'stamp',
      state_topic: 'clock/stamp',
      value_template: "{{ (value_json.v | float * 2) | round(1) }} {{ now().strftime('%Y') }}",
    });
    await waitFor(() => edge.registry.getEntity('sensor.stamp'), 3000, 'sensor.stamp');
    await pub('clock/stamp', { v: '10.26' });
    await waitState('sensor.stamp', (x) => x.state === `20.5 ${new Date().getFullYear()}`);
  });

  it('a template failing at render time makes the value unavailable and logs one line; the entity stays and recovers', async () => {
    await pub('homeassistant/sensor/broken/render/config', {
      name: 'Render fails',
      unique_id: 'render-fails',
      state_topic: 'broken/render',
      value_template: '{{ value_json.outer.inner }}',
    });
    await waitFor(() => edge.registry.getEntity('sensor.render_fails'), 3000, 'sensor.render_fails');
    await pub('broken/render', { outer: { inner: 7 } });
    await waitState('sensor.render_fails', (x) => x.state === '7');
    const before = log.warnings().length;
    await pub('broken/render', { other: 1 });
    await waitState('sensor.render_fails', (x) => x.state === 'unavailable');
    const lines = log.warnings().slice(before);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^mqtt: sensor\.render_fails: template failed .*value unavailable: .*outer/);
    expect(lines[0]).not.toContain('\n');
    expect(edge.registry.getEntity('sensor.render_fails')).toBeDefined();
    await pub('broken/render', { outer: { inner: 8 } });
    await waitState('sensor.render_fails', (x) => x.state === '8');
  });

  it('a failing attribute template makes that attribute null, a failing json_attributes_template drops the JSON attributes, a failing availability template makes the entity unavailable', async () => {
    await pub('homeassistant/light/broken/attrs/config', {
      name: 'Attr fails',
      unique_id: 'attr-fails',
      command_topic: 'broken/attrs/set',
      state_topic: 'broken/attrs',
      state_value_template: '{{ value_json.state }}',
      brightness_command_topic: 'broken/attrs/set',
      brightness_state_topic: 'broken/attrs',
      brightness_value_template: '{{ value_json.light.level }}',
      json_attributes_topic: 'broken/attrs',
      json_attributes_template: '{{ value_json.extra.attrs | tojson }}',
      availability_topic: 'broken/attrs/avail',
      availability_template: '{{ value_json.status.online }}',
      payload_available: 'True',
      payload_not_available: 'False',
    });
    await waitFor(() => edge.registry.getEntity('light.attr_fails'), 3000, 'light.attr_fails');
    await pub('broken/attrs', { state: 'ON', light: { level: 128 }, extra: { attrs: { linkquality: 90 } } });
    await waitState('light.attr_fails', (x) => x.attributes.brightness === 128 && x.attributes.linkquality === 90);
    const before = log.warnings().length;
    // extra and light missing: brightness and the JSON attributes are unknown, the state stays
    await pub('broken/attrs', { state: 'ON' });
    const s = await waitState('light.attr_fails', (x) => x.attributes.brightness === null);
    expect(s.state).toBe('on');
    expect(s.attributes).not.toHaveProperty('linkquality');
    const lines = log.warnings().slice(before);
    expect(lines.some((l) => /light\.attr_fails: template failed .* brightness_state, value unavailable/.test(l))).toBe(
      true,
    );
    expect(lines.some((l) => /light\.attr_fails: template failed .* json_attributes, value unavailable/.test(l))).toBe(
      true,
    );
    await pub('broken/attrs/avail', { status: { online: true } });
    await pub('broken/attrs', { state: 'ON', light: { level: 255 }, extra: { attrs: { linkquality: 80 } } });
    await waitState('light.attr_fails', (x) => x.attributes.brightness === 255 && x.attributes.linkquality === 80);
    await pub('broken/attrs/avail', { nothing: 1 });
    await waitState('light.attr_fails', (x) => x.state === 'unavailable');
    await pub('broken/attrs/avail', { status: { online: true } });
    await waitState('light.attr_fails', (x) => x.state === 'on');
    expect(edge.registry.getEntity('light.attr_fails')).toBeDefined();
  });

  it('a template that does not parse is rejected with the config', async () => {
    const before = log.warnings().length;
    await pub('homeassistant/sensor/broken/parse/config', {
      name: 'Parse fails',
      unique_id: 'parse-fails',
      state_topic: 'broken/parse',
      value_template: '{{ value_json.a | }}',
    });
    await waitFor(
      () =>
        log
          .warnings()
          .slice(before)
          .find((l) => l.includes('parse')),
      3000,
      'warning',
    );
    expect(log.warnings().slice(before).join('\n')).toMatch(
      /ignored homeassistant\/sensor\/broken\/parse.*template does not parse/,
    );
    expect(edge.registry.getEntityByUniqueId('mqtt', 'parse-fails')).toBeUndefined();
  });
});
