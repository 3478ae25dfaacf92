import { ServiceError } from '../../errors.ts';
import { parseJsonOrUndefined } from '../../templates/template.ts';
import { colorAttributes, hsToRgb, hsToXy, rgbToHs, rgbToXy, xyToHs, xyToRgb, type Pair, type Rgb } from './color.ts';
import {
  commandPayload,
  command,
  isOptimistic,
  nulls,
  num,
  numberArg,
  optStr,
  str,
  strList,
  value,
} from './helpers.ts';
import { type Cfg, type Command, type Component, type Ctx, type ServiceResult, type Update } from './types.ts';

/**
 * MQTT light, default schema (separate topics per feature, ON/OFF payloads) and JSON schema
 * (one JSON document: {"state":"ON","brightness":…,"color_temp":…,"color":{"r","g","b"}}).
 * Brightness on the entity is HA's 0..255; `brightness_scale` is the device's maximum.
 */

const isJson = (cfg: Cfg) => cfg.schema === 'json';

function colorModes(cfg: Cfg): string[] {
  if (isJson(cfg)) {
    const modes = strList(cfg, 'supported_color_modes', []);
    if (modes.length) return modes;
    return cfg.brightness === true ? ['brightness'] : ['onoff'];
  }
  const modes = ['color_temp', 'hs', 'rgb', 'xy'].filter((m) => optStr(cfg, `${m}_command_topic`));
  if (modes.length) return modes;
  if (optStr(cfg, 'brightness_command_topic')) return ['brightness'];
  return ['onoff'];
}

const supportsBrightness = (cfg: Cfg) => colorModes(cfg).some((m) => m !== 'onoff') || cfg.brightness === true;

interface TurnOnArgs {
  brightness?: number;
  color_temp?: number;
  rgb?: Rgb;
  hs?: Pair;
  xy?: Pair;
  effect?: string;
  transition?: number;
}

const effectList = (cfg: Cfg) => strList(cfg, 'effect_list', []);
const supportsEffect = (cfg: Cfg) => (isJson(cfg) ? cfg.effect === true : !!optStr(cfg, 'effect_command_topic'));

function pair(data: Record<string, unknown>, key: string, max: [number, number]): Pair | undefined {
  const v = data[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length !== 2 || !v.every((c, i) => typeof c === 'number' && c >= 0 && c <= max[i])) {
    throw new ServiceError(
      `${key} must be [${max[0] === 1 ? 'x, y' : 'hue, saturation'}] within 0..${max[0]}, 0..${max[1]}`,
    );
  }
  return [v[0], v[1]];
}

/** HA converts a colour the light cannot take into one it can (light/__init__.py, the service's preprocessing). */
function convertColor(args: TurnOnArgs, modes: string[]): void {
  const has = (m: string) => modes.includes(m);
  if (args.hs && !has('hs')) {
    if (has('rgb')) args.rgb = hsToRgb(args.hs);
    else if (has('xy')) args.xy = hsToXy(args.hs);
    delete args.hs;
  } else if (args.rgb && !has('rgb')) {
    if (has('hs')) args.hs = rgbToHs(args.rgb);
    else if (has('xy')) args.xy = rgbToXy(args.rgb);
    delete args.rgb;
  } else if (args.xy && !has('xy')) {
    if (has('hs')) args.hs = xyToHs(args.xy);
    else if (has('rgb')) args.rgb = xyToRgb(args.xy);
    delete args.xy;
  }
}

function readTurnOn(data: Record<string, unknown>): TurnOnArgs {
  const args: TurnOnArgs = {};
  const b = numberArg(data, 'brightness', { min: 0, max: 255 });
  const pct = numberArg(data, 'brightness_pct', { min: 0, max: 100 });
  if (b !== undefined) args.brightness = Math.round(b);
  else if (pct !== undefined) args.brightness = Math.round((pct * 255) / 100);
  const mireds = numberArg(data, 'color_temp', { min: 1 });
  const kelvin = numberArg(data, 'color_temp_kelvin', { min: 1 }) ?? numberArg(data, 'kelvin', { min: 1 });
  if (mireds !== undefined) args.color_temp = Math.round(mireds);
  else if (kelvin !== undefined) args.color_temp = Math.round(1_000_000 / kelvin);
  if (data.rgb_color !== undefined) {
    const rgb = data.rgb_color;
    if (!Array.isArray(rgb) || rgb.length !== 3 || !rgb.every((c) => typeof c === 'number' && c >= 0 && c <= 255)) {
      throw new ServiceError('rgb_color must be [r, g, b] with values 0..255');
    }
    args.rgb = rgb.map((c) => Math.round(c)) as [number, number, number];
  }
  args.hs = pair(data, 'hs_color', [360, 100]);
  args.xy = pair(data, 'xy_color', [1, 1]);
  if (args.hs === undefined) delete args.hs;
  if (args.xy === undefined) delete args.xy;
  if (data.effect !== undefined) {
    if (typeof data.effect !== 'string' || !data.effect) throw new ServiceError('effect must be a string');
    args.effect = data.effect;
  }
  const t = numberArg(data, 'transition', { min: 0 });
  if (t !== undefined) args.transition = t;
  return args;
}

