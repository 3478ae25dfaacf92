import { TIMESTAMP, type CorpusEntry } from './types.ts';

/** The examples of Home Assistant's MQTT documentation (home-assistant.io source/_integrations/*.mqtt.markdown), as discovery configs. */
const doc = (name: string) => `Home Assistant home-assistant.io source/_integrations/${name}.mqtt.markdown`;

export const HA_DOCS: CorpusEntry[] = [
  {
    id: 'docs siren: full configuration (tones, JSON command)', source: doc('siren'), topic: 'homeassistant/siren/intrusion/config',
    config: {
      unique_id: 'custom_siren', name: 'Intrusion siren', state_topic: 'home/alarm/siren1', command_topic: 'home/alarm/siren1/set', available_tones: ['ping', 'siren'],
      availability: [{ topic: 'home/alarm/siren1/available' }], payload_on: 'ON', payload_off: 'OFF', state_on: 'ON', state_off: 'OFF', optimistic: false, qos: 0, retain: true,
    },
    entity_id: 'siren.intrusion_siren', friendly_name: 'Intrusion siren',
    initial: { state: null, attributes: { available_tones: ['ping', 'siren'], supported_features: 31 } },
    steps: [
      { topic: 'home/alarm/siren1', payload: 'ON', state: 'on' },
      { topic: 'home/alarm/siren1', payload: { state: 'ON', tone: 'siren', volume_level: 0.5 }, state: 'on', attributes: { tone: 'siren', volume_level: 0.5 } },
      { topic: 'home/alarm/siren1', payload: 'OFF', state: 'off' },
    ],
    commands: [
      { service: 'turn_on', data: { tone: 'ping', duration: 5 }, publish: ['home/alarm/siren1/set {"state":"ON","tone":"ping","duration":5}'] },
      { service: 'turn_on', publish: ['home/alarm/siren1/set {"state":"ON"}'] },
      { service: 'turn_off', publish: ['home/alarm/siren1/set {"state":"OFF"}'] },
    ],
  },
  {
    id: 'docs siren: on/off only siren on a Tasmota relay', source: doc('siren'), topic: 'homeassistant/siren/garage/config',
    config: {
      unique_id: 'tasmota_siren', name: 'garage', state_topic: 'stat/SIREN/RESULT', command_topic: 'cmnd/SIREN/POWER', availability_topic: 'tele/SIREN/LWT',
      command_template: '{{ value }}', state_value_template: '{{ value_json.POWER }}', payload_on: 'ON', payload_off: 'OFF', payload_available: 'Online', payload_not_available: 'Offline',
    },
    entity_id: 'siren.garage', friendly_name: 'garage',
    steps: [{ topic: 'stat/SIREN/RESULT', payload: { POWER: 'ON' }, state: 'on' }, { topic: 'tele/SIREN/LWT', payload: 'Offline', state: 'unavailable' }, { topic: 'tele/SIREN/LWT', payload: 'Online', state: 'on' }],
    commands: [{ service: 'turn_off', publish: ['cmnd/SIREN/POWER OFF'] }, { service: 'turn_on', publish: ['cmnd/SIREN/POWER ON'] }],
  },
  {
    id: 'docs scene: party scene with a device', source: doc('scene'), topic: 'homeassistant/scene/living_room_party/config',
    config: {
      unique_id: 'living_room_party_scene', name: 'Party Scene', command_topic: 'home/living_room/party_scene/set', availability: [{ topic: 'home/living_room/party_scene/available' }],
      payload_on: 'ON', qos: 0, retain: true, device: { name: 'Living Room', identifiers: 'livingroom_lights' }, entity_category: 'config',
    },
    entity_id: 'scene.living_room_party_scene', friendly_name: 'Living Room Party Scene', device: { name: 'Living Room', identifiers: ['livingroom_lights'] },
    initial: { state: null },
    commands: [{ service: 'turn_on', publish: ['home/living_room/party_scene/set ON'], state: TIMESTAMP }],
  },
  {
    id: 'docs scene: Tasmota backlog payload', source: doc('scene'), topic: 'homeassistant/scene/movie_night/config',
    config: { unique_id: 'movie_night', name: 'Movie night', command_topic: 'cmnd/tasmota/Backlog', payload_on: 'Power1 ON; Dimmer 20' },
    entity_id: 'scene.movie_night', friendly_name: 'Movie night',
    commands: [{ service: 'turn_on', publish: ['cmnd/tasmota/Backlog Power1 ON; Dimmer 20'], state: TIMESTAMP }],
  },
  {
    id: 'docs update: Shelly firmware (templates, latest_version_topic)', source: doc('update'), topic: 'homeassistant/update/shelly_plug_s/config',
    config: {
      name: 'Shelly Plug S Firmware Update', title: 'Shelly Plug S Firmware', release_url: 'https://shelly-api-docs.shelly.cloud/rpc/firmware',
      entity_picture: 'https://brands.home-assistant.io/_/shelly/icon.png', state_topic: 'shellies/shellyplug-s-112233/info', value_template: "{{ value_json['update'].old_version }}",
      latest_version_topic: 'shellies/shellyplug-s-112233/info',
      latest_version_template: "{% if value_json['update'].new_version %}{{ value_json['update'].new_version }}{% else %}{{ value_json['update'].old_version }}{% endif %}",
      device_class: 'firmware', command_topic: 'shellies/shellyplug-s-112233/command', payload_install: 'update_fw',
    },
    entity_id: 'update.shelly_plug_s_firmware_update', friendly_name: 'Shelly Plug S Firmware Update',
    steps: [
      {
        topic: 'shellies/shellyplug-s-112233/info', payload: { update: { status: 'pending', has_update: true, new_version: '20230913-114008/v1.14.0', old_version: '20230109-124016/v1.12.2' } },
        state: 'on', attributes: { installed_version: '20230109-124016/v1.12.2', latest_version: '20230913-114008/v1.14.0', title: 'Shelly Plug S Firmware', release_url: 'https://shelly-api-docs.shelly.cloud/rpc/firmware' },
      },
      { topic: 'shellies/shellyplug-s-112233/info', payload: { update: { status: 'idle', has_update: false, new_version: '', old_version: '20230913-114008/v1.14.0' } }, state: 'off' },
    ],
    commands: [{ service: 'install', publish: ['shellies/shellyplug-s-112233/command update_fw'] }],
  },
  {
    id: 'docs update: JSON state payload', source: doc('update'), topic: 'homeassistant/update/device_firmware/config',
    config: { name: 'Device Firmware', unique_id: 'device_fw', state_topic: 'amazing-device/state', command_topic: 'amazing-device/command', payload_install: 'install' },
    entity_id: 'update.device_firmware',
    initial: { state: null, attributes: { installed_version: null, latest_version: null, skipped_version: null, auto_update: false } },
    steps: [{
      topic: 'amazing-device/state',
      payload: { installed_version: '1.21.0', latest_version: '1.22.0', title: 'Device Firmware', release_url: 'https://example.com/release', release_summary: 'A new version of our amazing firmware', entity_picture: 'https://example.com/icon.png' },
      state: 'on', attributes: { installed_version: '1.21.0', latest_version: '1.22.0', release_summary: 'A new version of our amazing firmware', entity_picture: 'https://example.com/icon.png' },
    }, { topic: 'amazing-device/state', payload: { installed_version: '1.22.0' }, state: 'off' }, { topic: 'amazing-device/state', payload: '1.21.5', state: 'on', attributes: { installed_version: '1.21.5' } }],
    commands: [{ service: 'install', publish: ['amazing-device/command install'] }],
  },
  {
    id: 'docs event: doorbell with extra attributes', source: doc('event'), topic: 'homeassistant/event/doorbell/config',
    config: { name: 'Doorbell', unique_id: 'doorbell_event', state_topic: 'home/doorbell/state', event_types: ['press', 'hold'], availability: [{ topic: 'home/doorbell/available' }], qos: 0, device_class: 'doorbell' },
    entity_id: 'event.doorbell', friendly_name: 'Doorbell',
    steps: [
      { topic: 'home/doorbell/state', payload: { event_type: 'press', duration: 0.1 }, state: TIMESTAMP, attributes: { event_type: 'press', duration: 0.1, event_types: ['press', 'hold'] } },
      { topic: 'home/doorbell/state', payload: { event_type: 'hold' }, state: TIMESTAMP, attributes: { event_type: 'hold', duration: undefined } },
      { topic: 'home/doorbell/available', payload: 'offline', state: 'unavailable' },
    ],
  },
  {
    id: 'docs event: button with value_template', source: doc('event'), topic: 'homeassistant/event/shelly_button/config',
    config: {
      name: 'Shelly button', unique_id: 'shelly_button_1', state_topic: 'shellies/button1/input_event/0', event_types: ['S', 'SS', 'SSS', 'L'], device_class: 'button',
      value_template: '{ "event_type": "{{ value_json.event }}", "count": {{ value_json.event_cnt }} }',
    },
    entity_id: 'event.shelly_button', friendly_name: 'Shelly button',
    steps: [{ topic: 'shellies/button1/input_event/0', payload: { event: 'SS', event_cnt: 3 }, state: TIMESTAMP, attributes: { event_type: 'SS', count: 3, device_class: 'button' } }],
  },
  {
    id: 'docs device trigger: IKEA remote (zigbee2mqtt 1.14)', source: 'Home Assistant home-assistant.io source/_integrations/device_trigger.mqtt.markdown',
    topic: 'homeassistant/device_automation/0x90fd9ffffedf1267/action_arrow_left_click/config',
    config: {
      automation_type: 'trigger', type: 'button_short_press', subtype: 'button_1', topic: 'zigbee2mqtt/0x90fd9ffffedf1267/action', payload: 'arrow_left_click',
      device: { identifiers: ['zigbee2mqtt_0x90fd9ffffedf1267'], name: '0x90fd9ffffedf1267', sw_version: 'Zigbee2MQTT 1.14.0', model: 'TRADFRI remote control (E1524/E1810)', manufacturer: 'IKEA' },
    },
    device: { name: '0x90fd9ffffedf1267', model: 'TRADFRI remote control (E1524/E1810)', sw_version: 'Zigbee2MQTT 1.14.0' },
    triggers: [{ payload: 'arrow_left_click', fires: true }, { payload: 'arrow_right_click', fires: false }],
  },
  {
    id: 'docs device trigger: value_template picks the payload', source: 'Home Assistant home-assistant.io source/_integrations/device_trigger.mqtt.markdown',
    topic: 'homeassistant/device_automation/shelly1/input_0_long/config',
    config: {
      automation_type: 'trigger', type: 'button_long_press', subtype: 'button_1', topic: 'shellies/shelly1/input_event/0', payload: 'L', value_template: '{{ value_json.event }}',
      device: { identifiers: ['shelly1-AABBCC'], name: 'Shelly 1' },
    },
    device: { name: 'Shelly 1' },
    triggers: [{ payload: '{"event":"L","event_cnt":1}', fires: true }, { payload: '{"event":"S","event_cnt":2}', fires: false }],
  },
  {
    id: 'docs light JSON: brightness and RGB', source: doc('light'), topic: 'homeassistant/light/rgb1/config',
    config: { schema: 'json', name: 'mqtt_json_light_1', unique_id: 'json_rgb1', state_topic: 'home/rgb1', command_topic: 'home/rgb1/set', brightness: true, supported_color_modes: ['rgb'] },
    entity_id: 'light.mqtt_json_light_1',
    steps: [{ topic: 'home/rgb1', payload: { state: 'ON', brightness: 255, color_mode: 'rgb', color: { r: 0, g: 255, b: 0 } }, state: 'on', attributes: { rgb_color: [0, 255, 0], hs_color: [120, 100], color_mode: 'rgb' } }],
    commands: [
      { service: 'turn_on', data: { rgb_color: [255, 128, 0], brightness: 200 }, publish: ['home/rgb1/set {"state":"ON","color":{"r":255,"g":128,"b":0},"brightness":200}'] },
      { service: 'turn_on', data: { xy_color: [0.701, 0.299] }, publish: ['home/rgb1/set {"state":"ON","color":{"r":255,"g":0,"b":0}}'] },
    ],
  },
  {
    id: 'docs light JSON: brightness scaled to 4095', source: doc('light'), topic: 'homeassistant/light/scaled/config',
    config: { schema: 'json', name: 'mqtt_json_light_scaled', unique_id: 'json_scaled', state_topic: 'home/light/scaled', command_topic: 'home/light/scaled/set', brightness: true, brightness_scale: 4095, supported_color_modes: ['brightness'] },
    entity_id: 'light.mqtt_json_light_scaled',
    steps: [{ topic: 'home/light/scaled', payload: { state: 'ON', brightness: 2048 }, state: 'on', attributes: { brightness: 128, color_mode: 'brightness' } }],
    commands: [{ service: 'turn_on', data: { brightness: 128 }, publish: ['home/light/scaled/set {"state":"ON","brightness":2056}'] }],
  },
  {
    id: 'docs light JSON: HS colour', source: doc('light'), topic: 'homeassistant/light/hs1/config',
    config: { schema: 'json', name: 'mqtt_json_hs_light', unique_id: 'json_hs', state_topic: 'home/light/hs', command_topic: 'home/light/hs/set', brightness: true, supported_color_modes: ['hs'] },
    entity_id: 'light.mqtt_json_hs_light',
    steps: [{ topic: 'home/light/hs', payload: { state: 'ON', color: { h: 240, s: 100 } }, state: 'on', attributes: { color_mode: 'hs', hs_color: [240, 100], rgb_color: [0, 0, 255] } }],
    commands: [
      { service: 'turn_on', data: { hs_color: [359, 78], brightness: 255 }, publish: ['home/light/hs/set {"state":"ON","color":{"h":359,"s":78},"brightness":255}'] },
      { service: 'turn_on', data: { rgb_color: [255, 0, 0] }, publish: ['home/light/hs/set {"state":"ON","color":{"h":0,"s":100}}'] },
    ],
  },
  {
    id: 'docs light JSON: effects', source: doc('light'), topic: 'homeassistant/light/fx1/config',
    config: { schema: 'json', name: 'mqtt_json_fx_light', unique_id: 'json_fx', state_topic: 'home/light/fx', command_topic: 'home/light/fx/set', brightness: true, supported_color_modes: ['rgb'], effect: true, effect_list: ['rainbow', 'colorloop'] },
    entity_id: 'light.mqtt_json_fx_light',
    steps: [{ topic: 'home/light/fx', payload: { state: 'ON', effect: 'colorloop' }, state: 'on', attributes: { effect: 'colorloop', effect_list: ['rainbow', 'colorloop'], color_mode: 'rgb' } }],
    commands: [{ service: 'turn_on', data: { effect: 'rainbow', transition: 1 }, publish: ['home/light/fx/set {"state":"ON","transition":1,"effect":"rainbow"}'] }],
  },
  {
    id: 'docs light JSON: optimistic (no state topic)', source: doc('light'), topic: 'homeassistant/light/opt1/config',
    config: { schema: 'json', name: 'mqtt_json_optimistic', unique_id: 'json_opt', command_topic: 'home/light/opt/set', brightness: true, supported_color_modes: ['xy'] },
    entity_id: 'light.mqtt_json_optimistic',
    commands: [
      { service: 'turn_on', data: { xy_color: [0.3, 0.3], brightness: 10 }, publish: ['home/light/opt/set {"state":"ON","color":{"x":0.3,"y":0.3},"brightness":10}'], state: 'on', attributes: { xy_color: [0.3, 0.3], color_mode: 'xy', brightness: 10 } },
      { service: 'turn_off', publish: ['home/light/opt/set {"state":"OFF"}'], state: 'off', attributes: { brightness: null, color_mode: null, xy_color: null, hs_color: null } },
    ],
  },
  {
    id: 'docs light default schema: effect topic', source: doc('light'), topic: 'homeassistant/light/office/config',
    config: {
      name: 'Office light', unique_id: 'office_light', state_topic: 'office/light/status', command_topic: 'office/light/switch', brightness_state_topic: 'office/light/brightness',
      brightness_command_topic: 'office/light/brightness/set', effect_command_topic: 'office/light/effect/set', effect_state_topic: 'office/light/effect', effect_list: ['rainbow', 'flash'],
      payload_on: 'ON', payload_off: 'OFF',
    },
    entity_id: 'light.office_light',
    steps: [{ topic: 'office/light/status', payload: 'ON', state: 'on', attributes: { color_mode: 'brightness' } }, { topic: 'office/light/effect', payload: 'flash', attributes: { effect: 'flash', effect_list: ['rainbow', 'flash'] } }],
    commands: [{ service: 'turn_on', data: { effect: 'rainbow', brightness: 51 }, publish: ['office/light/brightness/set 51', 'office/light/effect/set rainbow', 'office/light/switch ON'] }],
  },
  {
    id: 'docs cover: tilt with tilt_min/max and opened/closed values', source: doc('cover'), topic: 'homeassistant/cover/living_room_cover/config',
    config: {
      name: 'MQTT Cover', unique_id: 'living_room_cover', command_topic: 'living-room-cover/set', state_topic: 'living-room-cover/state', qos: 0, retain: true,
      payload_open: 'OPEN', payload_close: 'CLOSE', payload_stop: 'STOP', state_open: 'open', state_opening: 'opening', state_closed: 'closed', state_closing: 'closing',
      optimistic: false, tilt_command_topic: 'living-room-cover/tilt', tilt_status_topic: 'living-room-cover/tilt-state',
      tilt_status_template: '{{ value_json["PWM"]["PWM1"] }}', tilt_min: 0, tilt_max: 180, tilt_closed_value: 70, tilt_opened_value: 180,
    },
    entity_id: 'cover.mqtt_cover', friendly_name: 'MQTT Cover',
    steps: [{ topic: 'living-room-cover/state', payload: 'closing', state: 'closing' }, { topic: 'living-room-cover/tilt-state', payload: { PWM: { PWM1: 90 } }, attributes: { current_tilt_position: 50 } }],
    commands: [
      { service: 'set_cover_tilt_position', data: { tilt_position: 50 }, publish: ['living-room-cover/tilt 90'] },
      { service: 'open_cover_tilt', publish: ['living-room-cover/tilt 180'] },
      { service: 'close_cover_tilt', publish: ['living-room-cover/tilt 70'] },
      { service: 'stop_cover', publish: ['living-room-cover/set STOP'] },
    ],
  },
  {
    id: 'docs cover: tilt only, optimistic', source: doc('cover'), topic: 'homeassistant/cover/slats/config',
    config: { name: 'Slats', unique_id: 'slats', tilt_command_topic: 'slats/tilt/set', tilt_command_template: '{"tilt": {{ value }}}' },
    entity_id: 'cover.slats',
    commands: [{ service: 'set_cover_tilt_position', data: { tilt_position: 30 }, publish: ['slats/tilt/set {"tilt": 30}'], attributes: { current_tilt_position: 30 } }],
  },
  {
    id: 'docs sensor: expire_after', source: doc('sensor'), topic: 'homeassistant/sensor/outdoor_temp/config',
    config: { name: 'Outdoor temperature', unique_id: 'outdoor_temp', state_topic: 'outdoor/temp', unit_of_measurement: '°C', device_class: 'temperature', expire_after: 1 },
    entity_id: 'sensor.outdoor_temperature',
    steps: [{ topic: 'outdoor/temp', payload: '4.5', state: '4.5' }, { topic: 'outdoor/other', payload: 'x', state: 'unavailable' }, { topic: 'outdoor/temp', payload: '4.6', state: '4.6' }],
  },
  {
    id: 'docs sensor: no name, no device class → platform default name', source: doc('sensor'), topic: 'homeassistant/sensor/plain/config',
    config: { unique_id: 'plain_sensor', state_topic: 'plain/value', device: { identifiers: ['plain-dev'], name: 'Bedroom' } },
    entity_id: 'sensor.bedroom_mqtt_sensor', friendly_name: 'Bedroom MQTT Sensor',
    steps: [{ topic: 'plain/value', payload: 'ok', state: 'ok' }],
  },
  {
    id: 'docs sensor: name null → the device name', source: doc('sensor'), topic: 'homeassistant/sensor/bedroom_temp/config',
    config: { unique_id: 'bedroom_temp', name: null, state_topic: 'bedroom/temp', device_class: 'temperature', unit_of_measurement: '°C', device: { identifiers: ['bedroom-thermo'], name: 'Bedroom thermometer' } },
    entity_id: 'sensor.bedroom_thermometer', friendly_name: 'Bedroom thermometer',
  },
  {
    id: 'docs sensor: no name with device class → sensor.bedroom_temperature', source: doc('sensor'), topic: 'homeassistant/sensor/bedroom_t2/config',
    config: { unique_id: 'bedroom_t2', state_topic: 'bedroom/t2', device_class: 'temperature', unit_of_measurement: '°C', device: { identifiers: ['bedroom-2'], name: 'Bedroom' } },
    entity_id: 'sensor.bedroom_temperature', friendly_name: 'Bedroom Temperature',
  },
  {
    id: 'docs binary_sensor: device-class name, expire_after', source: doc('binary_sensor'), topic: 'homeassistant/binary_sensor/garden_motion/config',
    config: { unique_id: 'garden_motion', state_topic: 'garden/motion', device_class: 'motion', expire_after: 1, device: { identifiers: ['garden-pir'], name: 'Garden' } },
    entity_id: 'binary_sensor.garden_motion', friendly_name: 'Garden Motion',
    steps: [{ topic: 'garden/motion', payload: 'ON', state: 'on' }, { topic: 'garden/other', payload: 'x', state: 'unavailable' }],
  },
  {
    id: 'docs switch: optimistic with command_template', source: doc('switch'), topic: 'homeassistant/switch/heater/config',
    config: { name: 'Heater', unique_id: 'heater', command_topic: 'home/heater/set', command_template: '{"power": "{{ value }}"}', optimistic: true, qos: 1, retain: true },
    entity_id: 'switch.heater',
    commands: [
      { service: 'turn_on', publish: ['home/heater/set {"power": "ON"}'], state: 'on' },
      { service: 'toggle', publish: ['home/heater/set {"power": "OFF"}'], state: 'off' },
    ],
  },
];
