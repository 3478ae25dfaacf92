import { TemplateEngine, TemplateError, asTimestamp, type TemplateLimits } from '../templates/template.ts';
import type { StatePort } from './ports.ts';

/**
 * Automation templates on top of the edge's sandboxed liquidjs engine
 * (edge/src/templates: ownPropertyOnly, parse/render/memory limits, output cap).
 * Adds Home Assistant's state functions by rewriting calls into lookups on
 * prototype-less proxies (nothing callable is ever exposed to a template):
 *   states('x')            → __st[x]          (state string, 'unknown' when missing)
 *   state_attr('x', 'a')   → __attr[x][a]     (attribute value)
 *   is_state('x', 'on')    → __st[x] == 'on'
 *   states.light.kitchen.state / .attributes.brightness also work.
 * And HA's time functions, read from the engine's clock (deterministic under a fake clock):
 *   now() / utcnow()        → __now / __utcnow: a frozen, prototype-less datetime object with
 *                             year, month, day, hour, minute, second, microsecond, weekday
 *                             (Mon=0), isoweekday (Mon=1), timestamp (epoch s), isoformat;
 *                             `.weekday()`, `.isoweekday()`, `.timestamp()`, `.isoformat()`
 *                             read those fields; it prints like Python's str(datetime) and
 *                             compares (<, >) by instant. now() is in the edge's local zone.
 *   as_timestamp(x)         → __ts[x]           (epoch seconds of a datetime, ISO string or number)
 *   x | as_timestamp        (a filter, same conversion; `| as_timestamp(default)`)
 *   today_at('HH:MM[:SS]')  → __today_at[...]   (today at that local time; today_at() = midnight)
 *   x.strftime('%H:%M')     → x | date: '%H:%M' (in output position only)
 *   relative_time(x)        → __rel[x]          (time since x, as HA words it: "5 minutes"; x itself
 *                                                when it is in the future or not a date)
 * Not supported: timedelta arithmetic, other datetime methods.
 */

export { TemplateError };

const IDENT = /^[a-z0-9_]+\.[a-z0-9_]+$/;
const ARG = String.raw`\s*((?:'[^']*'|"[^"]*"|[A-Za-z_][\w.\[\]'"]*))\s*`;
const RE_STATES = new RegExp(String.raw`\bstates\(${ARG}\)`, 'g');
const RE_ATTR = new RegExp(String.raw`\bstate_attr\(${ARG},${ARG}\)`, 'g');
const RE_IS_STATE = new RegExp(String.raw`\bis_state\(${ARG},${ARG}\)`, 'g');
const RE_IS_ATTR = new RegExp(String.raw`\bis_state_attr\(${ARG},${ARG},${ARG}\)`, 'g');

/** Jinja's `{{ x | float > 20 }}` (a comparison after filters; Liquid cannot) → assign + if. */
const RE_FILTER_CMP = /\{\{-?\s*([^{}]*?\|[^{}]*?)\s+(==|!=|>=|<=|>|<)\s+([^{}|]+?)\s*-?\}\}/g;
let cmpSeq = 0;

const RE_UTCNOW = /\butcnow\(\s*\)/g;
const RE_NOW = /\bnow\(\s*\)/g;
const RE_TODAY_AT = new RegExp(String.raw`\btoday_at\((?:${ARG})?\)`, 'g');
/** a quoted string or a variable path whose [..] keys may be quoted strings (`__today_at['07:30']`) */
const PATH_ARG = String.raw`\s*('[^']*'|"[^"]*"|[A-Za-z_][\w.]*(?:\[(?:'[^']*'|"[^"]*"|[\w.]+)\][\w.]*)*)\s*`;
const RE_AS_TIMESTAMP = new RegExp(String.raw`\bas_timestamp\(${PATH_ARG}\)`, 'g');
const RE_RELATIVE_TIME = new RegExp(String.raw`\brelative_time\(${PATH_ARG}\)`, 'g');
const RE_DT_METHOD = /\.(weekday|isoweekday|timestamp|isoformat)\(\s*\)/g;
const RE_STRFTIME = new RegExp(String.raw`\.strftime\(${ARG}\)`, 'g');