function optimisticOn(args: TurnOnArgs): Update {
  const attrs: Record<string, unknown> = {};
  if (args.brightness !== undefined) attrs.brightness = args.brightness;
  if (args.color_temp !== undefined) {
    attrs.color_temp = args.color_temp;
    attrs.color_mode = 'color_temp';
  }
  if (args.rgb) Object.assign(attrs, colorAttributes('rgb', args.rgb), { color_mode: 'rgb' });
  if (args.hs) Object.assign(attrs, colorAttributes('hs', args.hs), { color_mode: 'hs' });
  if (args.xy) Object.assign(attrs, colorAttributes('xy', args.xy), { color_mode: 'xy' });
  if (args.effect !== undefined) attrs.effect = args.effect;
  return { state: 'on', attrs };
}

function turnOn(ctx: Ctx, data: Record<string, unknown>): ServiceResult {
  const cfg = ctx.cfg;
  const args = readTurnOn(data);
  convertColor(args, colorModes(cfg));
  if (args.effect !== undefined) {
    if (!supportsEffect(cfg)) throw new ServiceError('this light has no effects');
    if (effectList(cfg).length && !effectList(cfg).includes(args.effect))
      throw new ServiceError(`effect must be one of: ${effectList(cfg).join(', ')}`);
  }
  const onType = str(cfg, 'on_command_type', 'last');
  // on_command_type brightness: HA turns a plain turn_on into the last brightness (or full), sent where any brightness goes
  if (
    !isJson(cfg) &&
    onType === 'brightness' &&
    args.brightness === undefined &&
    optStr(cfg, 'brightness_command_topic')
  ) {
    args.brightness = typeof ctx.attrs.brightness === 'number' && ctx.attrs.brightness > 0 ? ctx.attrs.brightness : 255;
  }
  const optimistic = isOptimistic(cfg) ? optimisticOn(args) : undefined;
  const scaleMax = num(cfg, 'brightness_scale', 255);
  if (isJson(cfg)) {
    // key order as HA's schema_json.py builds the message
    const msg: Record<string, unknown> = { state: str(cfg, 'payload_on', 'ON') };
    if (args.hs) msg.color = { h: args.hs[0], s: args.hs[1] };
    if (args.rgb) msg.color = { r: args.rgb[0], g: args.rgb[1], b: args.rgb[2] };
    if (args.xy) msg.color = { x: args.xy[0], y: args.xy[1] };
    if (args.transition !== undefined) msg.transition = args.transition;
    if (args.brightness !== undefined && supportsBrightness(cfg))
      msg.brightness = Math.max(1, Math.round((args.brightness * scaleMax) / 255));
    if (args.color_temp !== undefined) msg.color_temp = args.color_temp;
    if (args.effect !== undefined) msg.effect = args.effect;
    return { commands: [command(ctx, 'command_topic', JSON.stringify(msg))], optimistic };
  }
  const on = command(ctx, 'command_topic', str(cfg, 'payload_on', 'ON'));
  const cmds: Command[] = [];
  if (onType === 'first') cmds.push(on);
  // Python's str(float): HA coerces hs/xy service values to floats before formatting them
  const f = (n: number) => (Number.isInteger(n) ? `${n}.0` : String(n));
  if (args.hs && optStr(cfg, 'hs_command_topic'))
    cmds.push(command(ctx, 'hs_command_topic', `${f(args.hs[0])},${f(args.hs[1])}`));
  if (args.rgb && optStr(cfg, 'rgb_command_topic')) {
    const [red, green, blue] = args.rgb;
    cmds.push(
      command(
        ctx,
        'rgb_command_topic',
        optStr(cfg, 'rgb_command_template')
          ? ctx.tpl.render(cfg.rgb_command_template as string, { red, green, blue, value: args.rgb })
          : `${red},${green},${blue}`,
      ),
    );
  }
  if (args.xy && optStr(cfg, 'xy_command_topic'))
    cmds.push(command(ctx, 'xy_command_topic', `${f(args.xy[0])},${f(args.xy[1])}`));
  if (args.brightness !== undefined && optStr(cfg, 'brightness_command_topic')) {
    cmds.push(
      command(
        ctx,
        'brightness_command_topic',
        commandPayload(ctx, 'brightness_command_template', Math.round((args.brightness * scaleMax) / 255)),
      ),
    );
  }
  if (args.color_temp !== undefined && optStr(cfg, 'color_temp_command_topic')) {
    cmds.push(
      command(ctx, 'color_temp_command_topic', commandPayload(ctx, 'color_temp_command_template', args.color_temp)),
    );
  }
  if (args.effect !== undefined)
    cmds.push(command(ctx, 'effect_command_topic', commandPayload(ctx, 'effect_command_template', args.effect)));
  // with on_command_type brightness the brightness is the on command
  if (onType !== 'first' && !(onType === 'brightness' && optStr(cfg, 'brightness_command_topic'))) cmds.push(on);
  return { commands: cmds, optimistic };
}

