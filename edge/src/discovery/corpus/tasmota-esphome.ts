import { TIMESTAMP, type CorpusEntry } from './types.ts';

/**
 * Tasmota (legacy Home Assistant discovery, SetOption19 1) and ESPHome (MQTT discovery) configs
 * in the abbreviated form their firmware publishes, with their state payloads.
 */
const TASMOTA = 'Tasmota tasmota/tasmota_xdrv_driver/xdrv_12_home_assistant.ino (SetOption19 1)';
const ESPHOME = 'ESPHome esphome/components/mqtt/mqtt_component.cpp and mqtt_<component>.cpp';

const tAvty = { avty_t: 'tele/kitchen/LWT', pl_avail: 'Online', pl_not_avail: 'Offline' };
// only the status sensor carries the full device; the others name it by identifier alone
const tDev = { ids: ['7C9EBD1A2B3C'] };
// Lights carry their state template as stat_val_tpl: HA's light has read only state_value_template since 2022.2.
const tDevFull = { ids: ['7C9EBD1A2B3C'], name: 'Kitchen', mdl: 'Sonoff Basic', sw: '13.2.0(tasmota)', mf: 'Tasmota' };

const eDev = { ids: 'a4cf12abcdef', name: 'livingroom', sw: 'esphome v2024.6.1 Jun 20 2024, 10:00:00', mdl: 'esp32dev', mf: 'espressif' };
const e = (component: string, id: string) => ({
  stat_t: `livingroom/${component}/${id}/state`, avty_t: 'livingroom/status', uniq_id: `ESP${component}${id}`, dev: eDev,
});
const eCmd = (component: string, id: string) => ({ ...e(component, id), cmd_t: `livingroom/${component}/${id}/command` });