/** HA function-call syntax → Liquid lookups (exported for tests). */
export function rewriteHaFunctions(src: string): string {
  return src
    .replace(RE_UTCNOW, '__utcnow')
    .replace(RE_NOW, '__now')
    .replace(RE_TODAY_AT, (_m, t: string | undefined) => `__today_at[${t ?? "'00:00'"}]`)
    .replace(RE_DT_METHOD, '.$1')
    .replace(RE_STRFTIME, (_m, f: string) => ` | date: ${f}`)
    .replace(RE_FILTER_CMP, (_m, lhs: string, op: string, rhs: string) => {
      const v = `__cmp${cmpSeq++ % 1000}`;
      return `{% assign ${v} = ${lhs} %}{% if ${v} ${op} ${rhs} %}true{% else %}false{% endif %}`;
    })
    .replace(RE_IS_ATTR, (_m, e: string, a: string, v: string) => `__attr[${e}][${a}] == ${v}`)
    .replace(RE_IS_STATE, (_m, e: string, v: string) => `__st[${e}] == ${v}`)
    .replace(RE_ATTR, (_m, e: string, a: string) => `__attr[${e}][${a}]`)
    .replace(RE_STATES, (_m, e: string) => `__st[${e}]`)
    .replace(RE_AS_TIMESTAMP, (_m, x: string) => `__ts[${x}]`)
    .replace(RE_RELATIVE_TIME, (_m, x: string) => `__rel[${x}]`);
}

const pad = (n: number, w = 2) => String(Math.trunc(Math.abs(n))).padStart(w, '0');

/**
 * A datetime as HA templates see it, for an instant in the local zone (or UTC). Plain data
 * only: no prototype, frozen, and the one function (Symbol.toPrimitive, which a template
 * cannot name) makes it print as `2026-01-05 13:00:00.000000+01:00` and compare by instant.
 */
export function haDateTime(ms: number, utc = false): Readonly<Record<string, unknown>> {
  const d = new Date(ms);
  const f = utc
    ? { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds(), ms: d.getUTCMilliseconds(), dow: d.getUTCDay() }
    : { year: d.getFullYear(), month: d.getMonth() + 1, day: d.getDate(), hour: d.getHours(), minute: d.getMinutes(), second: d.getSeconds(), ms: d.getMilliseconds(), dow: d.getDay() };
  const offset = utc ? 0 : -d.getTimezoneOffset();
  const zone = `${offset < 0 ? '-' : '+'}${pad(offset / 60)}:${pad(offset % 60)}`;
  const iso = `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}T${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}.${pad(f.ms * 1000, 6)}${zone}`;
  const text = iso.replace('T', ' ');
  const obj = Object.create(null) as Record<string | symbol, unknown>;
  Object.assign(obj, {
    year: f.year, month: f.month, day: f.day, hour: f.hour, minute: f.minute, second: f.second, microsecond: f.ms * 1000,
    weekday: (f.dow + 6) % 7, isoweekday: f.dow === 0 ? 7 : f.dow, timestamp: ms / 1000, isoformat: iso,
  });
  Object.defineProperty(obj, Symbol.toPrimitive, { value: (hint: string) => (hint === 'number' ? ms : text) });
  return Object.freeze(obj);
}

/** 'HH:MM[:SS]' today (local) at the clock's instant; undefined for anything else. */
function todayAt(now: number, hhmm: string): Readonly<Record<string, unknown>> | undefined {
  const m = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(hhmm.trim());
  if (!m || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59) return undefined;
  const d = new Date(now);
  return haDateTime(new Date(d.getFullYear(), d.getMonth(), d.getDate(), Number(m[1]), Number(m[2]), Number(m[3] ?? 0), 0).getTime());
}

/**
 * Home Assistant's relative_time (dt_util.get_age): the largest whole unit of the time since
 * `then`, "1 hour" / "5 minutes"; months are 30 days, years 365.
 */
export function relativeTime(nowMs: number, thenSeconds: number): string | null {
  let seconds = Math.floor(nowMs / 1000 - thenSeconds);
  if (seconds < 0) return null;
  const units: [string, number][] = [['year', 365 * 86400], ['month', 30 * 86400], ['day', 86400], ['hour', 3600], ['minute', 60]];
  for (const [unit, size] of units) {
    const n = Math.floor(seconds / size);
    if (n > 0) return n === 1 ? `1 ${unit}` : `${n} ${unit}s`;
    seconds %= size;
  }
  return seconds === 1 ? '1 second' : `${seconds} seconds`;
}

/** A read-only object whose keys are computed on demand and all count as own properties. */
function lookupProxy(get: (key: string) => unknown): Record<string, unknown> {
  const valueOf = (k: string | symbol) => (typeof k === 'string' && k !== '__proto__' && k !== 'constructor' && k !== 'prototype' ? get(k) : undefined);
  return new Proxy(Object.create(null) as Record<string, unknown>, {
    get: (_t, k) => valueOf(k),
    has: (_t, k) => valueOf(k) !== undefined,
    getOwnPropertyDescriptor: (_t, k) => {
      const value = valueOf(k);
      return value === undefined ? undefined : { value, enumerable: true, configurable: true, writable: false };
    },
    ownKeys: () => [],
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
    getPrototypeOf: () => null,
    setPrototypeOf: () => false,
  });
}

