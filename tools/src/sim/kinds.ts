/**
 * Simulated device kinds: each declares its Home Assistant discovery configs, a way to
 * drift realistically over time, and how it reacts to commands (publishing its new state,
 * as a real device does).
 */

import type { SimKind } from './kind-types.ts';
import { ZIGBEE_KINDS } from './kinds-zigbee.ts';
import { TASMOTA_ESPHOME_KINDS } from './kinds-tasmota-esphome.ts';

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const clamp = (n: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, n));
const onOff = (v: unknown) => (v ? 'ON' : 'OFF');

const light: SimKind = {
  kind: 'light',
  model: 'SimBulb W1',
  entities: (b) => [
    {
      component: 'light',
      objectId: 'light',
      config: {
        name: null,
        cmd_t: `${b}/light/set`,
        stat_t: `${b}/light/state`,
        bri_cmd_t: `${b}/light/brightness/set`,
        bri_stat_t: `${b}/light/brightness`,
      },
    },
  ],
  initial: (rng) => ({ on: rng() > 0.5, brightness: Math.round(rng() * 254) + 1 }),
  states: (b, s) => [
    { topic: `${b}/light/state`, payload: onOff(s.on) },
    { topic: `${b}/light/brightness`, payload: String(s.brightness) },
  ],
  tick: () => [],
  command(b, s, topic, payload) {
    if (topic.endsWith('/brightness/set')) {
      s.brightness = clamp(Number(payload) || 0, 0, 255);
      s.on = (s.brightness as number) > 0;
    } else if (payload === 'ON') s.on = true;
    else if (payload === 'OFF') s.on = false;
    return light.states(b, s);
  },
};

const rgbLight: SimKind = {
  kind: 'rgb_light',
  model: 'SimStrip RGB',
  entities: (b) => [
    {
      component: 'light',
      objectId: 'strip',
      config: {
        name: null,
        schema: 'json',
        cmd_t: `${b}/strip/set`,
        stat_t: `${b}/strip`,
        brightness: true,
        sup_clrm: ['rgb', 'color_temp'],
      },
    },
  ],
  initial: () => ({ state: 'OFF', brightness: 128, color: { r: 255, g: 180, b: 90 }, color_mode: 'rgb' }),
  states: (b, s) => [{ topic: `${b}/strip`, payload: JSON.stringify(s) }],
  tick: () => [],
  command(b, s, _topic, payload) {
    let cmd: Record<string, unknown>;
    try {
      cmd = JSON.parse(payload);
    } catch {
      return [];
    }
    if (cmd.state === 'ON' || cmd.state === 'OFF') s.state = cmd.state;
    if (typeof cmd.brightness === 'number') s.brightness = cmd.brightness;
    if (cmd.color && typeof cmd.color === 'object') {
      s.color = cmd.color;
      s.color_mode = 'rgb';
    }
    if (typeof cmd.color_temp === 'number') {
      s.color_temp = cmd.color_temp;
      s.color_mode = 'color_temp';
    }
    return rgbLight.states(b, s);
  },
};

const plug: SimKind = {
  kind: 'plug',
  model: 'SimPlug P1',
  entities: (b) => [
    { component: 'switch', objectId: 'relay', config: { name: null, cmd_t: `${b}/relay/set`, stat_t: `${b}/relay` } },
    {
      component: 'sensor',
      objectId: 'power',
      config: {
        name: 'Power',
        stat_t: `${b}/energy`,
        val_tpl: '{{ value_json.power }}',
        unit_of_meas: 'W',
        dev_cla: 'power',
        stat_cla: 'measurement',
        json_attr_t: `${b}/energy`,
        json_attr_tpl: '{{ value_json.meta | tojson }}',
      },
    },
  ],
  initial: (rng) => ({ on: rng() > 0.3, power: 0 }),
  states: (b, s) => [
    { topic: `${b}/relay`, payload: onOff(s.on) },
    {
      topic: `${b}/energy`,
      payload: JSON.stringify({ power: s.power, meta: { voltage: 230, current: round((s.power as number) / 230, 3) } }),
    },
  ],
  tick(b, s, rng) {
    s.power = s.on ? round(40 + rng() * 20, 1) : 0;
    return [plug.states(b, s)[1]];
  },
  command(b, s, _t, payload) {
    s.on = payload === 'ON' ? true : payload === 'OFF' ? false : s.on;
    return plug.states(b, s);
  },
};

