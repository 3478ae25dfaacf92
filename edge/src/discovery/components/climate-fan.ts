import { ServiceError } from '../../errors.ts';
import {
  commandPayload,
  command,
  isOptimistic,
  nulls,
  num,
  numberArg,
  optStr,
  str,
  stringArg,
  strList,
  toNumber,
  value,
} from './helpers.ts';
import { type Cfg, type Command, type Component, type Ctx, type ServiceResult, type Update } from './types.ts';

// ---- climate ----
const DEFAULT_MODES = ['auto', 'off', 'cool', 'heat', 'dry', 'fan_only'];
const DEFAULT_FAN_MODES = ['auto', 'low', 'medium', 'high'];
const hvacModes = (cfg: Cfg) => strList(cfg, 'modes', DEFAULT_MODES);
const tempRange = (cfg: Cfg) => {
  const f = cfg.temperature_unit === 'F';
  return { min: num(cfg, 'min_temp', f ? 44.6 : 7), max: num(cfg, 'max_temp', f ? 95 : 35) };
};
const numState =
  (attr: string, tplKey: string) =>
  (payload: string, ctx: Ctx): Update | null => {
    const n = toNumber(value(ctx, tplKey, payload));
    return n === undefined ? null : { attrs: { [attr]: n } };
  };

function setHvacMode(ctx: Ctx, mode: string): ServiceResult {
  return {
    commands: [command(ctx, 'mode_command_topic', commandPayload(ctx, 'mode_command_template', mode))],
    optimistic: isOptimistic(ctx.cfg, 'mode_state_topic') ? { state: mode } : undefined,
  };
}

