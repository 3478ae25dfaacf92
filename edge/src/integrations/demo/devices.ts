/**
 * The demo home: a few devices of several domains whose states follow a deterministic
 * script (tick n → states), so tests can predict them and the UI sees them change.
 */
export interface DemoEntity {
  key: string;
  domain: 'light' | 'switch' | 'sensor' | 'binary_sensor' | 'cover';
  name: string;
  object_id: string;
  /** state and attributes at tick n (n = 0 at setup) */
  at(n: number): { state: string; attributes: Record<string, unknown> };
}

export interface DemoDevice {
  key: string;
  name: string;
  model: string;
  entities: DemoEntity[];
}

const round1 = (x: number) => Math.round(x * 10) / 10;

export const DEMO_DEVICES: DemoDevice[] = [
  {
    key: 'living_room_lamp',
    name: 'Living Room Lamp',
    model: 'Demo Bulb',
    entities: [
      {
        key: 'light',
        domain: 'light',
        name: 'Living Room Lamp',
        object_id: 'demo_living_room_lamp',
        at: (n) => {
          const on = Math.floor(n / 2) % 2 === 0;
          return {
            state: on ? 'on' : 'off',
            attributes: on
              ? { brightness: 80 + ((n * 37) % 176), color_mode: 'brightness', supported_color_modes: ['brightness'] }
              : { brightness: null, color_mode: null, supported_color_modes: ['brightness'] },
          };
        },
      },
    ],
  },
  {
    key: 'coffee_maker_plug',
    name: 'Coffee Maker Plug',
    model: 'Demo Plug',
    entities: [
      {
        key: 'switch',
        domain: 'switch',
        name: 'Coffee Maker',
        object_id: 'demo_coffee_maker',
        at: (n) => ({ state: n % 3 === 0 ? 'on' : 'off', attributes: {} }),
      },
    ],
  },
  {
    key: 'weather_station',
    name: 'Weather Station',
    model: 'Demo Climate Sensor',
    entities: [
      {
        key: 'temperature',
        domain: 'sensor',
        name: 'Outdoor Temperature',
        object_id: 'demo_outdoor_temperature',
        at: (n) => ({
          state: String(round1(18 + 4 * Math.sin(n / 3))),
          attributes: { unit_of_measurement: '°C', device_class: 'temperature', state_class: 'measurement' },
        }),
      },
      {
        key: 'humidity',
        domain: 'sensor',
        name: 'Outdoor Humidity',
        object_id: 'demo_outdoor_humidity',
        at: (n) => ({
          state: String(Math.round(55 + 15 * Math.cos(n / 4))),
          attributes: { unit_of_measurement: '%', device_class: 'humidity', state_class: 'measurement' },
        }),
      },
    ],
  },
  {
    key: 'front_door',
    name: 'Front Door',
    model: 'Demo Contact Sensor',
    entities: [
      {
        key: 'contact',
        domain: 'binary_sensor',
        name: 'Front Door',
        object_id: 'demo_front_door',
        at: (n) => ({ state: n % 4 === 1 ? 'on' : 'off', attributes: { device_class: 'door' } }),
      },
    ],
  },
  {
    key: 'garage_door',
    name: 'Garage Door',
    model: 'Demo Garage Opener',
    entities: [
      {
        key: 'cover',
        domain: 'cover',
        name: 'Garage Door',
        object_id: 'demo_garage_door',
        at: (n) => {
          // closed → opening → open → closing → closed …
          const phase = n % 4;
          const state = ['closed', 'opening', 'open', 'closing'][phase];
          const position = [0, 50, 100, 50][phase];
          return { state, attributes: { device_class: 'garage', current_position: position, supported_features: 15 } };
        },
      },
    ],
  },
];
