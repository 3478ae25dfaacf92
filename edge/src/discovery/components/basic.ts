import {
  commandPayload,
  command,
  isOptimistic,
  num,
  numberArg,
  optStr,
  str,
  stringArg,
  strList,
  toNumber,
  value,
} from './helpers.ts';
import type { Cfg, Component, Ctx, ServiceResult } from './types.ts';

const pick = (cfg: Cfg, keys: string[]): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (cfg[k] !== undefined && cfg[k] !== null) out[k] = cfg[k];
  return out;
};
const common = (cfg: Cfg) => pick(cfg, ['device_class', 'icon']);
const needs = (cfg: Cfg, key: string) => (optStr(cfg, key) ? null : `${key} is required`);

// ---- switch ----
function switchOn(ctx: Ctx): ServiceResult {
  const payload = str(ctx.cfg, 'payload_on', 'ON');
  return {
    commands: [command(ctx, 'command_topic', commandPayload(ctx, 'command_template', payload))],
    optimistic: isOptimistic(ctx.cfg) ? { state: 'on' } : undefined,
  };
}
function switchOff(ctx: Ctx): ServiceResult {
  const payload = str(ctx.cfg, 'payload_off', 'OFF');
  return {
    commands: [command(ctx, 'command_topic', commandPayload(ctx, 'command_template', payload))],
    optimistic: isOptimistic(ctx.cfg) ? { state: 'off' } : undefined,
  };
}
export const switchComponent: Component = {
  domain: 'switch',
  validate: (cfg) => needs(cfg, 'command_topic'),
  staticAttributes: common,
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'value_template', payload);
      if (v === str(ctx.cfg, 'state_on', str(ctx.cfg, 'payload_on', 'ON'))) return { state: 'on' };
      if (v === str(ctx.cfg, 'state_off', str(ctx.cfg, 'payload_off', 'OFF'))) return { state: 'off' };
      if (v === 'None') return { state: null };
      return null;
    },
  },
  services: {
    turn_on: switchOn,
    turn_off: switchOff,
    toggle: (ctx) => (ctx.state === 'on' ? switchOff(ctx) : switchOn(ctx)),
  },
};

// ---- binary_sensor ----
export const binarySensorComponent: Component = {
  domain: 'binary_sensor',
  validate: (cfg) => needs(cfg, 'state_topic'),
  staticAttributes: common,
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'value_template', payload);
      if (v === str(ctx.cfg, 'payload_on', 'ON')) return { state: 'on' };
      if (v === str(ctx.cfg, 'payload_off', 'OFF')) return { state: 'off' };
      if (v === 'None') return { state: null };
      return null;
    },
  },
  services: {},
};

// ---- sensor ----
export const sensorComponent: Component = {
  domain: 'sensor',
  validate: (cfg) => needs(cfg, 'state_topic'),
  staticAttributes: (cfg) => ({
    ...common(cfg),
    ...pick(cfg, ['unit_of_measurement', 'state_class', 'suggested_display_precision']),
  }),
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'value_template', payload);
      return { state: v === '' || v === 'None' ? null : v };
    },
  },
  services: {},
};

// ---- button ----
export const buttonComponent: Component = {
  domain: 'button',
  validate: (cfg) => needs(cfg, 'command_topic'),
  staticAttributes: common,
  stateHandlers: {},
  services: {
    // A button's state is the time of its last press.
    press: (ctx) => ({
      commands: [
        command(ctx, 'command_topic', commandPayload(ctx, 'command_template', str(ctx.cfg, 'payload_press', 'PRESS'))),
      ],
      optimistic: { state: new Date().toISOString() },
    }),
  },
};

// ---- number ----
const numberRange = (cfg: Cfg) => ({ min: num(cfg, 'min', 1), max: num(cfg, 'max', 100), step: num(cfg, 'step', 1) });
export const numberComponent: Component = {
  domain: 'number',
  validate: (cfg) => {
    const { min, max } = numberRange(cfg);
    return needs(cfg, 'command_topic') ?? (min > max ? 'min must not exceed max' : null);
  },
  staticAttributes: (cfg) => ({
    ...common(cfg),
    ...numberRange(cfg),
    mode: str(cfg, 'mode', 'auto'),
    ...pick(cfg, ['unit_of_measurement']),
  }),
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'value_template', payload);
      if (v === str(ctx.cfg, 'payload_reset', 'None')) return { state: null };
      const n = toNumber(v);
      return n === undefined ? null : { state: String(n) };
    },
  },
  services: {
    set_value: (ctx, data) => {
      const { min, max } = numberRange(ctx.cfg);
      const v = numberArg(data, 'value', { min, max, required: true }) as number;
      return {
        commands: [command(ctx, 'command_topic', commandPayload(ctx, 'command_template', v))],
        optimistic: isOptimistic(ctx.cfg) ? { state: String(v) } : undefined,
      };
    },
  },
};

// ---- select ----
export const selectComponent: Component = {
  domain: 'select',
  validate: (cfg) =>
    needs(cfg, 'command_topic') ?? (strList(cfg, 'options', []).length === 0 ? 'options are required' : null),
  staticAttributes: (cfg) => ({ ...common(cfg), options: strList(cfg, 'options', []) }),
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'value_template', payload);
      if (v === 'None' || v === '') return { state: null };
      return strList(ctx.cfg, 'options', []).includes(v) ? { state: v } : null;
    },
  },
  services: {
    select_option: (ctx, data) => {
      const option = stringArg(data, 'option', strList(ctx.cfg, 'options', []));
      return {
        commands: [command(ctx, 'command_topic', commandPayload(ctx, 'command_template', option))],
        optimistic: isOptimistic(ctx.cfg) ? { state: option } : undefined,
      };
    },
  },
};