/** Plain copy of a state for templates (no class instances, no shared references). */
function stateObject(states: StatePort, id: string): Record<string, unknown> | undefined {
  const s = states.get(id);
  if (!s) return undefined;
  return { entity_id: s.entity_id, state: s.state ?? 'unknown', attributes: { ...s.attributes }, last_changed: s.last_changed ?? null, last_updated: s.last_updated ?? null, name: s.name, domain: s.domain };
}

export class AutomationTemplates {
  private readonly engine: TemplateEngine;
  private readonly states: StatePort;
  private readonly globals: Record<string, unknown>;
  private readonly clock: { now(): number };
  /** `clock` is the engine's (now(), utcnow(), today_at()); the system clock when omitted. */
  constructor(states: StatePort, limits: Partial<TemplateLimits> = {}, clock: { now(): number } = { now: () => Date.now() }) {
    this.states = states;
    this.clock = clock;
    this.engine = new TemplateEngine({ renderMs: 100, maxOutput: 1_048_576, ...limits });
    const st = lookupProxy((id) => (IDENT.test(id) ? (this.states.get(id)?.state ?? 'unknown') : undefined));
    const attr = lookupProxy((id) => {
      const s = IDENT.test(id) ? this.states.get(id) : undefined;
      return s ? lookupProxy((a) => (Object.hasOwn(s.attributes, a) ? copy(s.attributes[a]) : undefined)) : undefined;
    });
    const domains = lookupProxy((domain) => (/^[a-z0-9_]+$/.test(domain) ? lookupProxy((obj) => (/^[a-z0-9_]+$/.test(obj) ? stateObject(this.states, `${domain}.${obj}`) : undefined)) : undefined));
    // lookup keys are strings: a datetime key arrives as its text, which Date.parse reads back
    const ts = lookupProxy((x) => asTimestamp(x) ?? undefined);
    const today = lookupProxy((x) => todayAt(this.clock.now(), x));
    const rel = lookupProxy((x) => {
      // a missing value arrives as the key "undefined" (or "null"): print nothing, as for other lookups
      if (x === 'undefined' || x === 'null') return undefined;
      const then = asTimestamp(x);
      return then === null ? x : (relativeTime(this.clock.now(), then) ?? x);
    });
    this.globals = { __st: st, __attr: attr, states: domains, __ts: ts, __today_at: today, __rel: rel };
  }

  static isTemplate(value: unknown): value is string {
    return typeof value === 'string' && (value.includes('{{') || value.includes('{%'));
  }

  /** Throws TemplateError when the template does not parse or is too long. */
  validate(source: string): void {
    this.engine.validate(rewriteHaFunctions(source));
  }

  /** Renders to a string (trimmed). Throws TemplateError. */
  renderString(source: string, vars: Record<string, unknown>): string {
    if (!AutomationTemplates.isTemplate(source)) return source;
    const src = rewriteHaFunctions(source);
    const scope: Record<string, unknown> = { ...vars, ...this.globals };
    if (src.includes('__now')) scope.__now = haDateTime(this.clock.now());
    if (src.includes('__utcnow')) scope.__utcnow = haDateTime(this.clock.now(), true);
    return this.engine.render(src, scope);
  }

  /** Renders and, like HA, turns a result that reads as a number, boolean or JSON into that value. */
  renderNative(source: string, vars: Record<string, unknown>): unknown {
    if (!AutomationTemplates.isTemplate(source)) return source;
    return toNative(this.renderString(source, vars));
  }

  /** Renders every template string inside a JSON-like value (objects, arrays) to native values. */
  renderDeep(value: unknown, vars: Record<string, unknown>, depth = 0): unknown {
    if (depth > 32) throw new TemplateError('data nested too deeply');
    if (typeof value === 'string') return this.renderNative(value, vars);
    if (Array.isArray(value)) return value.map((v) => this.renderDeep(v, vars, depth + 1));
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.renderDeep(v, vars, depth + 1);
      return out;
    }
    return value;
  }

  /** Template condition: true for "true"/"True"/"on"/"yes"/"1" or a non-zero number. */
  renderBoolean(source: string, vars: Record<string, unknown>): boolean {
    const out = this.renderString(source, vars).trim().toLowerCase();
    if (out === 'true' || out === 'on' || out === 'yes' || out === 'enable') return true;
    const n = Number(out);
    return out !== '' && Number.isFinite(n) && n !== 0;
  }
}

function copy(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

export function toNative(out: string): unknown {
  const s = out.trim();
  if (s === '') return '';
  if (s === 'true' || s === 'True') return true;
  if (s === 'false' || s === 'False') return false;
  if (/^-?(0|[1-9]\d{0,15})(\.\d+)?$/.test(s)) return Number(s);
  if ((s.startsWith('{') && s.endsWith('}')) || (s.startsWith('[') && s.endsWith(']'))) {
    try { return JSON.parse(s); } catch { return out; }
  }
  return out;
}
