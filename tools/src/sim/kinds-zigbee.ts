import type { Publish, Rng, SimKind } from './kind-types.ts';

/**
 * zigbee2mqtt-style device kinds: one JSON state document per device on its base topic,
 * commands on `<base>/set` (or `<base>/set/<property>`), configs shaped as zigbee2mqtt's
 * Home Assistant extension shapes them (the thermostat's action map is zigbee2mqtt's own Jinja).
 */

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const clamp = (n: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, n));
const json = (payload: string): Record<string, unknown> | null => {
  try {
    const v = JSON.parse(payload);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};
const doc = (b: string, s: Record<string, unknown>): Publish[] => [{ topic: b, payload: JSON.stringify(s) }];
const tpl = (key: string) => `{{ value_json.${key} }}`;

const zThermostat: SimKind = {
  kind: 'zigbee_thermostat',
  model: 'SimTRV Z1 (zigbee2mqtt)',
  entities: (b) => [
    {
      component: 'climate',
      objectId: 'climate',
      config: {
        name: null,
        modes: ['off', 'heat', 'auto'],
        mode_cmd_t: `${b}/set/system_mode`,
        mode_stat_t: b,
        mode_stat_tpl: tpl('system_mode'),
        temp_cmd_t: `${b}/set/current_heating_setpoint`,
        temp_stat_t: b,
        temp_stat_tpl: tpl('current_heating_setpoint'),
        curr_temp_t: b,
        curr_temp_tpl: tpl('local_temperature'),
        act_t: b,
        // zigbee2mqtt's action_template: the device says heat/idle/cool, HA's hvac_action is heating/idle/cooling
        act_tpl:
          "{% set values = {None:None,'idle':'idle','heat':'heating','cool':'cooling','fan_only':'fan'} %}{{ values[value_json.running_state] }}",
        pr_mode_cmd_t: `${b}/set/preset`,
        pr_mode_stat_t: b,
        pr_mode_val_tpl: tpl('preset'),
        pr_modes: ['manual', 'eco', 'boost'],
        min_temp: '5',
        max_temp: '30',
        temp_step: 0.5,
        temp_unit: 'C',
      },
    },
    {
      component: 'sensor',
      objectId: 'battery',
      config: {
        stat_t: b,
        val_tpl: tpl('battery'),
        unit_of_meas: '%',
        dev_cla: 'battery',
        stat_cla: 'measurement',
        ent_cat: 'diagnostic',
      },
    },
  ],
  initial: (rng) => ({
    system_mode: 'heat',
    current_heating_setpoint: 21,
    local_temperature: round(18 + rng() * 2),
    running_state: 'heat',
    preset: 'manual',
    battery: 87,
  }),
  states: doc,
  tick(b, s, rng) {
    const target = s.system_mode === 'off' ? 15 : (s.current_heating_setpoint as number);
    s.local_temperature = round(
      (s.local_temperature as number) + (target - (s.local_temperature as number)) * 0.1 + (rng() - 0.5) * 0.1,
    );
    s.running_state = s.system_mode !== 'off' && (s.local_temperature as number) < target - 0.2 ? 'heat' : 'idle';
    return doc(b, s);
  },
  command(b, s, topic, payload) {
    const key = topic.slice(`${b}/set/`.length);
    if (key === 'current_heating_setpoint') s.current_heating_setpoint = clamp(Number(payload) || 5, 5, 30);
    else if (key === 'system_mode' || key === 'preset') s[key] = payload;
    else return [];
    return doc(b, s);
  },
};

const REMOTE_ACTIONS = ['on', 'off', 'brightness_move_up', 'brightness_move_down'];
const remote: SimKind = {
  kind: 'remote',
  model: 'SimRemote R1 (zigbee2mqtt)',
  entities: (b) => [
    ...REMOTE_ACTIONS.map((a) => ({
      component: 'device_automation',
      objectId: `action_${a}`,
      config: { atype: 'trigger', t: `${b}/action`, type: 'action', stype: a, pl: a },
    })),
    {
      component: 'event',
      objectId: 'action',
      config: {
        name: 'Action',
        stat_t: b,
        evt_typ: REMOTE_ACTIONS,
        ic: 'mdi:gesture-double-tap',
        val_tpl: '{"event_type": "{{ value_json.action }}"}',
      },
    },
    {
      component: 'sensor',
      objectId: 'battery',
      config: {
        stat_t: b,
        val_tpl: tpl('battery'),
        unit_of_meas: '%',
        dev_cla: 'battery',
        stat_cla: 'measurement',
        ent_cat: 'diagnostic',
      },
    },
  ],
  initial: () => ({ battery: 100 }),
  states: (b, s) => doc(b, { battery: s.battery }),
  /** now and then someone presses a button: the action topic (device triggers) and the state (event entity) */
  tick(b, s, rng: Rng) {
    if (rng() > 0.3) return [];
    const action = REMOTE_ACTIONS[Math.floor(rng() * REMOTE_ACTIONS.length)];
    return [
      { topic: `${b}/action`, payload: action },
      { topic: b, payload: JSON.stringify({ action, battery: s.battery }) },
    ];
  },
  command: () => [],
};

const tiltBlind: SimKind = {
  kind: 'tilt_blind',
  model: 'SimBlind T2 (zigbee2mqtt)',
  entities: (b) => [
    {
      component: 'cover',
      objectId: 'cover',
      config: {
        name: null,
        dev_cla: 'blind',
        cmd_t: `${b}/set`,
        stat_t: b,
        val_tpl: tpl('state'),
        stat_open: 'OPEN',
        stat_clsd: 'CLOSE',
        stat_stopped: 'STOP',
        pos_t: b,
        pos_tpl: tpl('position'),
        set_pos_t: `${b}/set`,
        set_pos_tpl: '{ "position": {{ position }} }',
        tilt_cmd_t: `${b}/set/tilt`,
        tilt_status_t: b,
        tilt_status_tpl: tpl('tilt'),
      },
    },
  ],
  initial: (rng) => ({ state: 'OPEN', position: Math.round(rng() * 100), tilt: 50 }),
  states: doc,
  tick: () => [],
  command(b, s, topic, payload) {
    if (topic === `${b}/set/tilt`) {
      s.tilt = clamp(Math.round(Number(payload)), 0, 100);
      return doc(b, s);
    }
    const cmd = json(payload);
    if (cmd && typeof cmd.position === 'number') s.position = clamp(Math.round(cmd.position), 0, 100);
    else if (payload === 'OPEN') s.position = 100;
    else if (payload === 'CLOSE') s.position = 0;
    else if (payload !== 'STOP') return [];
    s.state = s.position === 0 ? 'CLOSE' : 'OPEN';
    return doc(b, s);
  },
};

const effectLight: SimKind = {
  kind: 'effect_light',
  model: 'SimBulb C3 (zigbee2mqtt)',
  entities: (b) => [
    {
      component: 'light',
      objectId: 'light',
      config: {
        name: null,
        schema: 'json',
        cmd_t: `${b}/set`,
        stat_t: b,
        brightness: true,
        bri_scl: 254,
        sup_clrm: ['xy', 'color_temp'],
        min_mirs: 153,
        max_mirs: 500,
        effect: true,
        fx_list: ['blink', 'breathe', 'okay', 'channel_change', 'colorloop', 'finish_effect', 'stop_effect'],
      },
    },
  ],
  initial: () => ({
    state: 'OFF',
    brightness: 200,
    color: { x: 0.4576, y: 0.41 },
    color_mode: 'xy',
    color_temp: 370,
    effect: null,
  }),
  states: doc,
  tick: () => [],
  command(b, s, _topic, payload) {
    const cmd = json(payload);
    if (!cmd) return [];
    if (cmd.state === 'ON' || cmd.state === 'OFF') s.state = cmd.state;
    if (typeof cmd.brightness === 'number') s.brightness = clamp(cmd.brightness, 1, 254);
    const color = cmd.color as Record<string, unknown> | undefined;
    if (color && typeof color.x === 'number') {
      s.color = { x: color.x, y: color.y };
      s.color_mode = 'xy';
    }
    if (typeof cmd.color_temp === 'number') {
      s.color_temp = cmd.color_temp;
      s.color_mode = 'color_temp';
    }
    if (typeof cmd.effect === 'string') s.effect = cmd.effect;
    return doc(b, s);
  },
};

const siren: SimKind = {
  kind: 'siren',
  model: 'SimSiren S2',
  entities: (b) => [
    {
      component: 'siren',
      objectId: 'siren',
      config: { name: null, cmd_t: `${b}/set`, stat_t: b, available_tones: ['emergency', 'fire', 'burglar'] },
    },
  ],
  initial: () => ({ state: 'OFF', tone: 'emergency', duration: 10, volume_level: 0.5 }),
  states: doc,
  tick: () => [],
  // HA sends {"state": "ON"|"OFF", tone?, duration?, volume_level?} when the config has no command template
  command(b, s, _topic, payload) {
    const cmd = json(payload);
    if (!cmd) return [];
    for (const k of ['state', 'tone', 'duration', 'volume_level']) if (cmd[k] !== undefined) s[k] = cmd[k];
    return doc(b, s);
  },
};

const ota: SimKind = {
  kind: 'ota_device',
  model: 'SimPlug O1 (zigbee2mqtt OTA)',
  entities: (b) => [
    {
      component: 'switch',
      objectId: 'switch',
      config: { name: null, cmd_t: `${b}/set`, stat_t: b, val_tpl: tpl('state') },
    },
    {
      component: 'update',
      objectId: 'update',
      config: {
        name: null,
        dev_cla: 'firmware',
        ent_cat: 'config',
        stat_t: b,
        val_tpl: '{{ value_json.update.installed_version }}',
        l_ver_t: b,
        l_ver_tpl: '{{ value_json.update.latest_version }}',
        cmd_t: `${b}/ota/update`,
        pl_inst: '{"id": "ota"}',
      },
    },
  ],
  initial: () => ({
    state: 'ON',
    update: { state: 'available', installed_version: 16777216, latest_version: 16777472 },
  }),
  states: doc,
  tick: () => [],
  command(b, s, topic, payload) {
    const u = s.update as Record<string, unknown>;
    if (topic === `${b}/ota/update`) {
      u.installed_version = u.latest_version;
      u.state = 'idle';
    } else if (payload === 'ON' || payload === 'OFF') s.state = payload;
    else return [];
    return doc(b, s);
  },
};

export const ZIGBEE_KINDS: SimKind[] = [zThermostat, remote, tiltBlind, effectLight, siren, ota];