function turnOff(ctx: Ctx, data: Record<string, unknown>): ServiceResult {
  const cfg = ctx.cfg;
  const optimistic: Update | undefined = isOptimistic(cfg) ? { state: 'off' } : undefined;
  if (isJson(cfg)) {
    const msg: Record<string, unknown> = { state: str(cfg, 'payload_off', 'OFF') };
    const t = numberArg(data, 'transition', { min: 0 });
    if (t !== undefined) msg.transition = t;
    return { commands: [command(ctx, 'command_topic', JSON.stringify(msg))], optimistic };
  }
  return { commands: [command(ctx, 'command_topic', str(cfg, 'payload_off', 'OFF'))], optimistic };
}

function brightnessFromDevice(cfg: Cfg, v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n)) return undefined;
  return Math.max(0, Math.min(255, Math.round((n * 255) / num(cfg, 'brightness_scale', 255))));
}

/** "a,b,c" (or an array) as three numbers, rounded unless `round` is false. */
function parseRgb(v: unknown, round = true): [number, number, number] | undefined {
  const parts = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [];
  const nums = parts.map((p) => (typeof p === 'string' && p.trim() === '' ? NaN : Number(p)));
  if (nums.length !== 3 || !nums.every((n) => Number.isFinite(n))) return undefined;
  return (round ? nums.map(Math.round) : nums) as [number, number, number];
}

function jsonState(payload: string, ctx: Ctx): Update | null {
  const doc = parseJsonOrUndefined(payload);
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return null;
  const d = doc as Record<string, unknown>;
  const update: Update = { attrs: {} };
  const attrs = update.attrs as Record<string, unknown>;
  if (d.state === str(ctx.cfg, 'payload_on', 'ON')) update.state = 'on';
  else if (d.state === str(ctx.cfg, 'payload_off', 'OFF')) update.state = 'off';
  else if (d.state === null) update.state = null;
  if (d.brightness !== undefined) attrs.brightness = brightnessFromDevice(ctx.cfg, d.brightness);
  const modes = colorModes(ctx.cfg);
  const color = d.color && typeof d.color === 'object' ? (d.color as Record<string, unknown>) : {};
  const nums = (...keys: string[]) =>
    keys.every((k) => typeof color[k] === 'number') ? keys.map((k) => color[k] as number) : undefined;
  // the mode the device says, else the light's only mode (HA fills it in), else what the colour carries
  let mode = typeof d.color_mode === 'string' ? d.color_mode : modes.length === 1 ? modes[0] : undefined;
  if (!mode && d.color) mode = nums('h', 's') ? 'hs' : nums('x', 'y') ? 'xy' : nums('r', 'g', 'b') ? 'rgb' : undefined;
  if (!mode && typeof d.color_temp === 'number') mode = 'color_temp';
  if (mode) attrs.color_mode = mode;
  if (mode === 'hs' && nums('h', 's')) Object.assign(attrs, colorAttributes('hs', nums('h', 's') as Pair));
  if (mode === 'xy' && nums('x', 'y')) Object.assign(attrs, colorAttributes('xy', nums('x', 'y') as Pair));
  if (mode === 'rgb' && nums('r', 'g', 'b'))
    Object.assign(attrs, colorAttributes('rgb', (nums('r', 'g', 'b') as number[]).map(Math.round) as Rgb));
  if (typeof d.color_temp === 'number') attrs.color_temp = d.color_temp;
  if (typeof d.effect === 'string' && supportsEffect(ctx.cfg)) attrs.effect = d.effect;
  return update;
}

