import type { Publish, SimKind } from './kind-types.ts';

/**
 * Tasmota- and ESPHome-style lights: configs shaped as Tasmota's (xdrv_12_home_assistant.ino) and
 * ESPHome's (mqtt_light.cpp) discovery shape them, commands answered as those firmwares do.
 * The simulator sets the availability topic itself (`online`/`offline`), so Tasmota's
 * `Online`/`Offline` payloads are left out; the topics are Tasmota's with FullTopic `%topic%/%prefix%/`.
 */

const clamp = (n: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, n));
const json = (payload: string): Record<string, unknown> | null => {
  try {
    const v = JSON.parse(payload);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

const TASMOTA_SCHEMES = ['0', '1', '2', '3', '4'];

/** Tasmota's teleperiod state: POWER, Dimmer (0-100), HSBColor "h,s,b", Scheme. */
function tasmotaState(b: string, s: Record<string, unknown>): Publish[] {
  const hsb = `${s.hue as number},${s.sat as number},${s.Dimmer as number}`;
  return [
    {
      topic: `${b}/tele/STATE`,
      payload: JSON.stringify({ POWER: s.POWER, Dimmer: s.Dimmer, HSBColor: hsb, Scheme: s.Scheme }),
    },
  ];
}

const tasmotaRgbLight: SimKind = {
  kind: 'tasmota_rgb_light',
  model: 'SimStrip T4 (Tasmota)',
  entities: (b) => [
    {
      component: 'light',
      objectId: 'light',
      config: {
        name: null,
        cmd_t: `${b}/cmnd/POWER`,
        stat_t: `${b}/tele/STATE`,
        stat_val_tpl: '{{value_json.POWER}}',
        pl_off: 'OFF',
        pl_on: 'ON',
        bri_cmd_t: `${b}/cmnd/Dimmer`,
        bri_stat_t: `${b}/tele/STATE`,
        bri_scl: 100,
        on_cmd_type: 'brightness',
        bri_val_tpl: '{{value_json.Dimmer}}',
        hs_cmd_t: `${b}/cmnd/HSBColor`,
        hs_stat_t: `${b}/tele/STATE`,
        // Tasmota's own template: HSBColor is "h,s,b", HA's hs state is "h,s"
        hs_val_tpl: "{{ value_json.HSBColor.split(',')[0:2] | join(',') }}",
        fx_cmd_t: `${b}/cmnd/Scheme`,
        fx_stat_t: `${b}/tele/STATE`,
        fx_val_tpl: '{{value_json.Scheme}}',
        fx_list: TASMOTA_SCHEMES,
      },
    },
  ],
  initial: () => ({ POWER: 'OFF', Dimmer: 60, hue: 30, sat: 80, Scheme: 0 }),
  states: tasmotaState,
  tick: () => [],
  command(b, s, topic, payload) {
    const cmd = topic.slice(`${b}/cmnd/`.length);
    if (cmd === 'POWER') {
      if (payload !== 'ON' && payload !== 'OFF') return [];
      s.POWER = payload;
    } else if (cmd === 'Dimmer') {
      const n = Number(payload);
      if (!Number.isFinite(n)) return [];
      // Tasmota: a dimmer value turns the light on (0 turns it off)
      s.Dimmer = clamp(Math.round(n), 0, 100);
      s.POWER = s.Dimmer === 0 ? 'OFF' : 'ON';
    } else if (cmd === 'HSBColor') {
      // HA sends "h,s" (floats); Tasmota also takes "h,s,b"
      const parts = payload.split(',').map(Number);
      if (parts.length < 2 || parts.some((n) => !Number.isFinite(n))) return [];
      s.hue = clamp(Math.round(parts[0]), 0, 360);
      s.sat = clamp(Math.round(parts[1]), 0, 100);
      if (parts.length > 2) s.Dimmer = clamp(Math.round(parts[2]), 0, 100);
      s.POWER = 'ON';
    } else if (cmd === 'Scheme') {
      if (!TASMOTA_SCHEMES.includes(payload)) return [];
      s.Scheme = Number(payload);
    } else return [];
    return tasmotaState(b, s);
  },
};

const ESPHOME_EFFECTS = ['None', 'Rainbow', 'Strobe', 'Flicker'];

const esphomeLight: SimKind = {
  kind: 'esphome_light',
  model: 'SimLamp E5 (ESPHome)',
  entities: (b) => [
    {
      component: 'light',
      objectId: 'light',
      config: {
        name: null,
        schema: 'json',
        clrm: true,
        sup_clrm: ['rgb'],
        brightness: true,
        effect: true,
        fx_list: ESPHOME_EFFECTS,
        stat_t: `${b}/light/state`,
        cmd_t: `${b}/light/command`,
      },
    },
  ],
  initial: () => ({
    state: 'OFF',
    color_mode: 'rgb',
    brightness: 180,
    color: { r: 255, g: 120, b: 0 },
    effect: 'None',
  }),
  states: (b, s) => [{ topic: `${b}/light/state`, payload: JSON.stringify(s) }],
  tick: () => [],
  // ESPHome's JSON: {"state", "brightness", "color": {r,g,b}, "effect", "transition", "flash"}
  command(b, s, _topic, payload) {
    const cmd = json(payload);
    if (!cmd) return [];
    if (cmd.state === 'ON' || cmd.state === 'OFF') s.state = cmd.state;
    if (typeof cmd.brightness === 'number') s.brightness = clamp(Math.round(cmd.brightness), 0, 255);
    const c = cmd.color as Record<string, unknown> | undefined;
    if (c && typeof c.r === 'number' && typeof c.g === 'number' && typeof c.b === 'number')
      s.color = {
        r: clamp(Math.round(c.r), 0, 255),
        g: clamp(Math.round(c.g), 0, 255),
        b: clamp(Math.round(c.b), 0, 255),
      };
    if (typeof cmd.effect === 'string' && ESPHOME_EFFECTS.includes(cmd.effect)) s.effect = cmd.effect;
    return esphomeLight.states(b, s);
  },
};

export const TASMOTA_ESPHOME_KINDS: SimKind[] = [tasmotaRgbLight, esphomeLight];