export const climateComponent: Component = {
  domain: 'climate',
  validate: () => null,
  staticAttributes: (cfg) => {
    const { min, max } = tempRange(cfg);
    const attrs: Record<string, unknown> = {
      hvac_modes: hvacModes(cfg),
      min_temp: min,
      max_temp: max,
      target_temp_step: num(cfg, 'temp_step', 1),
    };
    if (optStr(cfg, 'fan_mode_command_topic')) attrs.fan_modes = strList(cfg, 'fan_modes', DEFAULT_FAN_MODES);
    if (optStr(cfg, 'preset_mode_command_topic')) attrs.preset_modes = strList(cfg, 'preset_modes', []);
    return attrs;
  },
  stateHandlers: {
    mode_state_topic: (payload, ctx) => {
      const v = value(ctx, 'mode_state_template', payload);
      return hvacModes(ctx.cfg).includes(v) ? { state: v } : null;
    },
    temperature_state_topic: numState('temperature', 'temperature_state_template'),
    current_temperature_topic: numState('current_temperature', 'current_temperature_template'),
    temperature_high_state_topic: numState('target_temp_high', 'temperature_high_state_template'),
    temperature_low_state_topic: numState('target_temp_low', 'temperature_low_state_template'),
    current_humidity_topic: numState('current_humidity', 'current_humidity_template'),
    fan_mode_state_topic: (payload, ctx) => ({ attrs: { fan_mode: value(ctx, 'fan_mode_state_template', payload) } }),
    preset_mode_state_topic: (payload, ctx) => ({
      attrs: { preset_mode: value(ctx, 'preset_mode_value_template', payload) },
    }),
    action_topic: (payload, ctx) => ({ attrs: { hvac_action: value(ctx, 'action_template', payload) } }),
  },
  failedValue: {
    mode_state_topic: () => ({ state: 'unavailable' }),
    temperature_state_topic: nulls('temperature'),
    current_temperature_topic: nulls('current_temperature'),
    temperature_high_state_topic: nulls('target_temp_high'),
    temperature_low_state_topic: nulls('target_temp_low'),
    current_humidity_topic: nulls('current_humidity'),
    fan_mode_state_topic: nulls('fan_mode'),
    preset_mode_state_topic: nulls('preset_mode'),
    action_topic: nulls('hvac_action'),
  },
  services: {
    set_hvac_mode: (ctx, data) => setHvacMode(ctx, stringArg(data, 'hvac_mode', hvacModes(ctx.cfg))),
    set_temperature: (ctx, data) => {
      const { min, max } = tempRange(ctx.cfg);
      const commands: Command[] = [];
      const optimistic: Update = { attrs: {} };
      const attrs = optimistic.attrs as Record<string, unknown>;
      let any = false;
      if (data.hvac_mode !== undefined) {
        const r = setHvacMode(ctx, stringArg(data, 'hvac_mode', hvacModes(ctx.cfg)));
        commands.push(...r.commands);
        if (r.optimistic) optimistic.state = r.optimistic.state;
      }
      const targets: [string, string, string, string][] = [
        ['temperature', 'temperature_command_topic', 'temperature_command_template', 'temperature_state_topic'],
        [
          'target_temp_high',
          'temperature_high_command_topic',
          'temperature_high_command_template',
          'temperature_high_state_topic',
        ],
        [
          'target_temp_low',
          'temperature_low_command_topic',
          'temperature_low_command_template',
          'temperature_low_state_topic',
        ],
      ];
      for (const [arg, topicKey, tplKey, stateKey] of targets) {
        const t = numberArg(data, arg, { min, max });
        if (t === undefined) continue;
        any = true;
        commands.push(command(ctx, topicKey, commandPayload(ctx, tplKey, t)));
        if (isOptimistic(ctx.cfg, stateKey)) attrs[arg] = t;
      }
      if (!any) throw new ServiceError('temperature, target_temp_high or target_temp_low is required');
      return { commands, optimistic };
    },
    set_preset_mode: (ctx, data) => {
      if (!optStr(ctx.cfg, 'preset_mode_command_topic'))
        throw new ServiceError('this climate entity has no preset modes');
      // HA's climate offers "none" beside the configured presets
      const preset = stringArg(data, 'preset_mode', [...strList(ctx.cfg, 'preset_modes', []), 'none']);
      return {
        commands: [
          command(ctx, 'preset_mode_command_topic', commandPayload(ctx, 'preset_mode_command_template', preset)),
        ],
        optimistic: isOptimistic(ctx.cfg, 'preset_mode_state_topic') ? { attrs: { preset_mode: preset } } : undefined,
      };
    },
    set_fan_mode: (ctx, data) => {
      const mode = stringArg(data, 'fan_mode', strList(ctx.cfg, 'fan_modes', DEFAULT_FAN_MODES));
      return {
        commands: [command(ctx, 'fan_mode_command_topic', commandPayload(ctx, 'fan_mode_command_template', mode))],
        optimistic: isOptimistic(ctx.cfg, 'fan_mode_state_topic') ? { attrs: { fan_mode: mode } } : undefined,
      };
    },
    turn_on: (ctx) => {
      if (optStr(ctx.cfg, 'power_command_topic')) return powerCommand(ctx, str(ctx.cfg, 'payload_on', 'ON'));
      const mode = hvacModes(ctx.cfg).find((m) => m !== 'off');
      if (!mode) throw new ServiceError('this climate entity cannot be turned on');
      return setHvacMode(ctx, mode);
    },
    turn_off: (ctx) => {
      if (optStr(ctx.cfg, 'power_command_topic')) return powerCommand(ctx, str(ctx.cfg, 'payload_off', 'OFF'));
      if (!hvacModes(ctx.cfg).includes('off')) throw new ServiceError('this climate entity has no off mode');
      return setHvacMode(ctx, 'off');
    },
  },
};

/** turn_on / turn_off of a climate entity with a power topic: the payload there, no optimistic state. */
function powerCommand(ctx: Ctx, payload: string): ServiceResult {
  return { commands: [command(ctx, 'power_command_topic', commandPayload(ctx, 'power_command_template', payload))] };
}

// ---- fan ----
const speedRange = (cfg: Cfg) => ({ lo: num(cfg, 'speed_range_min', 1), hi: num(cfg, 'speed_range_max', 100) });
const toRanged = (cfg: Cfg, pct: number) => {
  const { lo, hi } = speedRange(cfg);
  return Math.ceil(((hi - lo + 1) * pct) / 100) + lo - 1;
};
const fromRanged = (cfg: Cfg, v: number) => {
  const { lo, hi } = speedRange(cfg);
  return Math.max(0, Math.min(100, Math.floor(((v - lo + 1) * 100) / (hi - lo + 1))));
};