const climateSensor: SimKind = {
  kind: 'climate_sensor',
  model: 'SimTH T2',
  entities: (b) => [
    {
      component: 'sensor',
      objectId: 'temperature',
      config: {
        name: 'Temperature',
        stat_t: `${b}/th`,
        val_tpl: '{{ value_json.temperature }}',
        unit_of_meas: '°C',
        dev_cla: 'temperature',
        stat_cla: 'measurement',
      },
    },
    {
      component: 'sensor',
      objectId: 'humidity',
      config: {
        name: 'Humidity',
        stat_t: `${b}/th`,
        val_tpl: '{{ value_json.humidity }}',
        unit_of_meas: '%',
        dev_cla: 'humidity',
        stat_cla: 'measurement',
      },
    },
  ],
  initial: (rng) => ({ temperature: round(19 + rng() * 4), humidity: Math.round(40 + rng() * 15) }),
  states: (b, s) => [{ topic: `${b}/th`, payload: JSON.stringify(s) }],
  tick(b, s, rng) {
    s.temperature = round(clamp((s.temperature as number) + (rng() - 0.5) * 0.4, 10, 35));
    s.humidity = Math.round(clamp((s.humidity as number) + (rng() - 0.5) * 2, 20, 90));
    return climateSensor.states(b, s);
  },
  command: () => [],
};

const motion: SimKind = {
  kind: 'motion',
  model: 'SimPIR M1',
  entities: (b) => [
    {
      component: 'binary_sensor',
      objectId: 'motion',
      config: { name: 'Motion', stat_t: `${b}/motion`, dev_cla: 'motion' },
    },
  ],
  initial: () => ({ motion: false }),
  states: (b, s) => [{ topic: `${b}/motion`, payload: onOff(s.motion) }],
  tick(b, s, rng) {
    s.motion = s.motion ? rng() > 0.5 : rng() > 0.8;
    return motion.states(b, s);
  },
  command: () => [],
};

const blind: SimKind = {
  kind: 'blind',
  model: 'SimBlind B1',
  entities: (b) => [
    {
      component: 'cover',
      objectId: 'blind',
      config: {
        name: null,
        cmd_t: `${b}/blind/set`,
        stat_t: `${b}/blind/state`,
        pos_t: `${b}/blind/position`,
        set_pos_t: `${b}/blind/position/set`,
        dev_cla: 'blind',
      },
    },
  ],
  initial: (rng) => ({ position: Math.round(rng() * 100) }),
  states: (b, s) => [
    { topic: `${b}/blind/position`, payload: String(s.position) },
    { topic: `${b}/blind/state`, payload: s.position === 0 ? 'closed' : 'open' },
  ],
  tick: () => [],
  command(b, s, topic, payload) {
    if (topic.endsWith('/position/set')) s.position = clamp(Math.round(Number(payload)), 0, 100);
    else if (payload === 'OPEN') s.position = 100;
    else if (payload === 'CLOSE') s.position = 0;
    else if (payload !== 'STOP') return [];
    return blind.states(b, s);
  },
};

const lock: SimKind = {
  kind: 'lock',
  model: 'SimLock L1',
  entities: (b) => [
    { component: 'lock', objectId: 'lock', config: { name: null, cmd_t: `${b}/lock/set`, stat_t: `${b}/lock/state` } },
  ],
  initial: () => ({ locked: true }),
  states: (b, s) => [{ topic: `${b}/lock/state`, payload: s.locked ? 'LOCKED' : 'UNLOCKED' }],
  tick: () => [],
  command(b, s, _t, payload) {
    if (payload === 'LOCK') s.locked = true;
    else if (payload === 'UNLOCK') s.locked = false;
    return lock.states(b, s);
  },
};