export const TASMOTA_ESPHOME: CorpusEntry[] = [
  // ---- Tasmota ----
  {
    id: 'tasmota sensor: status (full device block)', source: TASMOTA, topic: 'homeassistant/sensor/7C9EBD1A2B3C_status/config',
    config: {
      name: 'Kitchen status', stat_t: 'tele/kitchen/HASS_STATE', ...tAvty, json_attr_t: 'tele/kitchen/HASS_STATE', unit_of_meas: '%',
      val_tpl: "{{value_json['RSSI']}}", ic: 'mdi:information-outline', uniq_id: '7C9EBD1A2B3C_status', dev: tDevFull,
    },
    entity_id: 'sensor.kitchen_status', friendly_name: 'Kitchen status',
    device: { name: 'Kitchen', manufacturer: 'Tasmota', model: 'Sonoff Basic', sw_version: '13.2.0(tasmota)', identifiers: ['7C9EBD1A2B3C'] },
    steps: [{ topic: 'tele/kitchen/HASS_STATE', payload: { Version: '13.2.0(tasmota)', 'IPAddress': '192.168.1.50', RSSI: '72', LinkCount: 1 }, state: '72', attributes: { Version: '13.2.0(tasmota)', RSSI: '72', icon: 'mdi:information-outline' } }],
  },
  {
    id: 'tasmota switch: relay (identifiers only must not rename the device)', source: TASMOTA, topic: 'homeassistant/switch/7C9EBD1A2B3C_RL_1/config',
    config: {
      name: 'Kitchen', stat_t: 'tele/kitchen/STATE', ...tAvty, cmd_t: 'cmnd/kitchen/POWER', val_tpl: '{{value_json.POWER}}', pl_off: 'OFF', pl_on: 'ON',
      uniq_id: '7C9EBD1A2B3C_RL_1', dev: tDev,
    },
    entity_id: 'switch.kitchen', friendly_name: 'Kitchen', device: { name: 'Kitchen', model: 'Sonoff Basic' },
    steps: [
      { topic: 'tele/kitchen/STATE', payload: { Time: '2024-06-01T10:00:00', POWER: 'ON', Wifi: { RSSI: 72 } }, state: 'on' },
      { topic: 'tele/kitchen/LWT', payload: 'Offline', state: 'unavailable' },
      { topic: 'tele/kitchen/LWT', payload: 'Online', state: 'on' },
    ],
    commands: [{ service: 'turn_off', publish: ['cmnd/kitchen/POWER OFF'] }, { service: 'turn_on', publish: ['cmnd/kitchen/POWER ON'] }],
  },
  {
    id: 'tasmota sensor: DS18B20 temperature (force_update)', source: TASMOTA, topic: 'homeassistant/sensor/7C9EBD1A2B3C_DS18B20_Temperature/config',
    config: {
      name: 'Kitchen DS18B20 Temperature', stat_t: 'tele/kitchen/SENSOR', ...tAvty, uniq_id: '7C9EBD1A2B3C_DS18B20_Temperature', dev: tDev,
      unit_of_meas: '°C', dev_cla: 'temperature', frc_upd: true, val_tpl: "{{value_json['DS18B20'].Temperature}}",
    },
    entity_id: 'sensor.kitchen_ds18b20_temperature', friendly_name: 'Kitchen DS18B20 Temperature',
    steps: [{ topic: 'tele/kitchen/SENSOR', payload: { Time: '2024-06-01T10:00:00', DS18B20: { Id: '01144A0CB2AA', Temperature: 22.4 }, TempUnit: 'C' }, state: '22.4', attributes: { unit_of_measurement: '°C' } }],
  },
  {
    id: 'tasmota sensor: energy power', source: TASMOTA, topic: 'homeassistant/sensor/7C9EBD1A2B3C_ENERGY_Power/config',
    config: {
      name: 'Kitchen ENERGY Power', stat_t: 'tele/kitchen/SENSOR', ...tAvty, uniq_id: '7C9EBD1A2B3C_ENERGY_Power', dev: tDev,
      unit_of_meas: 'W', dev_cla: 'power', stat_cla: 'measurement', val_tpl: "{{value_json['ENERGY'].Power}}",
    },
    entity_id: 'sensor.kitchen_energy_power', friendly_name: 'Kitchen ENERGY Power',
    steps: [{ topic: 'tele/kitchen/SENSOR', payload: { ENERGY: { Total: 12.5, Power: 48, Voltage: 231 } }, state: '48', attributes: { device_class: 'power', state_class: 'measurement' } }],
  },
  {
    id: 'tasmota binary_sensor: switch input', source: TASMOTA, topic: 'homeassistant/binary_sensor/7C9EBD1A2B3C_SW_1/config',
    config: { name: 'Kitchen Switch1', stat_t: 'stat/kitchen/SWITCH1', ...tAvty, uniq_id: '7C9EBD1A2B3C_SW_1', dev: tDev, val_tpl: '{{value_json.STATE}}', pl_on: 'ON', pl_off: 'OFF' },
    entity_id: 'binary_sensor.kitchen_switch1', friendly_name: 'Kitchen Switch1',
    steps: [{ topic: 'stat/kitchen/SWITCH1', payload: { STATE: 'ON' }, state: 'on' }, { topic: 'stat/kitchen/SWITCH1', payload: { STATE: 'OFF' }, state: 'off' }],
  },
  {
    id: 'tasmota device trigger: button 1 single press', source: TASMOTA, topic: 'homeassistant/device_automation/7C9EBD1A2B3C_BTN_1_SINGLE/config',
    config: { atype: 'trigger', t: 'stat/kitchen/BUTTON1T', pl: '{"TRIG":"SINGLE"}', type: 'button_short_press', stype: 'button_1', dev: tDev },
    device: { name: 'Kitchen' },
    triggers: [{ payload: '{"TRIG":"SINGLE"}', fires: true }, { payload: '{"TRIG":"DOUBLE"}', fires: false }],
  },
  {
    id: 'tasmota light: dimmer (on_command_type brightness, scale 100)', source: TASMOTA, topic: 'homeassistant/light/7C9EBD1A2C00_LI_1/config',
    config: {
      name: 'Hall', cmd_t: 'cmnd/hall/POWER', stat_t: 'tele/hall/STATE', stat_val_tpl: '{{value_json.POWER}}', pl_off: 'OFF', pl_on: 'ON',
      avty_t: 'tele/hall/LWT', pl_avail: 'Online', pl_not_avail: 'Offline', bri_cmd_t: 'cmnd/hall/Dimmer', bri_stat_t: 'tele/hall/STATE', bri_scl: 100,
      on_cmd_type: 'brightness', bri_val_tpl: '{{value_json.Dimmer}}', uniq_id: '7C9EBD1A2C00_LI_1', dev: { ids: ['7C9EBD1A2C00'], name: 'Hall', mdl: 'Sonoff D1', sw: '13.2.0(tasmota)', mf: 'Tasmota' },
    },
    entity_id: 'light.hall', friendly_name: 'Hall',
    steps: [{ topic: 'tele/hall/STATE', payload: { POWER: 'ON', Dimmer: 40 }, state: 'on', attributes: { brightness: 102, color_mode: 'brightness' } }],
    commands: [
      { service: 'turn_on', data: { brightness: 255 }, publish: ['cmnd/hall/Dimmer 100'] },
      { service: 'turn_on', publish: ['cmnd/hall/Dimmer 40'] },
      { service: 'turn_off', publish: ['cmnd/hall/POWER OFF'] },
    ],
  },
  {
    id: 'tasmota light: RGB with HSBColor and schemes', source: TASMOTA, topic: 'homeassistant/light/7C9EBD1A2C01_LI_1/config',
    config: {
      name: 'Strip', cmd_t: 'cmnd/strip/POWER', stat_t: 'tele/strip/STATE', stat_val_tpl: '{{value_json.POWER}}', pl_off: 'OFF', pl_on: 'ON',
      avty_t: 'tele/strip/LWT', pl_avail: 'Online', pl_not_avail: 'Offline', bri_cmd_t: 'cmnd/strip/Dimmer', bri_stat_t: 'tele/strip/STATE', bri_scl: 100,
      on_cmd_type: 'brightness', bri_val_tpl: '{{value_json.Dimmer}}', hs_cmd_t: 'cmnd/strip/HSBColor', hs_stat_t: 'tele/strip/STATE',
      hs_val_tpl: "{{ value_json.HSBColor.split(',')[0:2] | join(',') }}", fx_cmd_t: 'cmnd/strip/Scheme', fx_stat_t: 'tele/strip/STATE', fx_val_tpl: '{{value_json.Scheme}}',
      fx_list: ['0', '1', '2', '3', '4'], uniq_id: '7C9EBD1A2C01_LI_1', dev: { ids: ['7C9EBD1A2C01'], name: 'Strip', mdl: 'Magic Home', sw: '13.2.0(tasmota)', mf: 'Tasmota' },
    },
    entity_id: 'light.strip', friendly_name: 'Strip',
    steps: [{ topic: 'tele/strip/STATE', payload: { POWER: 'ON', Dimmer: 100, HSBColor: '120,100,100', Scheme: 2 }, state: 'on', attributes: { hs_color: [120, 100], effect: '2', color_mode: 'hs' } }],
    commands: [
      { service: 'turn_on', data: { hs_color: [30, 80] }, publish: ['cmnd/strip/HSBColor 30.0,80.0', 'cmnd/strip/Dimmer 100'] },
      { service: 'turn_on', data: { effect: '3' }, publish: ['cmnd/strip/Dimmer 100', 'cmnd/strip/Scheme 3'] },
    ],
  },
  {
    id: 'tasmota sensor: energy total (unit kWh, total_increasing)', source: TASMOTA, topic: 'homeassistant/sensor/7C9EBD1A2B3C_ENERGY_Total/config',
    config: {
      name: 'Kitchen ENERGY Total', stat_t: 'tele/kitchen/SENSOR', ...tAvty, uniq_id: '7C9EBD1A2B3C_ENERGY_Total', dev: tDev,
      unit_of_meas: 'kWh', dev_cla: 'energy', stat_cla: 'total_increasing', val_tpl: "{{value_json['ENERGY'].Total}}",
    },
    entity_id: 'sensor.kitchen_energy_total',
    steps: [{ topic: 'tele/kitchen/SENSOR', payload: { ENERGY: { Total: 12.75, Power: 50 } }, state: '12.75', attributes: { state_class: 'total_increasing', unit_of_measurement: 'kWh' } }],
  },

  // ---- ESPHome ----
  {
    id: 'esphome sensor: temperature (ids as a string)', source: ESPHOME, topic: 'homeassistant/sensor/livingroom/living_room_temperature/config',
    config: { dev_cla: 'temperature', unit_of_meas: '°C', stat_cla: 'measurement', name: 'Living Room Temperature', ...e('sensor', 'living_room_temperature') },
    entity_id: 'sensor.livingroom_living_room_temperature', friendly_name: 'livingroom Living Room Temperature',
    device: { name: 'livingroom', manufacturer: 'espressif', model: 'esp32dev', identifiers: ['a4cf12abcdef'] },
    steps: [
      { topic: 'livingroom/sensor/living_room_temperature/state', payload: '21.5', state: '21.5' },
      { topic: 'livingroom/status', payload: 'offline', state: 'unavailable' },
      { topic: 'livingroom/status', payload: 'online', state: '21.5' },
    ],
  },
  {
    id: 'esphome sensor: object id from obj_id (device name generator)', source: ESPHOME, topic: 'homeassistant/sensor/livingroom/humidity/config',
    config: { dev_cla: 'humidity', unit_of_meas: '%', stat_cla: 'measurement', name: 'Humidity', obj_id: 'livingroom_humidity', ...e('sensor', 'humidity') },
    entity_id: 'sensor.livingroom_humidity', friendly_name: 'livingroom Humidity',
    steps: [{ topic: 'livingroom/sensor/humidity/state', payload: '44.0', state: '44.0' }],
  },
  {
    id: 'esphome sensor: WiFi signal disabled by default (en false)', source: ESPHOME, topic: 'homeassistant/sensor/livingroom/wifi_signal/config',
    config: { dev_cla: 'signal_strength', unit_of_meas: 'dBm', stat_cla: 'measurement', name: 'WiFi Signal', ent_cat: 'diagnostic', en: false, ...e('sensor', 'wifi_signal') },
    entity_id: 'sensor.livingroom_wifi_signal', disabled: true,
    steps: [{ topic: 'livingroom/sensor/wifi_signal/state', payload: '-61' }],
  },
  {
    id: 'esphome switch: relay', source: ESPHOME, topic: 'homeassistant/switch/livingroom/relay/config',
    config: { name: 'Relay', ...eCmd('switch', 'relay') },
    entity_id: 'switch.livingroom_relay', friendly_name: 'livingroom Relay',
    steps: [{ topic: 'livingroom/switch/relay/state', payload: 'ON', state: 'on' }],
    commands: [{ service: 'turn_off', publish: ['livingroom/switch/relay/command OFF'] }],
  },
  {
    id: 'esphome binary_sensor: motion', source: ESPHOME, topic: 'homeassistant/binary_sensor/livingroom/pir/config',
    config: { dev_cla: 'motion', name: 'PIR', ...e('binary_sensor', 'pir') },
    entity_id: 'binary_sensor.livingroom_pir', friendly_name: 'livingroom PIR',
    steps: [{ topic: 'livingroom/binary_sensor/pir/state', payload: 'ON', state: 'on', attributes: { device_class: 'motion' } }],
  },
  {
    id: 'esphome light: RGB with effects (JSON schema)', source: ESPHOME, topic: 'homeassistant/light/livingroom/desk_lamp/config',
    config: {
      name: 'Desk Lamp', schema: 'json', clrm: true, sup_clrm: ['rgb'], brightness: true, effect: true, fx_list: ['Rainbow', 'Strobe', 'None'],
      ...eCmd('light', 'desk_lamp'),
    },
    entity_id: 'light.livingroom_desk_lamp', friendly_name: 'livingroom Desk Lamp',
    initial: { attributes: { supported_color_modes: ['rgb'], effect_list: ['Rainbow', 'Strobe', 'None'] } },
    steps: [{
      topic: 'livingroom/light/desk_lamp/state', payload: { state: 'ON', color_mode: 'rgb', brightness: 200, color: { r: 255, g: 0, b: 0 }, effect: 'Rainbow' },
      state: 'on', attributes: { color_mode: 'rgb', brightness: 200, rgb_color: [255, 0, 0], hs_color: [0, 100], xy_color: [0.701, 0.299], effect: 'Rainbow' },
    }],
    commands: [
      { service: 'turn_on', data: { effect: 'Strobe' }, publish: ['livingroom/light/desk_lamp/command {"state":"ON","effect":"Strobe"}'] },
      { service: 'turn_on', data: { rgb_color: [0, 128, 255], brightness: 100 }, publish: ['livingroom/light/desk_lamp/command {"state":"ON","color":{"r":0,"g":128,"b":255},"brightness":100}'] },
      // an hs colour goes to an rgb-only light as rgb (HA's conversion)
      { service: 'turn_on', data: { hs_color: [240, 100] }, publish: ['livingroom/light/desk_lamp/command {"state":"ON","color":{"r":0,"g":0,"b":255}}'] },
    ],
  },
  {
    id: 'esphome cover: position and tilt', source: ESPHOME, topic: 'homeassistant/cover/livingroom/blinds/config',
    config: {
      name: 'Blinds', dev_cla: 'blind', ...eCmd('cover', 'blinds'), pos_t: 'livingroom/cover/blinds/position/state', set_pos_t: 'livingroom/cover/blinds/position/command',
      tilt_status_t: 'livingroom/cover/blinds/tilt/state', tilt_cmd_t: 'livingroom/cover/blinds/tilt/command',
    },
    entity_id: 'cover.livingroom_blinds', friendly_name: 'livingroom Blinds',
    steps: [
      { topic: 'livingroom/cover/blinds/state', payload: 'open', state: 'open' },
      { topic: 'livingroom/cover/blinds/position/state', payload: '55', attributes: { current_position: 55, device_class: 'blind' } },
      { topic: 'livingroom/cover/blinds/tilt/state', payload: '20', attributes: { current_tilt_position: 20 } },
      { topic: 'livingroom/cover/blinds/tilt/state', payload: '250', attributes: { current_tilt_position: 20 } },
    ],
    commands: [
      { service: 'set_cover_tilt_position', data: { tilt_position: 45 }, publish: ['livingroom/cover/blinds/tilt/command 45'] },
      { service: 'close_cover', publish: ['livingroom/cover/blinds/command CLOSE'] },
      { service: 'set_cover_position', data: { position: 10 }, publish: ['livingroom/cover/blinds/position/command 10'] },
    ],
  },
  {
    id: 'esphome climate: thermostat with action topic', source: ESPHOME, topic: 'homeassistant/climate/livingroom/thermostat/config',
    config: {
      name: 'Thermostat', ...e('climate', 'thermostat'), mode_cmd_t: 'livingroom/climate/thermostat/mode/command', mode_stat_t: 'livingroom/climate/thermostat/mode/state',
      modes: ['off', 'heat'], temp_cmd_t: 'livingroom/climate/thermostat/target_temperature/command', temp_stat_t: 'livingroom/climate/thermostat/target_temperature/state',
      curr_temp_t: 'livingroom/climate/thermostat/current_temperature/state', min_temp: 7, max_temp: 30, temp_step: 0.5, act_t: 'livingroom/climate/thermostat/action/state',
    },
    entity_id: 'climate.livingroom_thermostat', friendly_name: 'livingroom Thermostat',
    steps: [
      { topic: 'livingroom/climate/thermostat/mode/state', payload: 'heat', state: 'heat' },
      { topic: 'livingroom/climate/thermostat/current_temperature/state', payload: '19.8', attributes: { current_temperature: 19.8 } },
      { topic: 'livingroom/climate/thermostat/target_temperature/state', payload: '21.0', attributes: { temperature: 21 } },
      { topic: 'livingroom/climate/thermostat/action/state', payload: 'heating', attributes: { hvac_action: 'heating', hvac_modes: ['off', 'heat'], target_temp_step: 0.5 } },
    ],
    commands: [
      { service: 'set_temperature', data: { temperature: 22.5 }, publish: ['livingroom/climate/thermostat/target_temperature/command 22.5'] },
      { service: 'set_hvac_mode', data: { hvac_mode: 'off' }, publish: ['livingroom/climate/thermostat/mode/command off'] },
    ],
  },
  {
    id: 'esphome fan: speed levels and oscillation', source: ESPHOME, topic: 'homeassistant/fan/livingroom/ceiling_fan/config',
    config: {
      name: 'Ceiling Fan', ...eCmd('fan', 'ceiling_fan'), osc_cmd_t: 'livingroom/fan/ceiling_fan/oscillation/command', osc_stat_t: 'livingroom/fan/ceiling_fan/oscillation/state',
      pct_cmd_t: 'livingroom/fan/ceiling_fan/speed_level/command', pct_stat_t: 'livingroom/fan/ceiling_fan/speed_level/state', spd_rng_min: 1, spd_rng_max: 3,
    },
    entity_id: 'fan.livingroom_ceiling_fan', friendly_name: 'livingroom Ceiling Fan',
    steps: [{ topic: 'livingroom/fan/ceiling_fan/state', payload: 'ON', state: 'on' }, { topic: 'livingroom/fan/ceiling_fan/speed_level/state', payload: '2', attributes: { percentage: 66 } }],
    commands: [
      { service: 'set_percentage', data: { percentage: 100 }, publish: ['livingroom/fan/ceiling_fan/speed_level/command 3'] },
      { service: 'oscillate', data: { oscillating: true }, publish: ['livingroom/fan/ceiling_fan/oscillation/command oscillate_on'] },
    ],
  },
  {
    id: 'esphome number: slider', source: ESPHOME, topic: 'homeassistant/number/livingroom/setpoint/config',
    config: { name: 'Setpoint', ...eCmd('number', 'setpoint'), min: 10, max: 30, step: 0.5, mode: 'slider', unit_of_meas: '°C' },
    entity_id: 'number.livingroom_setpoint', friendly_name: 'livingroom Setpoint',
    steps: [{ topic: 'livingroom/number/setpoint/state', payload: '20.5', state: '20.5', attributes: { min: 10, max: 30, step: 0.5, mode: 'slider' } }],
    commands: [{ service: 'set_value', data: { value: 22.5 }, publish: ['livingroom/number/setpoint/command 22.5'] }],
  },
  {
    id: 'esphome select: mode', source: ESPHOME, topic: 'homeassistant/select/livingroom/mode/config',
    config: { name: 'Mode', ...eCmd('select', 'mode'), ops: ['Auto', 'Manual', 'Away'], ent_cat: 'config' },
    entity_id: 'select.livingroom_mode', friendly_name: 'livingroom Mode',
    steps: [{ topic: 'livingroom/select/mode/state', payload: 'Manual', state: 'Manual' }],
    commands: [{ service: 'select_option', data: { option: 'Away' }, publish: ['livingroom/select/mode/command Away'] }],
  },
  {
    id: 'esphome button: restart (no name → device class name)', source: ESPHOME, topic: 'homeassistant/button/livingroom/restart/config',
    config: { dev_cla: 'restart', ent_cat: 'config', ...eCmd('button', 'restart') },
    entity_id: 'button.livingroom_restart', friendly_name: 'livingroom Restart',
    commands: [{ service: 'press', publish: ['livingroom/button/restart/command PRESS'], state: TIMESTAMP }],
  },
  {
    id: 'esphome lock: LOCKED/UNLOCKED states', source: ESPHOME, topic: 'homeassistant/lock/livingroom/door/config',
    config: { name: 'Door', ...eCmd('lock', 'door'), pl_lock: 'LOCK', pl_unlk: 'UNLOCK', pl_open: 'OPEN' },
    entity_id: 'lock.livingroom_door', friendly_name: 'livingroom Door',
    steps: [{ topic: 'livingroom/lock/door/state', payload: 'LOCKED', state: 'locked' }, { topic: 'livingroom/lock/door/state', payload: 'JAMMED', state: 'jammed' }],
    commands: [{ service: 'unlock', publish: ['livingroom/lock/door/command UNLOCK'] }, { service: 'open', publish: ['livingroom/lock/door/command OPEN'] }],
  },
  {
    id: 'esphome event: doorbell (event_types)', source: ESPHOME, topic: 'homeassistant/event/livingroom/doorbell/config',
    config: { name: 'Doorbell', dev_cla: 'doorbell', evt_typ: ['single', 'double'], ...e('event', 'doorbell') },
    entity_id: 'event.livingroom_doorbell', friendly_name: 'livingroom Doorbell',
    initial: { state: null, attributes: { event_types: ['single', 'double'], event_type: null, device_class: 'doorbell' } },
    steps: [
      { topic: 'livingroom/event/doorbell/state', payload: { event_type: 'double' }, state: TIMESTAMP, attributes: { event_type: 'double' } },
      { topic: 'livingroom/event/doorbell/state', payload: { event_type: 'single' }, state: TIMESTAMP, attributes: { event_type: 'single' } },
      { topic: 'livingroom/event/doorbell/state', payload: { event_type: 'triple' }, attributes: { event_type: 'single' } },
    ],
  },
  {
    id: 'esphome update: firmware (JSON state)', source: ESPHOME, topic: 'homeassistant/update/livingroom/firmware/config',
    config: { name: 'Firmware', dev_cla: 'firmware', ent_cat: 'config', ...eCmd('update', 'firmware'), pl_inst: 'INSTALL' },
    entity_id: 'update.livingroom_firmware', friendly_name: 'livingroom Firmware',
    steps: [{
      topic: 'livingroom/update/firmware/state',
      payload: { installed_version: '2024.6.1', latest_version: '2024.7.0', title: 'ESPHome', release_summary: 'Bug fixes', release_url: 'https://esphome.io/changelog/2024.7.0.html' },
      state: 'on', attributes: { installed_version: '2024.6.1', latest_version: '2024.7.0', title: 'ESPHome', release_summary: 'Bug fixes', release_url: 'https://esphome.io/changelog/2024.7.0.html' },
    }],
    commands: [
      { service: 'install', publish: ['livingroom/update/firmware/command INSTALL'] },
      { service: 'skip', publish: [], state: 'off', attributes: { skipped_version: '2024.7.0' } },
    ],
  },
  {
    id: 'esphome text_sensor: version (diagnostic)', source: ESPHOME, topic: 'homeassistant/sensor/livingroom/esphome_version/config',
    config: { name: 'ESPHome Version', ic: 'mdi:new-box', ent_cat: 'diagnostic', ...e('sensor', 'esphome_version') },
    entity_id: 'sensor.livingroom_esphome_version', friendly_name: 'livingroom ESPHome Version',
    steps: [{ topic: 'livingroom/sensor/esphome_version/state', payload: '2024.6.1 Jun 20 2024, 10:00:00', state: '2024.6.1 Jun 20 2024, 10:00:00', attributes: { icon: 'mdi:new-box' } }],
  },
];
