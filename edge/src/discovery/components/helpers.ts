import { ServiceError } from '../../errors.ts';
import { type Cfg, type Command, type Ctx, type Update } from './types.ts';

/** A string option as HA's schema (cv.string) makes it: `true` becomes "True", as a template prints it. */
export const str = (cfg: Cfg, key: string, fallback: string): string => {
  const v = cfg[key];
  return typeof v === 'string'
    ? v
    : typeof v === 'boolean'
      ? v
        ? 'True'
        : 'False'
      : typeof v === 'number'
        ? String(v)
        : fallback;
};
export const optStr = (cfg: Cfg, key: string): string | undefined => {
  const v = cfg[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
};
export const num = (cfg: Cfg, key: string, fallback: number): number => {
  const v = cfg[key];
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : fallback;
};
export const strList = (cfg: Cfg, key: string, fallback: string[]): string[] => {
  const v = cfg[key];
  return Array.isArray(v) ? v.map(String) : fallback;
};

/** True when the entity has no way to report state, or says it is optimistic. */
export const isOptimistic = (cfg: Cfg, stateKey = 'state_topic'): boolean =>
  cfg.optimistic === true || !optStr(cfg, stateKey);

/** Renders `tplKey` over the payload when configured, else returns the payload. */
export function value(ctx: Ctx, tplKey: string, payload: string): string {
  const tpl = optStr(ctx.cfg, tplKey);
  return tpl ? ctx.tpl.renderValue(tpl, payload, NO_ENTITY) : payload;
}
/** value templates see no entity_id (one object for every render: renderValue copies it) */
const NO_ENTITY = Object.freeze({ entity_id: undefined });

/** Renders a command template (`value` = the command value) or stringifies the value. */
export function commandPayload(ctx: Ctx, tplKey: string, v: unknown, extra: Record<string, unknown> = {}): string {
  const tpl = optStr(ctx.cfg, tplKey);
  if (tpl) return ctx.tpl.render(tpl, { value: v, ...extra });
  return typeof v === 'string' ? v : JSON.stringify(v);
}

export function command(ctx: Ctx, topicKey: string, payload: string): Command {
  const topic = optStr(ctx.cfg, topicKey);
  if (!topic) throw new ServiceError(`entity has no ${topicKey}`);
  return { topic, payload };
}

export function numberArg(
  data: Record<string, unknown>,
  key: string,
  opts: { min?: number; max?: number; required?: boolean } = {},
): number | undefined {
  const v = data[key];
  if (v === undefined || v === null) {
    if (opts.required) throw new ServiceError(`${key} is required`);
    return undefined;
  }
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new ServiceError(`${key} must be a number`);
  if (opts.min !== undefined && n < opts.min) throw new ServiceError(`${key} must be at least ${opts.min}`);
  if (opts.max !== undefined && n > opts.max) throw new ServiceError(`${key} must be at most ${opts.max}`);
  return n;
}

export function stringArg(data: Record<string, unknown>, key: string, allowed?: string[]): string {
  const v = data[key];
  if (typeof v !== 'string' || v === '') throw new ServiceError(`${key} is required`);
  if (allowed && !allowed.includes(v)) throw new ServiceError(`${key} must be one of: ${allowed.join(', ')}`);
  return v;
}

export function toNumber(text: string): number | undefined {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** Scales between ranges, e.g. device 0..1000 ↔ HA 0..255. */
export const scale = (v: number, fromMax: number, toMax: number, fromMin = 0, toMin = 0): number =>
  ((v - fromMin) * (toMax - toMin)) / (fromMax - fromMin || 1) + toMin;

/** A failed template's values as unknown: these attributes null (see Component.failedValue). */
export const nulls =
  (...keys: string[]) =>
  (): Update => ({ attrs: Object.fromEntries(keys.map((k) => [k, null])) });