const thermostat: SimKind = {
  kind: 'thermostat',
  model: 'SimTherm C1',
  entities: (b) => [
    {
      component: 'climate',
      objectId: 'thermostat',
      config: {
        name: null,
        modes: ['off', 'heat', 'cool', 'auto'],
        mode_cmd_t: `${b}/hvac/mode/set`,
        mode_stat_t: `${b}/hvac/mode`,
        temp_cmd_t: `${b}/hvac/target/set`,
        temp_stat_t: `${b}/hvac/target`,
        curr_temp_t: `${b}/hvac/current`,
        min_temp: 10,
        max_temp: 30,
        temp_step: 0.5,
      },
    },
  ],
  initial: (rng) => ({ mode: 'heat', target: 21, current: round(19 + rng() * 3) }),
  states: (b, s) => [
    { topic: `${b}/hvac/mode`, payload: String(s.mode) },
    { topic: `${b}/hvac/target`, payload: String(s.target) },
    { topic: `${b}/hvac/current`, payload: String(s.current) },
  ],
  tick(b, s, rng) {
    const target = s.mode === 'off' ? 16 : (s.target as number);
    s.current = round((s.current as number) + (target - (s.current as number)) * 0.1 + (rng() - 0.5) * 0.2);
    return [thermostat.states(b, s)[2]];
  },
  command(b, s, topic, payload) {
    if (topic.endsWith('/mode/set')) s.mode = payload;
    else if (topic.endsWith('/target/set')) s.target = Number(payload);
    return thermostat.states(b, s).slice(0, 2);
  },
};

const fan: SimKind = {
  kind: 'fan',
  model: 'SimFan F1',
  entities: (b) => [
    {
      component: 'fan',
      objectId: 'fan',
      config: {
        name: null,
        cmd_t: `${b}/fan/set`,
        stat_t: `${b}/fan/state`,
        pct_cmd_t: `${b}/fan/speed/set`,
        pct_stat_t: `${b}/fan/speed`,
        spd_rng_min: 1,
        spd_rng_max: 3,
      },
    },
  ],
  initial: () => ({ on: false, speed: 1 }),
  states: (b, s) => [
    { topic: `${b}/fan/state`, payload: onOff(s.on) },
    { topic: `${b}/fan/speed`, payload: String(s.speed) },
  ],
  tick: () => [],
  command(b, s, topic, payload) {
    if (topic.endsWith('/speed/set')) {
      s.speed = clamp(Number(payload) || 1, 1, 3);
      s.on = true;
    } else s.on = payload === 'ON';
    return fan.states(b, s);
  },
};

const speaker: SimKind = {
  kind: 'speaker',
  model: 'SimSpeaker S1',
  entities: (b) => [
    {
      component: 'number',
      objectId: 'volume',
      config: {
        name: 'Volume',
        cmd_t: `${b}/volume/set`,
        stat_t: `${b}/volume`,
        min: 0,
        max: 100,
        step: 1,
        unit_of_meas: '%',
      },
    },
    {
      component: 'select',
      objectId: 'source',
      config: { name: 'Source', cmd_t: `${b}/source/set`, stat_t: `${b}/source`, ops: ['radio', 'bluetooth', 'aux'] },
    },
    { component: 'button', objectId: 'restart', config: { name: 'Restart', cmd_t: `${b}/restart`, ent_cat: 'config' } },
  ],
  initial: () => ({ volume: 30, source: 'radio' }),
  states: (b, s) => [
    { topic: `${b}/volume`, payload: String(s.volume) },
    { topic: `${b}/source`, payload: String(s.source) },
  ],
  tick: () => [],
  command(b, s, topic, payload) {
    if (topic.endsWith('/volume/set')) s.volume = clamp(Number(payload) || 0, 0, 100);
    else if (topic.endsWith('/source/set')) s.source = payload;
    else return [];
    return speaker.states(b, s);
  },
};

/** New kinds go at the end: a device's kind follows its index, and tests name devices by it. */
export const KINDS: SimKind[] = [
  light,
  climateSensor,
  plug,
  motion,
  rgbLight,
  blind,
  lock,
  thermostat,
  fan,
  speaker,
  ...ZIGBEE_KINDS,
  ...TASMOTA_ESPHOME_KINDS,
];
