import { TIMESTAMP, type CorpusEntry } from './types.ts';
import { SRC, origin, availability, via, wallSwitch, bulb, group, remote, blind, trv, bosch, sensorBase, WEATHER } from './zigbee2mqtt-devices.ts';

/**
 * zigbee2mqtt: configs as lib/extension/homeassistant.ts builds them (the expected payloads of
 * test/extensions/homeassistant.test.ts), with zigbee2mqtt's state payloads (one JSON per device).
 */

export const ZIGBEE2MQTT: CorpusEntry[] = [
  {
    id: 'z2m sensor: temperature (no name → device class name)', source: SRC, topic: 'homeassistant/sensor/0x0017880104e45522/temperature/config',
    config: { unit_of_measurement: '°C', device_class: 'temperature', state_class: 'measurement', ...sensorBase('temperature', 'temperature'), enabled_by_default: true },
    entity_id: 'sensor.weather_sensor_temperature', friendly_name: 'weather_sensor Temperature',
    device: { name: 'weather_sensor', manufacturer: 'Aqara', model: 'Temperature and humidity sensor', identifiers: ['zigbee2mqtt_0x0017880104e45522'] },
    initial: { state: null, attributes: { unit_of_measurement: '°C', device_class: 'temperature', state_class: 'measurement' } },
    steps: [{ topic: 'zigbee2mqtt/weather_sensor', payload: WEATHER, state: '21.53' }],
  },
  {
    id: 'z2m sensor: humidity', source: SRC, topic: 'homeassistant/sensor/0x0017880104e45522/humidity/config',
    config: { unit_of_measurement: '%', device_class: 'humidity', state_class: 'measurement', ...sensorBase('humidity', 'humidity'), enabled_by_default: true },
    entity_id: 'sensor.weather_sensor_humidity', friendly_name: 'weather_sensor Humidity',
    steps: [{ topic: 'zigbee2mqtt/weather_sensor', payload: { ...WEATHER, humidity: 50.1 }, state: '50.1', attributes: { unit_of_measurement: '%' } }],
  },
  {
    id: 'z2m sensor: atmospheric pressure', source: SRC, topic: 'homeassistant/sensor/0x0017880104e45522/pressure/config',
    config: { unit_of_measurement: 'hPa', device_class: 'atmospheric_pressure', state_class: 'measurement', ...sensorBase('pressure', 'pressure'), enabled_by_default: true },
    entity_id: 'sensor.weather_sensor_pressure', friendly_name: 'weather_sensor Atmospheric pressure',
    steps: [{ topic: 'zigbee2mqtt/weather_sensor', payload: WEATHER, state: '1012.4' }],
  },
  {
    id: 'z2m sensor: battery (diagnostic)', source: SRC, topic: 'homeassistant/sensor/0x0017880104e45522/battery/config',
    config: { unit_of_measurement: '%', device_class: 'battery', state_class: 'measurement', ...sensorBase('battery', 'battery'), enabled_by_default: true, entity_category: 'diagnostic' },
    entity_id: 'sensor.weather_sensor_battery', friendly_name: 'weather_sensor Battery',
    steps: [{ topic: 'zigbee2mqtt/weather_sensor', payload: WEATHER, state: '91', attributes: { device_class: 'battery' } }],
  },
  {
    id: 'z2m sensor: linkquality (enabled_by_default false → disabled)', source: SRC, topic: 'homeassistant/sensor/0x0017880104e45522/linkquality/config',
    config: { icon: 'mdi:signal', enabled_by_default: false, entity_category: 'diagnostic', unit_of_measurement: 'lqi', state_class: 'measurement', ...sensorBase('linkquality', 'linkquality'), name: 'Linkquality' },
    entity_id: 'sensor.weather_sensor_linkquality', friendly_name: 'weather_sensor Linkquality', disabled: true,
    steps: [{ topic: 'zigbee2mqtt/weather_sensor', payload: WEATHER }],
  },
  {
    id: 'z2m sensor: voltage with availability_mode all (device and bridge)', source: SRC, topic: 'homeassistant/sensor/0x0017880104e45522/voltage/config',
    config: {
      unit_of_measurement: 'mV', device_class: 'voltage', state_class: 'measurement', ...sensorBase('voltage', 'voltage'), enabled_by_default: true, entity_category: 'diagnostic',
      availability_mode: 'all', availability: [...availability, { topic: 'zigbee2mqtt/weather_sensor/availability', value_template: '{{ value_json.state }}' }],
    },
    entity_id: 'sensor.weather_sensor_voltage', friendly_name: 'weather_sensor Voltage',
    steps: [
      { topic: 'zigbee2mqtt/weather_sensor', payload: WEATHER, state: '3005' },
      { topic: 'zigbee2mqtt/weather_sensor/availability', payload: { state: 'offline' }, state: 'unavailable' },
      { topic: 'zigbee2mqtt/weather_sensor/availability', payload: { state: 'online' }, state: '3005' },
    ],
  },
  {
    id: 'z2m switch: left rocker (state_left, command_topic …/left/set)', source: SRC, topic: 'homeassistant/switch/0x0017880104e45542/switch_left/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/wall_switch_double/left/set', device: wallSwitch, name: 'Left', payload_off: 'OFF', payload_on: 'ON',
      state_topic: 'zigbee2mqtt/wall_switch_double', object_id: 'wall_switch_double_left', default_entity_id: 'switch.wall_switch_double_left',
      unique_id: '0x0017880104e45542_switch_left_zigbee2mqtt', origin, value_template: '{{ value_json["state_left"] }}',
    },
    entity_id: 'switch.wall_switch_double_left', friendly_name: 'wall_switch_double Left',
    steps: [{ topic: 'zigbee2mqtt/wall_switch_double', payload: { state_left: 'ON', state_right: 'OFF' }, state: 'on' }],
    commands: [{ service: 'turn_off', publish: ['zigbee2mqtt/wall_switch_double/left/set OFF'] }, { service: 'turn_on', publish: ['zigbee2mqtt/wall_switch_double/left/set ON'] }],
  },
  {
    id: 'z2m switch: right rocker shares the device', source: SRC, topic: 'homeassistant/switch/0x0017880104e45542/switch_right/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/wall_switch_double/right/set', device: wallSwitch, name: 'Right', payload_off: 'OFF', payload_on: 'ON',
      state_topic: 'zigbee2mqtt/wall_switch_double', object_id: 'wall_switch_double_right', default_entity_id: 'switch.wall_switch_double_right',
      unique_id: '0x0017880104e45542_switch_right_zigbee2mqtt', origin, value_template: '{{ value_json["state_right"] }}',
    },
    entity_id: 'switch.wall_switch_double_right', friendly_name: 'wall_switch_double Right', device: { name: 'wall_switch_double', model: 'Smart wall switch (no neutral, double rocker)' },
    steps: [{ topic: 'zigbee2mqtt/wall_switch_double', payload: { state_left: 'ON', state_right: 'ON' }, state: 'on' }],
    commands: [{ service: 'toggle', publish: ['zigbee2mqtt/wall_switch_double/right/set OFF'] }],
  },
  {
    id: 'z2m light: color_temp bulb with effects (JSON schema)', source: SRC, topic: 'homeassistant/light/0x000b57fffec6a5b2/light/config',
    config: {
      availability, brightness: true, brightness_scale: 254, supported_color_modes: ['color_temp'], min_mireds: 250, max_mireds: 454, command_topic: 'zigbee2mqtt/bulb/set',
      device: bulb, effect: true, effect_list: ['blink', 'breathe', 'okay', 'channel_change', 'finish_effect', 'stop_effect'], name: null, schema: 'json',
      state_topic: 'zigbee2mqtt/bulb', object_id: 'bulb', default_entity_id: 'light.bulb', unique_id: '0x000b57fffec6a5b2_light_zigbee2mqtt', origin,
    },
    entity_id: 'light.bulb', friendly_name: 'bulb',
    initial: { state: null, attributes: { supported_color_modes: ['color_temp'], min_mireds: 250, max_mireds: 454, effect_list: ['blink', 'breathe', 'okay', 'channel_change', 'finish_effect', 'stop_effect'] } },
    steps: [
      { topic: 'zigbee2mqtt/bulb', payload: { state: 'ON', brightness: 254, color_temp: 370, color_mode: 'color_temp', effect: null, linkquality: 99 }, state: 'on', attributes: { brightness: 255, color_temp: 370, color_mode: 'color_temp', effect: null } },
      // off: HA lists what the light supports as null
      { topic: 'zigbee2mqtt/bulb', payload: { state: 'OFF', brightness: 254, color_temp: 370, color_mode: 'color_temp' }, state: 'off', attributes: { brightness: null, color_mode: null, color_temp: null, effect: null } },
    ],
    commands: [
      { service: 'turn_on', data: { effect: 'breathe' }, publish: ['zigbee2mqtt/bulb/set {"state":"ON","effect":"breathe"}'] },
      { service: 'turn_on', data: { brightness: 128, color_temp: 300 }, publish: ['zigbee2mqtt/bulb/set {"state":"ON","brightness":127,"color_temp":300}'] },
      { service: 'turn_on', data: { brightness_pct: 100, transition: 2 }, publish: ['zigbee2mqtt/bulb/set {"state":"ON","transition":2,"brightness":254}'] },
      { service: 'turn_off', publish: ['zigbee2mqtt/bulb/set {"state":"OFF"}'] },
    ],
  },
  {
    id: 'z2m light: group with xy + color_temp and effects', source: SRC, topic: 'homeassistant/light/1221051039810110150109113116116_9/light/config',
    config: {
      availability, brightness: true, brightness_scale: 254, command_topic: 'zigbee2mqtt/ha_discovery_group/set', device: group, icon: 'mdi:lightbulb-group', max_mireds: 454, min_mireds: 250,
      name: null, schema: 'json', state_topic: 'zigbee2mqtt/ha_discovery_group', supported_color_modes: ['xy', 'color_temp'], effect: true,
      effect_list: ['blink', 'breathe', 'okay', 'channel_change', 'candle', 'fireplace', 'colorloop', 'none', 'finish_effect', 'stop_effect'],
      object_id: 'ha_discovery_group', default_entity_id: 'light.ha_discovery_group', unique_id: '9_light_zigbee2mqtt',
      group: ['0x000b57fffec6a5b4_light_zigbee2mqtt', '0x000b57fffec6a5b7_light_zigbee2mqtt'], origin,
    },
    entity_id: 'light.ha_discovery_group', friendly_name: 'HA Discovery Group', device: { name: 'HA Discovery Group', model: 'Group', manufacturer: 'Zigbee2MQTT' },
    steps: [
      { topic: 'zigbee2mqtt/ha_discovery_group', payload: { state: 'ON', brightness: 127, color: { x: 0.701, y: 0.299 }, color_mode: 'xy' }, state: 'on', attributes: { color_mode: 'xy', xy_color: [0.701, 0.299], brightness: 128 } },
      { topic: 'zigbee2mqtt/ha_discovery_group', payload: { state: 'ON', color_temp: 300, color_mode: 'color_temp' }, state: 'on', attributes: { color_mode: 'color_temp', color_temp: 300 } },
    ],
    commands: [
      { service: 'turn_on', data: { xy_color: [0.5, 0.4] }, publish: ['zigbee2mqtt/ha_discovery_group/set {"state":"ON","color":{"x":0.5,"y":0.4}}'] },
      // HA converts hs to xy for a light that takes xy (red: 0.701, 0.299)
      { service: 'turn_on', data: { hs_color: [0, 100] }, publish: ['zigbee2mqtt/ha_discovery_group/set {"state":"ON","color":{"x":0.701,"y":0.299}}'] },
      { service: 'turn_on', data: { effect: 'colorloop' }, publish: ['zigbee2mqtt/ha_discovery_group/set {"state":"ON","effect":"colorloop"}'] },
    ],
  },
  {
    id: 'z2m light: brightness-only bulb (HA fills in the only colour mode)', source: SRC, topic: 'homeassistant/light/0x0017880104e45553/light/config',
    config: {
      availability, brightness: true, brightness_scale: 254, command_topic: 'zigbee2mqtt/bulb_enddevice/set',
      device: { identifiers: ['zigbee2mqtt_0x0017880104e45553'], manufacturer: 'Sengled', model: 'Element classic (A19)', model_id: 'E11-G13', name: 'bulb_enddevice', via_device: via },
      name: null, object_id: 'bulb_enddevice', default_entity_id: 'light.bulb_enddevice', origin, schema: 'json', state_topic: 'zigbee2mqtt/bulb_enddevice',
      supported_color_modes: ['brightness'], unique_id: '0x0017880104e45553_light_zigbee2mqtt',
    },
    entity_id: 'light.bulb_enddevice', friendly_name: 'bulb_enddevice',
    steps: [{ topic: 'zigbee2mqtt/bulb_enddevice', payload: { state: 'ON', brightness: 127 }, state: 'on', attributes: { color_mode: 'brightness', brightness: 128, supported_color_modes: ['brightness'] } }],
    commands: [{ service: 'turn_on', data: { brightness_pct: 50 }, publish: ['zigbee2mqtt/bulb_enddevice/set {"state":"ON","brightness":127}'] }],
  },
  {
    id: 'z2m light: colour bulb reporting hs', source: SRC, topic: 'homeassistant/light/0x000b57fffec6a5b3/light/config',
    config: {
      availability, brightness: true, brightness_scale: 254, command_topic: 'zigbee2mqtt/bulb_color/set', name: null, schema: 'json', state_topic: 'zigbee2mqtt/bulb_color',
      supported_color_modes: ['xy', 'hs', 'color_temp'], min_mireds: 150, max_mireds: 500, object_id: 'bulb_color', default_entity_id: 'light.bulb_color',
      device: { identifiers: ['zigbee2mqtt_0x000b57fffec6a5b3'], manufacturer: 'Philips', model: 'Hue Go', model_id: '7146060PH', name: 'bulb_color', via_device: via },
      unique_id: '0x000b57fffec6a5b3_light_zigbee2mqtt', origin,
    },
    entity_id: 'light.bulb_color',
    steps: [{ topic: 'zigbee2mqtt/bulb_color', payload: { state: 'ON', color: { hue: 0, saturation: 100, h: 0, s: 100 }, color_mode: 'hs' }, state: 'on', attributes: { color_mode: 'hs', hs_color: [0, 100], rgb_color: [255, 0, 0], xy_color: [0.701, 0.299] } }],
    commands: [{ service: 'turn_on', data: { hs_color: [120, 50] }, publish: ['zigbee2mqtt/bulb_color/set {"state":"ON","color":{"h":120,"s":50}}'] }],
  },
  {
    id: 'z2m switch: group (value_template state)', source: SRC, topic: 'homeassistant/switch/1221051039810110150109113116116_9/switch/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/ha_discovery_group/set', device: group, icon: 'mdi:lightbulb-group', name: null, payload_off: 'OFF', payload_on: 'ON',
      state_topic: 'zigbee2mqtt/ha_discovery_group', object_id: 'ha_discovery_group', default_entity_id: 'switch.ha_discovery_group', unique_id: '9_switch_zigbee2mqtt',
      group: ['0x0017880104e45542_switch_right_zigbee2mqtt'], origin, value_template: '{{ value_json["state"] }}',
    },
    entity_id: 'switch.ha_discovery_group', friendly_name: 'HA Discovery Group',
    steps: [{ topic: 'zigbee2mqtt/ha_discovery_group', payload: { state: 'OFF' }, state: 'off', attributes: { icon: 'mdi:lightbulb-group' } }],
    commands: [{ service: 'turn_on', publish: ['zigbee2mqtt/ha_discovery_group/set ON'] }],
  },
  {
    id: 'z2m event: action (regex_findall template)', source: SRC, topic: 'homeassistant/event/0x0017880104e45520/action/config',
    config: {
      availability, device: { identifiers: ['zigbee2mqtt_0x0017880104e45520'], manufacturer: 'Aqara', model: 'Wireless mini switch', model_id: 'WXKG11LM', name: 'button', via_device: via },
      event_types: ['single', 'double', 'triple', 'quadruple', 'hold', 'release'], icon: 'mdi:gesture-double-tap', name: 'Action', object_id: 'button_action',
      default_entity_id: 'event.button_action', origin, state_topic: 'zigbee2mqtt/button', unique_id: '0x0017880104e45520_action_zigbee2mqtt',
      value_template: "{% set action_value = value_json.action|default('') %}{% set ns = namespace(r=[('action', action_value)]) %}{% set ns.r = ns.r + [('event_type', action_value)] %}{{dict.from_keys(ns.r|rejectattr(0, 'in', ('action', 'actionPrefix'))|reject('eq', ('event_type', None))|reject('eq', ('event_type', '')))|to_json}}",
    },
    entity_id: 'event.button_action', friendly_name: 'button Action',
    steps: [{ topic: 'zigbee2mqtt/button', payload: { action: 'double', battery: 100 }, state: TIMESTAMP, attributes: { event_type: 'double' } }],
  },
  {
    id: 'z2m fan: mode map templates', source: SRC, topic: 'homeassistant/fan/0x0017880104e45548/fan/config',
    config: {
      state_topic: 'zigbee2mqtt/fan', state_value_template: '{{ value_json.fan_state }}', command_topic: 'zigbee2mqtt/fan/set/fan_state', percentage_state_topic: 'zigbee2mqtt/fan',
      percentage_command_topic: 'zigbee2mqtt/fan/set/fan_mode',
      percentage_value_template: "{{ {'off':0, 'low':1, 'medium':2, 'high':3, 'on':4}[value_json[\"fan_mode\"]] | default('None') }}",
      percentage_command_template: "{{ {0:'off', 1:'low', 2:'medium', 3:'high', 4:'on'}[value] | default('') }}",
      preset_mode_state_topic: 'zigbee2mqtt/fan', preset_mode_command_topic: 'zigbee2mqtt/fan/set/fan_mode',
      preset_mode_value_template: "{{ value_json[\"fan_mode\"] if value_json[\"fan_mode\"] in ['smart'] else 'None' | default('None') }}",
      preset_modes: ['smart'], speed_range_min: 1, speed_range_max: 4, name: null, object_id: 'fan', default_entity_id: 'fan.fan', unique_id: '0x0017880104e45548_fan_zigbee2mqtt', origin,
      device: { identifiers: ['zigbee2mqtt_0x0017880104e45548'], name: 'fan', model: 'Universal wink enabled white ceiling fan premier remote control', model_id: '99432', manufacturer: 'Hampton Bay', via_device: via },
      availability,
    },
    entity_id: 'fan.fan',
    steps: [{ topic: 'zigbee2mqtt/fan', payload: { fan_state: 'ON', fan_mode: 'medium' }, state: 'on', attributes: { percentage: 50 } }],
    commands: [{ service: 'set_percentage', data: { percentage: 100 }, publish: ['zigbee2mqtt/fan/set/fan_mode on'] }],
  },
  {
    id: 'z2m siren: Heiman HS2WD-E (command_template with volume levels)', source: SRC, topic: 'homeassistant/siren/0x0017880104e45549/siren/config',
    config: {
      available_tones: ['emergency'], support_duration: true, optimistic: true, command_topic: 'zigbee2mqtt/siren/set',
      command_template: '{"warning": {"mode": "{{ tone | default(\'emergency\') }}", "level": "{% if volume_level is defined %}{% if volume_level | float <= 0.25 %}low{% elif volume_level | float <= 0.5 %}medium{% elif volume_level | float <= 0.75 %}high{% else %}very_high{% endif %}{% else %}medium{% endif %}", "duration": {{ duration | default(10) }}}}',
      command_off_template: '{"warning": {"mode": "stop"}}', name: null, object_id: 'siren', default_entity_id: 'siren.siren', unique_id: '0x0017880104e45549_siren_zigbee2mqtt', origin,
      device: { identifiers: ['zigbee2mqtt_0x0017880104e45549'], name: 'siren', model: 'Smart siren', model_id: 'HS2WD-E', manufacturer: 'Heiman', via_device: via }, availability,
    },
    entity_id: 'siren.siren', friendly_name: 'siren',
    initial: { attributes: { available_tones: ['emergency'] } },
    commands: [
      { service: 'turn_on', data: { volume_level: 0.7, duration: 5 }, publish: ['zigbee2mqtt/siren/set {"warning": {"mode": "emergency", "level": "high", "duration": 5}}'], state: 'on' },
      { service: 'turn_off', publish: ['zigbee2mqtt/siren/set {"warning": {"mode": "stop"}}'], state: 'off' },
    ],
  },
  {
    id: 'z2m climate: TS0601 TRV (action_template with a value map)', source: SRC, topic: 'homeassistant/climate/0x0017882104a44559/climate/config',
    config: {
      action_template: "{% set values = {None:None,'idle':'idle','heat':'heating','cool':'cooling','fan_only':'fan'} %}{{ values[value_json[\"running_state\"]] }}",
      action_topic: 'zigbee2mqtt/TS0601_thermostat', availability, current_temperature_template: '{{ value_json["local_temperature"] }}',
      current_temperature_topic: 'zigbee2mqtt/TS0601_thermostat', device: trv, preset_mode_command_topic: 'zigbee2mqtt/TS0601_thermostat/set/preset',
      preset_modes: ['schedule', 'manual', 'boost', 'complex', 'comfort', 'eco', 'away'], preset_mode_value_template: '{{ value_json["preset"] }}',
      preset_mode_state_topic: 'zigbee2mqtt/TS0601_thermostat', max_temp: '35', min_temp: '5', mode_command_topic: 'zigbee2mqtt/TS0601_thermostat/set/system_mode',
      mode_state_template: '{{ value_json["system_mode"] }}', mode_state_topic: 'zigbee2mqtt/TS0601_thermostat', modes: ['heat', 'auto', 'off'], name: null, temp_step: 0.5,
      temperature_command_topic: 'zigbee2mqtt/TS0601_thermostat/set/current_heating_setpoint', temperature_state_template: '{{ value_json["current_heating_setpoint"] }}',
      temperature_state_topic: 'zigbee2mqtt/TS0601_thermostat', temperature_unit: 'C', object_id: 'ts0601_thermostat', default_entity_id: 'climate.ts0601_thermostat',
      unique_id: '0x0017882104a44559_climate_zigbee2mqtt', origin,
    },
    entity_id: 'climate.ts0601_thermostat', friendly_name: 'TS0601_thermostat',
    steps: [{
      topic: 'zigbee2mqtt/TS0601_thermostat', payload: { system_mode: 'heat', running_state: 'heat', local_temperature: 19.5, current_heating_setpoint: 21, preset: 'manual' },
      state: 'heat', attributes: { hvac_action: 'heating', current_temperature: 19.5, temperature: 21, preset_mode: 'manual', min_temp: 5, max_temp: 35, target_temp_step: 0.5 },
    }],
    commands: [
      { service: 'set_temperature', data: { temperature: 22.5 }, publish: ['zigbee2mqtt/TS0601_thermostat/set/current_heating_setpoint 22.5'] },
      { service: 'set_hvac_mode', data: { hvac_mode: 'off' }, publish: ['zigbee2mqtt/TS0601_thermostat/set/system_mode off'] },
      { service: 'set_preset_mode', data: { preset_mode: 'boost' }, publish: ['zigbee2mqtt/TS0601_thermostat/set/preset boost'] },
    ],
  },
  {
    id: 'z2m climate: Bosch BTH-RA (mode maps in state and command templates)', source: SRC, topic: 'homeassistant/climate/0x18fc2600000d7ae2/climate/config',
    config: {
      action_template: "{% set values = {None:None,'idle':'idle','heat':'heating','cool':'cooling','fan_only':'fan'} %}{{ values[value_json[\"running_state\"]] }}",
      action_topic: 'zigbee2mqtt/bosch_radiator', availability, current_temperature_template: '{{ value_json["local_temperature"] }}', current_temperature_topic: 'zigbee2mqtt/bosch_radiator',
      device: bosch, max_temp: '30', min_temp: '5',
      mode_command_template: "{% set values = { 'auto':'schedule','heat':'manual','off':'pause'} %}{\"operating_mode\": \"{{ values[value] if value in values.keys() else 'pause' }}\"}",
      mode_command_topic: 'zigbee2mqtt/bosch_radiator/set',
      mode_state_template: "{% set values = {'schedule':'auto','manual':'heat','pause':'off'} %}{% set value = value_json.operating_mode %}{{ values[value] if value in values.keys() else 'off' }}",
      mode_state_topic: 'zigbee2mqtt/bosch_radiator', modes: ['off', 'heat', 'auto'], name: null, object_id: 'bosch_radiator', default_entity_id: 'climate.bosch_radiator', origin, temp_step: 0.5,
      temperature_command_topic: 'zigbee2mqtt/bosch_radiator/set/occupied_heating_setpoint', temperature_state_template: '{{ value_json["occupied_heating_setpoint"] }}',
      temperature_state_topic: 'zigbee2mqtt/bosch_radiator', temperature_unit: 'C', unique_id: '0x18fc2600000d7ae2_climate_zigbee2mqtt',
    },
    entity_id: 'climate.bosch_radiator',
    steps: [{ topic: 'zigbee2mqtt/bosch_radiator', payload: { operating_mode: 'schedule', running_state: 'idle', local_temperature: 20, occupied_heating_setpoint: 20.5 }, state: 'auto', attributes: { hvac_action: 'idle', temperature: 20.5 } }],
    commands: [{ service: 'set_hvac_mode', data: { hvac_mode: 'heat' }, publish: ['zigbee2mqtt/bosch_radiator/set {"operating_mode": "manual"}'] }],
  },
  {
    id: 'z2m number: writable PI heating demand', source: SRC, topic: 'homeassistant/number/0x18fc2600000d7ae2/pi_heating_demand/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/bosch_radiator/set/pi_heating_demand', default_entity_id: 'number.bosch_radiator_pi_heating_demand', device: bosch, icon: 'mdi:radiator',
      max: 100, min: 0, name: 'PI heating demand', object_id: 'bosch_radiator_pi_heating_demand', origin, state_topic: 'zigbee2mqtt/bosch_radiator',
      unique_id: '0x18fc2600000d7ae2_pi_heating_demand_zigbee2mqtt', unit_of_measurement: '%', value_template: '{{ value_json["pi_heating_demand"] }}',
    },
    entity_id: 'number.bosch_radiator_pi_heating_demand', friendly_name: 'bosch_radiator PI heating demand', device: { sw_version: '3.05.09', manufacturer: 'Bosch' },
    steps: [{ topic: 'zigbee2mqtt/bosch_radiator', payload: { pi_heating_demand: 35 }, state: '35', attributes: { min: 0, max: 100, unit_of_measurement: '%' } }],
    commands: [{ service: 'set_value', data: { value: 55 }, publish: ['zigbee2mqtt/bosch_radiator/set/pi_heating_demand 55'] }],
  },
  {
    id: 'z2m sensor: read-only PI heating demand (named)', source: SRC, topic: 'homeassistant/sensor/0x0017880104e45550/pi_heating_demand/config',
    config: {
      availability, default_entity_id: 'sensor.thermostat_pi_heating_demand', entity_category: 'diagnostic', icon: 'mdi:radiator', name: 'PI heating demand',
      device: { identifiers: ['zigbee2mqtt_0x0017880104e45550'], manufacturer: 'eCozy', model: 'Smart heating thermostat', model_id: '1TST-EU', name: 'thermostat', via_device: via },
      object_id: 'thermostat_pi_heating_demand', origin, state_topic: 'zigbee2mqtt/thermostat', unique_id: '0x0017880104e45550_pi_heating_demand_zigbee2mqtt',
      unit_of_measurement: '%', value_template: '{{ value_json["pi_heating_demand"] }}',
    },
    entity_id: 'sensor.thermostat_pi_heating_demand', friendly_name: 'thermostat PI heating demand',
    steps: [{ topic: 'zigbee2mqtt/thermostat', payload: { pi_heating_demand: 12 }, state: '12', attributes: { icon: 'mdi:radiator' } }],
  },
  {
    id: 'z2m cover: smart vent (position, set_position_template)', source: SRC, topic: 'homeassistant/cover/0x0017880104e45551/cover/config',
    config: {
      command_topic: 'zigbee2mqtt/smart vent/set', position_topic: 'zigbee2mqtt/smart vent', set_position_topic: 'zigbee2mqtt/smart vent/set',
      set_position_template: '{ "position": {{ position }} }', position_template: '{{ value_json["position"] }}', state_topic: 'zigbee2mqtt/smart vent',
      value_template: '{{ value_json["state"] }}', state_open: 'OPEN', state_closed: 'CLOSE', state_stopped: 'STOP', name: null, object_id: 'smart_vent',
      default_entity_id: 'cover.smart_vent', unique_id: '0x0017880104e45551_cover_zigbee2mqtt', origin,
      device: { identifiers: ['zigbee2mqtt_0x0017880104e45551'], name: 'smart vent', model: 'Smart vent', model_id: 'SV01', manufacturer: 'Keen Home', via_device: via }, availability,
    },
    entity_id: 'cover.smart_vent', friendly_name: 'smart vent',
    steps: [
      { topic: 'zigbee2mqtt/smart vent', payload: { state: 'OPEN', position: 60 }, state: 'open', attributes: { current_position: 60 } },
      { topic: 'zigbee2mqtt/smart vent', payload: { state: 'CLOSE', position: 0 }, state: 'closed', attributes: { current_position: 0 } },
    ],
    commands: [
      { service: 'set_cover_position', data: { position: 30 }, publish: ['zigbee2mqtt/smart vent/set { "position": 30 }'] },
      { service: 'open_cover', publish: ['zigbee2mqtt/smart vent/set OPEN'] },
      { service: 'stop_cover', publish: ['zigbee2mqtt/smart vent/set STOP'] },
    ],
  },
  {
    id: 'z2m cover: zigfred blind with tilt', source: SRC, topic: 'homeassistant/cover/0xf4ce368a38be56a1/cover_l6/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/zigfred_plus/l6/set', device: blind, name: 'L6', position_template: '{{ value_json["position"] }}',
      position_topic: 'zigbee2mqtt/zigfred_plus/l6', set_position_template: '{ "position_l6": {{ position }} }', set_position_topic: 'zigbee2mqtt/zigfred_plus/l6/set',
      state_stopped: 'STOP', state_closed: 'CLOSE', state_open: 'OPEN', state_topic: 'zigbee2mqtt/zigfred_plus/l6', tilt_command_topic: 'zigbee2mqtt/zigfred_plus/l6/set/tilt',
      tilt_status_template: '{{ value_json["tilt"] }}', tilt_status_topic: 'zigbee2mqtt/zigfred_plus/l6', object_id: 'zigfred_plus_l6', default_entity_id: 'cover.zigfred_plus_l6',
      unique_id: '0xf4ce368a38be56a1_cover_l6_zigbee2mqtt', origin, value_template: '{{ value_json["state"] }}',
    },
    entity_id: 'cover.zigfred_plus_l6', friendly_name: 'zigfred_plus L6',
    initial: { attributes: { current_tilt_position: undefined } },
    steps: [{ topic: 'zigbee2mqtt/zigfred_plus/l6', payload: { state: 'OPEN', position: 80, tilt: 40 }, state: 'open', attributes: { current_position: 80, current_tilt_position: 40 } }],
    commands: [
      { service: 'set_cover_tilt_position', data: { tilt_position: 70 }, publish: ['zigbee2mqtt/zigfred_plus/l6/set/tilt 70'] },
      { service: 'open_cover_tilt', publish: ['zigbee2mqtt/zigfred_plus/l6/set/tilt 100'] },
      { service: 'close_cover_tilt', publish: ['zigbee2mqtt/zigfred_plus/l6/set/tilt 0'] },
      { service: 'set_cover_position', data: { position: 25 }, publish: ['zigbee2mqtt/zigfred_plus/l6/set { "position_l6": 25 }'] },
    ],
  },
  {
    id: 'z2m cover: dual curtain switch (moving template)', source: SRC, topic: 'homeassistant/cover/0xa4c138018cf95021/cover_left/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/0xa4c138018cf95021/left/set', name: 'Left', object_id: '0xa4c138018cf95021_left', default_entity_id: 'cover.0xa4c138018cf95021_left', origin,
      device: { identifiers: ['zigbee2mqtt_0xa4c138018cf95021'], manufacturer: 'Girier', model: 'Dual smart curtain switch', model_id: 'TS130F_GIRIER_DUAL', name: '0xa4c138018cf95021', via_device: via },
      position_template: '{{ value_json["position"] }}', position_topic: 'zigbee2mqtt/0xa4c138018cf95021/left', set_position_template: '{ "position_left": {{ position }} }',
      set_position_topic: 'zigbee2mqtt/0xa4c138018cf95021/left/set', state_closing: 'DOWN', state_opening: 'UP', state_stopped: 'STOP', state_topic: 'zigbee2mqtt/0xa4c138018cf95021/left',
      unique_id: '0xa4c138018cf95021_cover_left_zigbee2mqtt', value_template: '{% if "moving" in value_json and value_json["moving"] %} {{ value_json["moving"] }} {% else %} STOP {% endif %}',
    },
    entity_id: 'cover.0xa4c138018cf95021_left', friendly_name: '0xa4c138018cf95021 Left',
    steps: [
      { topic: 'zigbee2mqtt/0xa4c138018cf95021/left', payload: { position: 50, moving: 'UP' }, state: 'opening', attributes: { current_position: 50 } },
      { topic: 'zigbee2mqtt/0xa4c138018cf95021/left', payload: { position: 100, moving: null }, state: 'open', attributes: { current_position: 100 } },
    ],
  },
  {
    id: 'z2m device trigger: remote action on', source: SRC, topic: 'homeassistant/device_automation/0x90fd9ffffedf1266/action_on/config',
    config: { automation_type: 'trigger', type: 'action', subtype: 'on', payload: 'on', topic: 'zigbee2mqtt/remote/action', origin, device: remote },
    device: { name: 'remote', manufacturer: 'IKEA' },
    triggers: [{ payload: 'on', fires: true }, { payload: 'off', fires: false }],
  },
  {
    id: 'z2m device trigger: remote brightness_move_up', source: SRC, topic: 'homeassistant/device_automation/0x90fd9ffffedf1266/action_brightness_move_up/config',
    config: { automation_type: 'trigger', type: 'action', subtype: 'brightness_move_up', payload: 'brightness_move_up', topic: 'zigbee2mqtt/remote/action', origin, device: remote },
    device: { name: 'remote' },
    triggers: [{ payload: 'brightness_move_up', fires: true }, { payload: 'on', fires: false }],
  },
  {
    id: 'z2m update: OTA firmware (installed/latest from the device state)', source: SRC, topic: 'homeassistant/update/0x000b57fffec6a5b2/update/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/bridge/request/device/ota_update/update', device: bulb, device_class: 'firmware', entity_category: 'config',
      entity_picture: 'https://github.com/Koenkk/zigbee2mqtt/raw/master/images/logo.png', json_attributes_template: "{{ value_json['update'] | tojson }}",
      json_attributes_topic: 'zigbee2mqtt/bulb', latest_version_template: "{{ value_json['update']['latest_version'] }}", latest_version_topic: 'zigbee2mqtt/bulb',
      name: null, object_id: 'bulb', default_entity_id: 'update.bulb', origin, payload_install: '{"id": "0x000b57fffec6a5b2"}', state_topic: 'zigbee2mqtt/bulb',
      unique_id: '0x000b57fffec6a5b2_update_zigbee2mqtt', value_template: "{{ value_json['update']['installed_version'] }}",
    },
    entity_id: 'update.bulb', friendly_name: 'bulb',
    initial: { state: null, attributes: { installed_version: null, latest_version: null, in_progress: false, device_class: 'firmware', supported_features: 1 } },
    steps: [
      { topic: 'zigbee2mqtt/bulb', payload: { state: 'ON', update: { state: 'available', installed_version: 16777216, latest_version: 16777472 } }, state: 'on', attributes: { installed_version: '16777216', latest_version: '16777472' } },
      { topic: 'zigbee2mqtt/bulb', payload: { state: 'ON', update: { state: 'idle', installed_version: 16777472, latest_version: 16777472 } }, state: 'off', attributes: { installed_version: '16777472' } },
    ],
    commands: [{ service: 'install', publish: ['zigbee2mqtt/bridge/request/device/ota_update/update {"id": "0x000b57fffec6a5b2"}'] }],
  },
  {
    id: 'z2m select: power-on behaviour', source: SRC, topic: 'homeassistant/select/0x000b57fffec6a5b2/power_on_behavior/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/bulb/set/power_on_behavior', device: bulb, entity_category: 'config', icon: 'mdi:power-settings', name: 'Power-on behavior',
      object_id: 'bulb_power_on_behavior', default_entity_id: 'select.bulb_power_on_behavior', options: ['off', 'on', 'toggle', 'previous'], origin,
      state_topic: 'zigbee2mqtt/bulb', unique_id: '0x000b57fffec6a5b2_power_on_behavior_zigbee2mqtt', value_template: '{{ value_json["power_on_behavior"] }}',
    },
    entity_id: 'select.bulb_power_on_behavior', friendly_name: 'bulb Power-on behavior',
    steps: [{ topic: 'zigbee2mqtt/bulb', payload: { state: 'ON', power_on_behavior: 'previous' }, state: 'previous' }],
    commands: [{ service: 'select_option', data: { option: 'on' }, publish: ['zigbee2mqtt/bulb/set/power_on_behavior on'] }],
  },
  {
    id: 'z2m button: identify (no name → device class name)', source: SRC, topic: 'homeassistant/button/0x000b57fffec6a5b2/identify/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/bulb/set/identify', device: bulb, device_class: 'identify', entity_category: 'config', object_id: 'bulb_identify',
      default_entity_id: 'button.bulb_identify', origin, payload_press: 'identify', unique_id: '0x000b57fffec6a5b2_identify_zigbee2mqtt',
    },
    entity_id: 'button.bulb_identify', friendly_name: 'bulb Identify',
    commands: [{ service: 'press', publish: ['zigbee2mqtt/bulb/set/identify identify'], state: TIMESTAMP }],
  },
  {
    id: 'z2m binary_sensor: occupancy (boolean payloads)', source: SRC, topic: 'homeassistant/binary_sensor/0x0017880104e45521/occupancy/config',
    config: {
      availability, device_class: 'occupancy', object_id: 'motion_occupancy', default_entity_id: 'binary_sensor.motion_occupancy', origin, payload_off: false, payload_on: true,
      device: { identifiers: ['zigbee2mqtt_0x0017880104e45521'], manufacturer: 'Aqara', model: 'Motion sensor', model_id: 'RTCGQ11LM', name: 'motion', via_device: via },
      state_topic: 'zigbee2mqtt/motion', unique_id: '0x0017880104e45521_occupancy_zigbee2mqtt', value_template: '{{ value_json.occupancy }}',
    },
    entity_id: 'binary_sensor.motion_occupancy', friendly_name: 'motion Occupancy',
    steps: [
      { topic: 'zigbee2mqtt/motion', payload: { occupancy: true, illuminance: 30 }, state: 'on', attributes: { device_class: 'occupancy' } },
      { topic: 'zigbee2mqtt/motion', payload: { occupancy: false, illuminance: 30 }, state: 'off' },
    ],
  },
  {
    id: 'z2m lock: Yale lock (state_locked LOCK)', source: SRC, topic: 'homeassistant/lock/0x0017880104e45560/lock/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/door_lock/set', name: null, object_id: 'door_lock', default_entity_id: 'lock.door_lock', origin,
      device: { identifiers: ['zigbee2mqtt_0x0017880104e45560'], manufacturer: 'Yale', model: 'Real living lock', model_id: 'YRD426NRSC', name: 'door_lock', via_device: via },
      payload_lock: 'LOCK', payload_unlock: 'UNLOCK', state_locked: 'LOCK', state_unlocked: 'UNLOCK', state_topic: 'zigbee2mqtt/door_lock',
      unique_id: '0x0017880104e45560_lock_zigbee2mqtt', value_template: '{{ value_json.state }}',
    },
    entity_id: 'lock.door_lock', friendly_name: 'door_lock',
    steps: [{ topic: 'zigbee2mqtt/door_lock', payload: { state: 'LOCK', lock_state: 'locked' }, state: 'locked' }, { topic: 'zigbee2mqtt/door_lock', payload: { state: 'UNLOCK' }, state: 'unlocked' }],
    commands: [{ service: 'lock', publish: ['zigbee2mqtt/door_lock/set LOCK'] }],
  },
  {
    id: 'z2m bridge offline marks its devices unavailable', source: SRC, topic: 'homeassistant/switch/0x0017880104e45542/switch_left/config',
    config: {
      availability, command_topic: 'zigbee2mqtt/wall_switch_double/left/set', device: wallSwitch, name: 'Left', payload_off: 'OFF', payload_on: 'ON',
      state_topic: 'zigbee2mqtt/wall_switch_double', object_id: 'wall_switch_double_left', default_entity_id: 'switch.wall_switch_double_left',
      unique_id: '0x0017880104e45542_switch_left_zigbee2mqtt', origin, value_template: '{{ value_json["state_left"] }}',
    },
    entity_id: 'switch.wall_switch_double_left',
    steps: [
      { topic: 'zigbee2mqtt/wall_switch_double', payload: { state_left: 'ON', state_right: 'ON' }, state: 'on' },
      { topic: 'zigbee2mqtt/bridge/state', payload: { state: 'offline' }, state: 'unavailable' },
      { topic: 'zigbee2mqtt/bridge/state', payload: { state: 'online' }, state: 'on' },
    ],
  },
];
