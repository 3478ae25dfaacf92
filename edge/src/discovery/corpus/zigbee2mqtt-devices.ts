/** What zigbee2mqtt's configs share: source, origin, bridge availability and the test devices of its test suite. */
export const SRC = 'zigbee2mqtt lib/extension/homeassistant.ts (test/extensions/homeassistant.test.ts)';
export const origin = { name: 'Zigbee2MQTT', sw: '2.1.0', url: 'https://www.zigbee2mqtt.io' };
export const availability = [{ topic: 'zigbee2mqtt/bridge/state', value_template: '{{ value_json.state }}' }];
export const via = 'zigbee2mqtt_bridge_0x00124b00120144ae';
export const weather = {
  identifiers: ['zigbee2mqtt_0x0017880104e45522'],
  name: 'weather_sensor',
  model: 'Temperature and humidity sensor',
  model_id: 'WSDCGQ11LM',
  manufacturer: 'Aqara',
  via_device: via,
};
export const wallSwitch = {
  identifiers: ['zigbee2mqtt_0x0017880104e45542'],
  manufacturer: 'Aqara',
  model: 'Smart wall switch (no neutral, double rocker)',
  model_id: 'QBKG03LM',
  name: 'wall_switch_double',
  via_device: via,
};
export const bulb = {
  identifiers: ['zigbee2mqtt_0x000b57fffec6a5b2'],
  manufacturer: 'IKEA',
  model: 'TRADFRI bulb E26/E27, white spectrum, globe, opal, 980 lm',
  model_id: 'LED1545G12',
  name: 'bulb',
  via_device: via,
};
export const group = {
  identifiers: ['zigbee2mqtt_1221051039810110150109113116116_9'],
  name: 'HA Discovery Group',
  sw_version: 'Zigbee2MQTT 2.1.0',
  model: 'Group',
  manufacturer: 'Zigbee2MQTT',
  via_device: via,
};
export const remote = {
  identifiers: ['zigbee2mqtt_0x90fd9ffffedf1266'],
  name: 'remote',
  model: 'TRADFRI remote control',
  model_id: 'E1524/E1810',
  manufacturer: 'IKEA',
  via_device: via,
};
export const blind = {
  identifiers: ['zigbee2mqtt_0xf4ce368a38be56a1'],
  manufacturer: 'Siglis',
  model: 'zigfred plus smart in-wall switch',
  model_id: 'ZFP-1A-CH',
  name: 'zigfred_plus',
  via_device: via,
};
export const trv = {
  identifiers: ['zigbee2mqtt_0x0017882104a44559'],
  manufacturer: 'Tuya',
  model: 'Radiator valve with thermostat',
  model_id: 'TS0601_thermostat',
  name: 'TS0601_thermostat',
  via_device: via,
};
export const bosch = {
  identifiers: ['zigbee2mqtt_0x18fc2600000d7ae2'],
  manufacturer: 'Bosch',
  model: 'Radiator thermostat II',
  model_id: 'BTH-RA',
  name: 'bosch_radiator',
  sw_version: '3.05.09',
  via_device: via,
};
export const sensorBase = (key: string, id: string) => ({
  value_template: `{{ value_json["${key}"] }}`,
  state_topic: 'zigbee2mqtt/weather_sensor',
  object_id: `weather_sensor_${key}`,
  default_entity_id: `sensor.weather_sensor_${key}`,
  unique_id: `0x0017880104e45522_${id}_zigbee2mqtt`,
  origin,
  device: weather,
  availability,
});
export const WEATHER = {
  temperature: 21.53,
  humidity: 48.2,
  pressure: 1012.4,
  battery: 91,
  linkquality: 120,
  voltage: 3005,
};