export const lightComponent: Component = {
  domain: 'light',
  validate: (cfg) => (optStr(cfg, 'command_topic') ? null : 'command_topic is required'),
  staticAttributes: (cfg) => {
    const modes = colorModes(cfg);
    const attrs: Record<string, unknown> = { supported_color_modes: modes };
    if (modes.includes('color_temp')) {
      attrs.min_mireds = num(cfg, 'min_mireds', 153);
      attrs.max_mireds = num(cfg, 'max_mireds', 500);
    }
    if (supportsEffect(cfg) && effectList(cfg).length) attrs.effect_list = effectList(cfg);
    if (cfg.icon) attrs.icon = cfg.icon;
    return attrs;
  },
  /** HA's light state_attributes: what the light supports is always listed, null while it is off or unknown */
  presentAttributes: (cfg, state, attrs) => {
    const modes = colorModes(cfg);
    const on = state === 'on';
    const out: Record<string, unknown> = { ...attrs };
    const mode = on ? (attrs.color_mode ?? (modes.length === 1 ? modes[0] : null)) : null;
    out.color_mode = mode;
    if (supportsBrightness(cfg)) out.brightness = on ? (attrs.brightness ?? null) : null;
    if (modes.includes('color_temp') && mode !== 'color_temp') out.color_temp = null;
    if (
      modes.some((m) => ['hs', 'rgb', 'xy', 'color_temp'].includes(m)) &&
      !(mode === 'hs' || mode === 'rgb' || mode === 'xy')
    ) {
      out.hs_color = null;
      out.rgb_color = null;
      out.xy_color = null;
    }
    if (supportsEffect(cfg)) out.effect = on ? (attrs.effect ?? null) : null;
    return out;
  },
  stateHandlers: {
    state_topic: (payload, ctx) => {
      if (isJson(ctx.cfg)) return jsonState(payload, ctx);
      const v = value(ctx, 'state_value_template', payload);
      const modes = colorModes(ctx.cfg);
      // a light with one colour mode is in it whenever it is on (HA fills it in)
      if (v === str(ctx.cfg, 'payload_on', 'ON'))
        return modes.length === 1 ? { state: 'on', attrs: { color_mode: modes[0] } } : { state: 'on' };
      if (v === str(ctx.cfg, 'payload_off', 'OFF')) return { state: 'off' };
      if (v === 'None') return { state: null };
      return null;
    },
    brightness_state_topic: (payload, ctx) => {
      const b = brightnessFromDevice(ctx.cfg, value(ctx, 'brightness_value_template', payload));
      return b === undefined ? null : { attrs: { brightness: b } };
    },
    color_temp_state_topic: (payload, ctx) => {
      const n = Number(value(ctx, 'color_temp_value_template', payload));
      return Number.isFinite(n) ? { attrs: { color_temp: Math.round(n), color_mode: 'color_temp' } } : null;
    },
    hs_state_topic: (payload, ctx) => {
      const hs = parseRgb(`${value(ctx, 'hs_value_template', payload)},0`, false);
      return hs ? { attrs: { ...colorAttributes('hs', [hs[0], hs[1]]), color_mode: 'hs' } } : null;
    },
    xy_state_topic: (payload, ctx) => {
      const xy = parseRgb(`${value(ctx, 'xy_value_template', payload)},0`, false);
      return xy ? { attrs: { ...colorAttributes('xy', [xy[0], xy[1]]), color_mode: 'xy' } } : null;
    },
    effect_state_topic: (payload, ctx) => {
      const v = value(ctx, 'effect_value_template', payload);
      return v === '' || v === 'None' ? null : { attrs: { effect: v } };
    },
    rgb_state_topic: (payload, ctx) => {
      const rgb = parseRgb(value(ctx, 'rgb_value_template', payload));
      return rgb ? { attrs: { rgb_color: rgb, color_mode: 'rgb' } } : null;
    },
  },
  failedValue: {
    brightness_state_topic: nulls('brightness'),
    color_temp_state_topic: nulls('color_temp'),
    hs_state_topic: nulls('hs_color', 'rgb_color', 'xy_color'),
    xy_state_topic: nulls('hs_color', 'rgb_color', 'xy_color'),
    rgb_state_topic: nulls('hs_color', 'rgb_color', 'xy_color'),
    effect_state_topic: nulls('effect'),
  },
  services: {
    turn_on: turnOn,
    turn_off: turnOff,
    toggle: (ctx, data) => (ctx.state === 'on' ? turnOff(ctx, data) : turnOn(ctx, data)),
  },
};
