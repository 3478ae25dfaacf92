import { parseJsonOrUndefined } from '../../templates/template.ts';
import { commandPayload, command, isOptimistic, num, numberArg, optStr, str, strList, value } from './helpers.ts';
import { ServiceError, type Cfg, type Command, type Component, type Ctx, type ServiceResult, type Update } from './types.ts';

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
  if (optStr(cfg, 'rgb_command_topic')) return optStr(cfg, 'color_temp_command_topic') ? ['color_temp', 'rgb'] : ['rgb'];
  if (optStr(cfg, 'color_temp_command_topic')) return ['color_temp'];
  if (optStr(cfg, 'brightness_command_topic')) return ['brightness'];
  return ['onoff'];
}

const supportsBrightness = (cfg: Cfg) => colorModes(cfg).some((m) => m !== 'onoff') || cfg.brightness === true;

interface TurnOnArgs {
  brightness?: number;
  color_temp?: number;
  rgb?: [number, number, number];
  transition?: number;
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
  const t = numberArg(data, 'transition', { min: 0 });
  if (t !== undefined) args.transition = t;
  return args;
}

function optimisticOn(args: TurnOnArgs): Update {
  const attrs: Record<string, unknown> = {};
  if (args.brightness !== undefined) attrs.brightness = args.brightness;
  if (args.color_temp !== undefined) { attrs.color_temp = args.color_temp; attrs.color_mode = 'color_temp'; }
  if (args.rgb) { attrs.rgb_color = args.rgb; attrs.color_mode = 'rgb'; }
  return { state: 'on', attrs };
}

function turnOn(ctx: Ctx, data: Record<string, unknown>): ServiceResult {
  const cfg = ctx.cfg;
  const args = readTurnOn(data);
  const optimistic = isOptimistic(cfg) ? optimisticOn(args) : undefined;
  const scaleMax = num(cfg, 'brightness_scale', 255);
  if (isJson(cfg)) {
    const msg: Record<string, unknown> = { state: str(cfg, 'payload_on', 'ON') };
    if (args.brightness !== undefined && supportsBrightness(cfg)) msg.brightness = Math.round((args.brightness * scaleMax) / 255);
    if (args.color_temp !== undefined) msg.color_temp = args.color_temp;
    if (args.rgb) msg.color = { r: args.rgb[0], g: args.rgb[1], b: args.rgb[2] };
    if (args.transition !== undefined) msg.transition = args.transition;
    return { commands: [command(ctx, 'command_topic', JSON.stringify(msg))], optimistic };
  }
  const onType = str(cfg, 'on_command_type', 'last');
  const on = command(ctx, 'command_topic', str(cfg, 'payload_on', 'ON'));
  const cmds: Command[] = [];
  if (onType === 'first') cmds.push(on);
  if (args.rgb && optStr(cfg, 'rgb_command_topic')) {
    const [red, green, blue] = args.rgb;
    cmds.push(command(ctx, 'rgb_command_topic', optStr(cfg, 'rgb_command_template')
      ? ctx.tpl.render(cfg.rgb_command_template as string, { red, green, blue, value: args.rgb })
      : `${red},${green},${blue}`));
  }
  let sentBrightness = false;
  if (args.brightness !== undefined && optStr(cfg, 'brightness_command_topic')) {
    cmds.push(command(ctx, 'brightness_command_topic', commandPayload(ctx, 'brightness_command_template', Math.round((args.brightness * scaleMax) / 255))));
    sentBrightness = true;
  }
  if (args.color_temp !== undefined && optStr(cfg, 'color_temp_command_topic')) {
    cmds.push(command(ctx, 'color_temp_command_topic', commandPayload(ctx, 'color_temp_command_template', args.color_temp)));
  }
  if (onType === 'brightness') {
    if (!sentBrightness && optStr(cfg, 'brightness_command_topic')) {
      const last = typeof ctx.attrs.brightness === 'number' && ctx.attrs.brightness > 0 ? ctx.attrs.brightness : 255;
      cmds.push(command(ctx, 'brightness_command_topic', commandPayload(ctx, 'brightness_command_template', Math.round((last * scaleMax) / 255))));
    }
  } else if (onType !== 'first') {
    cmds.push(on);
  }
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

function parseRgb(v: unknown): [number, number, number] | undefined {
  const parts = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [];
  const nums = parts.map((p) => Number(p));
  return nums.length === 3 && nums.every((n) => Number.isFinite(n)) ? (nums.map(Math.round) as [number, number, number]) : undefined;
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
  if (typeof d.color_temp === 'number') attrs.color_temp = d.color_temp;
  const color = d.color as Record<string, unknown> | undefined;
  if (color && typeof color === 'object' && typeof color.r === 'number') attrs.rgb_color = [color.r, color.g, color.b];
  if (typeof d.color_mode === 'string') attrs.color_mode = d.color_mode;
  return update;
}

export const lightComponent: Component = {
  domain: 'light',
  validate: (cfg) => (optStr(cfg, 'command_topic') ? null : 'command_topic is required'),
  staticAttributes: (cfg) => {
    const modes = colorModes(cfg);
    const attrs: Record<string, unknown> = { supported_color_modes: modes };
    if (modes.includes('color_temp')) { attrs.min_mireds = num(cfg, 'min_mireds', 153); attrs.max_mireds = num(cfg, 'max_mireds', 500); }
    if (cfg.icon) attrs.icon = cfg.icon;
    return attrs;
  },
  stateHandlers: {
    state_topic: (payload, ctx) => {
      if (isJson(ctx.cfg)) return jsonState(payload, ctx);
      const v = value(ctx, 'state_value_template', payload);
      if (v === str(ctx.cfg, 'payload_on', 'ON')) return { state: 'on' };
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
    rgb_state_topic: (payload, ctx) => {
      const rgb = parseRgb(value(ctx, 'rgb_value_template', payload));
      return rgb ? { attrs: { rgb_color: rgb, color_mode: 'rgb' } } : null;
    },
  },
  services: {
    turn_on: turnOn,
    turn_off: turnOff,
    toggle: (ctx, data) => (ctx.state === 'on' ? turnOff(ctx, data) : turnOn(ctx, data)),
  },
};
