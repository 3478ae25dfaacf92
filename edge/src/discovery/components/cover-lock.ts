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
  toNumber,
  value,
} from './helpers.ts';
import { type Cfg, type Component, type Ctx, type ServiceResult } from './types.ts';

// ---- cover ----
const positions = (cfg: Cfg) => ({ open: num(cfg, 'position_open', 100), closed: num(cfg, 'position_closed', 0) });
const toPercent = (cfg: Cfg, raw: number) => {
  const { open, closed } = positions(cfg);
  return Math.max(0, Math.min(100, Math.round(((raw - closed) * 100) / (open - closed || 1))));
};
const fromPercent = (cfg: Cfg, pct: number) => {
  const { open, closed } = positions(cfg);
  return Math.round(closed + (pct * (open - closed)) / 100);
};
const coverOptimistic = (cfg: Cfg) =>
  cfg.optimistic === true || (!optStr(cfg, 'state_topic') && !optStr(cfg, 'position_topic'));

function coverMove(ctx: Ctx, payloadKey: string, fallback: string, state: string, position?: number): ServiceResult {
  const payload = ctx.cfg[payloadKey] === null ? null : str(ctx.cfg, payloadKey, fallback);
  if (payload === null) throw new ServiceError(`this cover has no ${payloadKey}`);
  return {
    commands: [command(ctx, 'command_topic', payload)],
    optimistic: coverOptimistic(ctx.cfg)
      ? { state, attrs: position === undefined ? {} : { current_position: position } }
      : undefined,
  };
}

// tilt: the device speaks tilt_min..tilt_max, the entity 0..100 (HA's find_percentage_in_range)
const tiltRange = (cfg: Cfg) => ({ min: num(cfg, 'tilt_min', 0), max: num(cfg, 'tilt_max', 100) });
const tiltOptimistic = (cfg: Cfg) =>
  typeof cfg.tilt_optimistic === 'boolean'
    ? cfg.tilt_optimistic
    : cfg.optimistic === true || !optStr(cfg, 'tilt_status_topic');
const tiltPercent = (cfg: Cfg, raw: number) => {
  const { min, max } = tiltRange(cfg);
  return Math.max(0, Math.min(100, Math.round(((raw - min) * 100) / (max - min || 1))));
};

function tiltCommand(ctx: Ctx, raw: number | string, percent: number): ServiceResult {
  const payload = optStr(ctx.cfg, 'tilt_command_template')
    ? ctx.tpl.render(ctx.cfg.tilt_command_template as string, {
        value: raw,
        tilt_position: percent,
        entity_id: undefined,
      })
    : String(raw);
  return {
    commands: [command(ctx, 'tilt_command_topic', payload)],
    optimistic: tiltOptimistic(ctx.cfg) ? { attrs: { current_tilt_position: percent } } : undefined,
  };
}