function fanOn(ctx: Ctx, data: Record<string, unknown>): ServiceResult {
  const commands = [
    command(ctx, 'command_topic', commandPayload(ctx, 'command_template', str(ctx.cfg, 'payload_on', 'ON'))),
  ];
  const optimistic: Update = { state: 'on', attrs: {} };
  const pct = numberArg(data, 'percentage', { min: 0, max: 100 });
  if (pct !== undefined) {
    commands.push(
      command(
        ctx,
        'percentage_command_topic',
        commandPayload(ctx, 'percentage_command_template', toRanged(ctx.cfg, pct)),
      ),
    );
    (optimistic.attrs as Record<string, unknown>).percentage = pct;
  }
  if (data.preset_mode !== undefined) {
    const preset = stringArg(data, 'preset_mode', strList(ctx.cfg, 'preset_modes', []));
    commands.push(
      command(ctx, 'preset_mode_command_topic', commandPayload(ctx, 'preset_mode_command_template', preset)),
    );
    (optimistic.attrs as Record<string, unknown>).preset_mode = preset;
  }
  return { commands, optimistic: isOptimistic(ctx.cfg) ? optimistic : undefined };
}
function fanOff(ctx: Ctx): ServiceResult {
  return {
    commands: [
      command(ctx, 'command_topic', commandPayload(ctx, 'command_template', str(ctx.cfg, 'payload_off', 'OFF'))),
    ],
    optimistic: isOptimistic(ctx.cfg) ? { state: 'off' } : undefined,
  };
}

export const fanComponent: Component = {
  domain: 'fan',
  validate: (cfg) => (optStr(cfg, 'command_topic') ? null : 'command_topic is required'),
  staticAttributes: (cfg) => {
    const attrs: Record<string, unknown> = {};
    if (optStr(cfg, 'percentage_command_topic')) {
      const { lo, hi } = speedRange(cfg);
      attrs.percentage_step = 100 / (hi - lo + 1);
    }
    if (optStr(cfg, 'preset_mode_command_topic')) attrs.preset_modes = strList(cfg, 'preset_modes', []);
    return attrs;
  },
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'state_value_template', payload);
      if (v === str(ctx.cfg, 'payload_on', 'ON')) return { state: 'on' };
      if (v === str(ctx.cfg, 'payload_off', 'OFF')) return { state: 'off' };
      return null;
    },
    percentage_state_topic: (payload, ctx) => {
      const n = toNumber(value(ctx, 'percentage_value_template', payload));
      return n === undefined ? null : { attrs: { percentage: fromRanged(ctx.cfg, n) } };
    },
    preset_mode_state_topic: (payload, ctx) => ({
      attrs: { preset_mode: value(ctx, 'preset_mode_value_template', payload) },
    }),
    oscillation_state_topic: (payload, ctx) => {
      const v = value(ctx, 'oscillation_value_template', payload);
      if (v === str(ctx.cfg, 'payload_oscillation_on', 'oscillate_on')) return { attrs: { oscillating: true } };
      if (v === str(ctx.cfg, 'payload_oscillation_off', 'oscillate_off')) return { attrs: { oscillating: false } };
      return null;
    },
  },
  failedValue: {
    percentage_state_topic: nulls('percentage'),
    preset_mode_state_topic: nulls('preset_mode'),
    oscillation_state_topic: nulls('oscillating'),
  },
  services: {
    turn_on: fanOn,
    turn_off: fanOff,
    toggle: (ctx, data) => (ctx.state === 'on' ? fanOff(ctx) : fanOn(ctx, data)),
    set_percentage: (ctx, data) => {
      const pct = numberArg(data, 'percentage', { min: 0, max: 100, required: true }) as number;
      if (pct === 0) return fanOff(ctx);
      return {
        commands: [
          command(
            ctx,
            'percentage_command_topic',
            commandPayload(ctx, 'percentage_command_template', toRanged(ctx.cfg, pct)),
          ),
        ],
        optimistic: isOptimistic(ctx.cfg, 'percentage_state_topic') ? { attrs: { percentage: pct } } : undefined,
      };
    },
    set_preset_mode: (ctx, data) => {
      const preset = stringArg(data, 'preset_mode', strList(ctx.cfg, 'preset_modes', []));
      return {
        commands: [
          command(ctx, 'preset_mode_command_topic', commandPayload(ctx, 'preset_mode_command_template', preset)),
        ],
        optimistic: isOptimistic(ctx.cfg, 'preset_mode_state_topic') ? { attrs: { preset_mode: preset } } : undefined,
      };
    },
    oscillate: (ctx, data) => {
      if (typeof data.oscillating !== 'boolean') throw new ServiceError('oscillating must be true or false');
      const payload = data.oscillating
        ? str(ctx.cfg, 'payload_oscillation_on', 'oscillate_on')
        : str(ctx.cfg, 'payload_oscillation_off', 'oscillate_off');
      return {
        commands: [
          command(ctx, 'oscillation_command_topic', commandPayload(ctx, 'oscillation_command_template', payload)),
        ],
        optimistic: isOptimistic(ctx.cfg, 'oscillation_state_topic')
          ? { attrs: { oscillating: data.oscillating } }
          : undefined,
      };
    },
  },
};