export const coverComponent: Component = {
  domain: 'cover',
  validate: (cfg) =>
    optStr(cfg, 'command_topic') || optStr(cfg, 'set_position_topic') || optStr(cfg, 'tilt_command_topic')
      ? null
      : 'command_topic, set_position_topic or tilt_command_topic is required',
  staticAttributes: (cfg) => (cfg.device_class ? { device_class: cfg.device_class } : {}),
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'value_template', payload);
      const c = ctx.cfg;
      if (v === str(c, 'state_open', 'open')) return { state: 'open' };
      if (v === str(c, 'state_opening', 'opening')) return { state: 'opening' };
      if (v === str(c, 'state_closed', 'closed')) return { state: 'closed' };
      if (v === str(c, 'state_closing', 'closing')) return { state: 'closing' };
      if (v === str(c, 'state_stopped', 'stopped')) {
        const pos = ctx.attrs.current_position;
        return { state: typeof pos === 'number' && pos === 0 ? 'closed' : 'open' };
      }
      if (v === 'None') return { state: null };
      return null;
    },
    tilt_status_topic: (payload, ctx) => {
      const n = toNumber(value(ctx, 'tilt_status_template', payload));
      if (n === undefined) return null;
      const { min, max } = tiltRange(ctx.cfg);
      // HA ignores a tilt outside the configured range
      if (n < Math.min(min, max) || n > Math.max(min, max)) return null;
      return { attrs: { current_tilt_position: tiltPercent(ctx.cfg, n) } };
    },
    position_topic: (payload, ctx) => {
      const n = toNumber(value(ctx, 'position_template', payload));
      if (n === undefined) return null;
      const pct = toPercent(ctx.cfg, n);
      return optStr(ctx.cfg, 'state_topic')
        ? { attrs: { current_position: pct } }
        : { state: pct === 0 ? 'closed' : 'open', attrs: { current_position: pct } };
    },
  },
  failedValue: {
    // without a state topic the position is the state too
    position_topic: (ctx) =>
      optStr(ctx.cfg, 'state_topic')
        ? nulls('current_position')()
        : { state: 'unavailable', attrs: { current_position: null } },
    tilt_status_topic: nulls('current_tilt_position'),
  },
  services: {
    open_cover: (ctx) => coverMove(ctx, 'payload_open', 'OPEN', 'open', 100),
    close_cover: (ctx) => coverMove(ctx, 'payload_close', 'CLOSE', 'closed', 0),
    stop_cover: (ctx) => coverMove(ctx, 'payload_stop', 'STOP', ctx.state ?? 'open'),
    open_cover_tilt: (ctx) => {
      const v = num(ctx.cfg, 'tilt_opened_value', 100);
      return tiltCommand(ctx, v, tiltPercent(ctx.cfg, v));
    },
    close_cover_tilt: (ctx) => {
      const v = num(ctx.cfg, 'tilt_closed_value', 0);
      return tiltCommand(ctx, v, tiltPercent(ctx.cfg, v));
    },
    stop_cover_tilt: (ctx) => ({
      commands: [command(ctx, 'tilt_command_topic', str(ctx.cfg, 'payload_stop_tilt', 'stop'))],
    }),
    set_cover_tilt_position: (ctx, data) => {
      const pct = numberArg(data, 'tilt_position', { min: 0, max: 100, required: true }) as number;
      const { min, max } = tiltRange(ctx.cfg);
      return tiltCommand(ctx, Math.round(min + (pct * (max - min)) / 100), pct);
    },
    set_cover_position: (ctx, data) => {
      const pct = numberArg(data, 'position', { min: 0, max: 100, required: true }) as number;
      const raw = fromPercent(ctx.cfg, pct);
      const payload = optStr(ctx.cfg, 'set_position_template')
        ? ctx.tpl.render(ctx.cfg.set_position_template as string, { position: raw, value: raw })
        : String(raw);
      return {
        commands: [command(ctx, 'set_position_topic', payload)],
        optimistic:
          coverOptimistic(ctx.cfg) || !optStr(ctx.cfg, 'position_topic')
            ? { state: pct === 0 ? 'closed' : 'open', attrs: { current_position: pct } }
            : undefined,
      };
    },
  },
};

// ---- lock ----
const LOCK_STATES: [string, string, string][] = [
  ['state_locked', 'LOCKED', 'locked'],
  ['state_unlocked', 'UNLOCKED', 'unlocked'],
  ['state_locking', 'LOCKING', 'locking'],
  ['state_unlocking', 'UNLOCKING', 'unlocking'],
  ['state_jammed', 'JAMMED', 'jammed'],
  ['state_open', 'OPEN', 'open'],
  ['state_opening', 'OPENING', 'opening'],
];

function lockCommand(ctx: Ctx, payloadKey: string, fallback: string, state: string): ServiceResult {
  return {
    commands: [
      command(ctx, 'command_topic', commandPayload(ctx, 'command_template', str(ctx.cfg, payloadKey, fallback))),
    ],
    optimistic: isOptimistic(ctx.cfg) ? { state } : undefined,
  };
}

export const lockComponent: Component = {
  domain: 'lock',
  validate: (cfg) => (optStr(cfg, 'command_topic') ? null : 'command_topic is required'),
  staticAttributes: (cfg) => (cfg.code_format ? { code_format: cfg.code_format } : {}),
  stateHandlers: {
    state_topic: (payload, ctx) => {
      const v = value(ctx, 'value_template', payload);
      for (const [key, def, state] of LOCK_STATES) if (v === str(ctx.cfg, key, def)) return { state };
      if (v === 'None') return { state: null };
      return null;
    },
  },
  services: {
    lock: (ctx) => lockCommand(ctx, 'payload_lock', 'LOCK', 'locked'),
    unlock: (ctx) => lockCommand(ctx, 'payload_unlock', 'UNLOCK', 'unlocked'),
    open: (ctx) => {
      if (!optStr(ctx.cfg, 'payload_open')) throw new ServiceError('this lock does not support open');
      return lockCommand(ctx, 'payload_open', 'OPEN', 'open');
    },
  },
};
