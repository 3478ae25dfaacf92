import { createHash } from 'node:crypto';
import type { Filter, RenderContext } from './interpreter.ts';
import { isNumber, toJson } from './filters.ts';
import { compileRegex, subject, translateReplacement } from './regex.ts';
import { RenderError, float, isDict, isList, isNum, iterate, num, str, truthy, typeName } from './values.ts';

/**
 * Home Assistant's number, boolean, regex, JSON and text filters (homeassistant/helpers/template.py):
 * a conversion that fails returns the `default` argument when one is given and is an error otherwise.
 */

export const NO_DEFAULT = Symbol('no default');

export function noDefault(name: string, value: unknown): never {
  throw new RenderError(`${name} got invalid input '${str(value)}' but no default was specified`);
}

/** Python's float(): numbers, bools, and strings such as ' 1.5 ', '1e3', 'inf', '1_000'. */
export function pyFloat(v: unknown): number | undefined {
  if (typeof v === 'boolean') return Number(v);
  if (isNum(v)) return num(v);
  if (typeof v !== 'string') return undefined;
  const s = v.trim().toLowerCase();
  if (/^[+-]?(inf|infinity)$/.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/.test(s)) return NaN;
  if (!/^[+-]?(\d(_?\d)*\.?(\d(_?\d)*)?|\.\d(_?\d)*)(e[+-]?\d+)?$/.test(s)) return undefined;
  return Number(s.replace(/_/g, ''));
}

export function toFloat(v: unknown, dflt: unknown = NO_DEFAULT, name = 'float'): unknown {
  const n = pyFloat(v);
  if (n === undefined) return dflt === NO_DEFAULT ? noDefault(name, v) : dflt;
  return float(n);
}

/** HA's int filter (Jinja's do_int): int(str, base), else int(float(value)), else the default. */
export function toInt(v: unknown, dflt: unknown = NO_DEFAULT, base = 10): unknown {
  if (typeof v === 'string' && base !== 10) {
    const s = v
      .trim()
      .toLowerCase()
      .replace(/^0[xob]/, '');
    const n = parseInt(s, base);
    if (Number.isFinite(n) && s !== '' && [...s].every((c) => parseInt(c, base) >= 0)) return n;
  }
  const f = pyFloat(v);
  if (f === undefined || !Number.isFinite(f)) return dflt === NO_DEFAULT ? noDefault('int', v) : dflt;
  return Math.trunc(f);
}

/** Python's round(): half to even on the exact binary value. */
export function pyRound(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  if (digits > 15) return x;
  if (digits < 0) {
    const m = 10 ** -digits;
    return pyRound(x / m, 0) * m;
  }
  const exact = Math.abs(x).toFixed(Math.min(digits + 30, 100));
  const [int, frac = ''] = exact.split('.');
  const keep = frac.slice(0, digits);
  const rest = frac.slice(digits);
  let q = BigInt(int! + keep);
  const half = rest[0]! > '5' || (rest[0] === '5' && /[1-9]/.test(rest.slice(1)));
  const tie = rest[0] === '5' && !/[1-9]/.test(rest.slice(1));
  if (half || (tie && q % 2n === 1n)) q += 1n;
  const s = q.toString().padStart(digits + 1, '0');
  const out = Number(digits ? `${s.slice(0, s.length - digits)}.${s.slice(s.length - digits)}` : s);
  return x < 0 ? -out : out;
}

export function haRound(
  v: unknown,
  precision: unknown = 0,
  method: unknown = 'common',
  dflt: unknown = NO_DEFAULT,
): unknown {
  const x = pyFloat(v);
  const p = isNum(precision) ? Math.trunc(num(precision)) : 0;
  if (x === undefined) return dflt === NO_DEFAULT ? noDefault('round', v) : dflt;
  const m = 10 ** p;
  let r: number;
  if (method === 'floor') r = Math.floor(x * m) / m;
  else if (method === 'ceil') r = Math.ceil(x * m) / m;
  else if (method === 'half') r = pyRound(x * 2, 0) / 2;
  else r = pyRound(x, p);
  return p === 0 ? Math.trunc(r) : float(r);
}

/** HA's bool(): cv.boolean's words, numbers (non-zero is true); the default or an error otherwise. */
export function toBool(v: unknown, dflt: unknown = NO_DEFAULT): unknown {
  if (typeof v === 'boolean') return v;
  if (isNum(v)) return num(v) !== 0;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on', 'enable'].includes(s)) return true;
    if (['0', 'false', 'no', 'off', 'disable'].includes(s)) return false;
  }
  return dflt === NO_DEFAULT ? noDefault('bool', v) : dflt;
}

const floatArg = (name: string) => (v: unknown, dflt: unknown) => {
  const x = pyFloat(v);
  if (x === undefined) return dflt === NO_DEFAULT ? noDefault(name, v) : dflt;
  return x;
};

function math(name: string, fn: (x: number) => number): Filter {
  return (_c, v, a, kw) => {
    const x = floatArg(name)(v, a[0] ?? kw.default ?? NO_DEFAULT);
    if (typeof x !== 'number') return x;
    const r = fn(x);
    if (Number.isNaN(r) && !Number.isNaN(x)) throw new RenderError(`${name}: math domain error`);
    return float(r);
  };
}

function slugify(v: unknown, sep: unknown = '_'): string {
  const s = str(v)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  const d = typeof sep === 'string' ? sep : '_';
  return s.replace(/[^a-z0-9]+/g, d).replace(new RegExp(`^${escape(d)}+|${escape(d)}+$`, 'g'), '') || 'unknown';
}
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function ordinal(v: unknown): string {
  const n = Math.trunc(Number(toInt(v)));
  const suffix = [11, 12, 13].includes(n % 100) ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

function average(ctx: RenderContext, values: unknown[], dflt: unknown): unknown {
  if (!values.length) return dflt === NO_DEFAULT ? noDefault('average', values) : dflt;
  let sum = 0;
  for (const v of values) {
    const x = pyFloat(v);
    if (x === undefined || typeof v === 'string') return dflt === NO_DEFAULT ? noDefault('average', v) : dflt;
    sum += x;
    ctx.tick();
  }
  return float(sum / values.length);
}

export const haFilters: Record<string, Filter> = {
  float: (_c, v, a, kw) => toFloat(v, a[0] ?? kw.default ?? NO_DEFAULT),
  int: (_c, v, a, kw) =>
    toInt(
      v,
      a.length > 0 ? a[0] : Object.hasOwn(kw, 'default') ? kw.default : NO_DEFAULT,
      Number(a[1] ?? kw.base ?? 10),
    ),
  round: (_c, v, a, kw) =>
    haRound(
      v,
      a[0] ?? kw.precision ?? 0,
      a[1] ?? kw.method ?? 'common',
      a.length > 2 ? a[2] : Object.hasOwn(kw, 'default') ? kw.default : NO_DEFAULT,
    ),
  bool: (_c, v, a, kw) => toBool(v, a.length ? a[0] : Object.hasOwn(kw, 'default') ? kw.default : NO_DEFAULT),
  multiply: (_c, v, a, kw) => {
    const x = floatArg('multiply')(v, a.length > 1 ? a[1] : (kw.default ?? NO_DEFAULT));
    if (typeof x !== 'number') return x;
    const m = a[0] ?? kw.amount;
    if (!isNum(m)) throw new RenderError(`multiply: the amount must be a number, not ${typeName(m)}`);
    return float(x * num(m)); // float(value) * amount
  },
  log: (_c, v, a, kw) => {
    const x = floatArg('log')(v, a.length > 1 ? a[1] : (kw.default ?? NO_DEFAULT));
    if (typeof x !== 'number') return x;
    const base = a[0] === undefined ? Math.E : pyFloat(a[0]);
    if (base === undefined) throw new RenderError('log: invalid base');
    if (x <= 0 || base <= 0 || base === 1) throw new RenderError('log: math domain error');
    return float(Math.log(x) / Math.log(base));
  },
  sin: math('sin', Math.sin),
  cos: math('cos', Math.cos),
  tan: math('tan', Math.tan),
  asin: math('asin', Math.asin),
  acos: math('acos', Math.acos),
  atan: math('atan', Math.atan),
  sqrt: math('sqrt', (x) => {
    if (x < 0) throw new RenderError('sqrt: math domain error');
    return Math.sqrt(x);
  }),
  bitwise_and: (_c, v, a) => Number(BigInt(Math.trunc(Number(toInt(v)))) & BigInt(Math.trunc(Number(toInt(a[0]))))),
  bitwise_or: (_c, v, a) => Number(BigInt(Math.trunc(Number(toInt(v)))) | BigInt(Math.trunc(Number(toInt(a[0]))))),
  bitwise_xor: (_c, v, a) => Number(BigInt(Math.trunc(Number(toInt(v)))) ^ BigInt(Math.trunc(Number(toInt(a[0]))))),
  base64_encode: (_c, v) => Buffer.from(str(v), 'utf8').toString('base64'),
  base64_decode: (_c, v) => Buffer.from(str(v), 'base64').toString('utf8'),
  md5: (_c, v) => createHash('md5').update(str(v)).digest('hex'),
  sha1: (_c, v) => createHash('sha1').update(str(v)).digest('hex'),
  sha256: (_c, v) => createHash('sha256').update(str(v)).digest('hex'),
  sha512: (_c, v) => createHash('sha512').update(str(v)).digest('hex'),
  slugify: (_c, v, a) => slugify(v, a[0]),
  ordinal: (_c, v) => ordinal(v),
  is_defined: (_c, v) => {
    if (v === undefined) throw new RenderError('is_defined: the value is undefined');
    return v;
  },
  is_number: (_c, v) => isNumber(v),
  iif: (_c, v, a) => {
    const [ifTrue = true, ifFalse = false, ifNone = NO_DEFAULT] = a;
    if (v === null && ifNone !== NO_DEFAULT) return ifNone;
    return truthy(v) ? ifTrue : ifFalse;
  },
  to_json: (_c, v, _a, kw) => toJson(v, kw),
  from_json: (_c, v, a) => {
    try {
      return JSON.parse(str(v));
    } catch {
      if (a.length) return a[0];
      throw new RenderError(`from_json got invalid input '${str(v).slice(0, 100)}'`);
    }
  },
  regex_match: (_c, v, a, kw) =>
    compileRegex(a[0] ?? kw.find ?? '', a[1] ?? kw.ignorecase).exec(subject(v))?.index === 0,
  regex_search: (_c, v, a, kw) => compileRegex(a[0] ?? kw.find ?? '', a[1] ?? kw.ignorecase).test(subject(v)),
  regex_replace: (ctx, v, a, kw) => {
    const text = subject(v);
    const re = compileRegex(a[0] ?? kw.find ?? '', a[2] ?? kw.ignorecase, true);
    const rep = translateReplacement(str(a[1] ?? kw.replace ?? ''));
    // refuse before building: every match may add the replacement (and its groups) once
    let matches = 0;
    if (rep.length * (text.length + 1) > ctx.limits.maxOutput)
      for (const _m of text.matchAll(re))
        if (++matches * rep.length > ctx.limits.maxOutput) throw new RenderError('regex_replace: result too long');
    re.lastIndex = 0;
    return ctx.checkString(text.replace(re, rep));
  },
  regex_findall: (_c, v, a, kw) => findall(v, a[0] ?? kw.find ?? '', a[1] ?? kw.ignorecase),
  regex_findall_index: (_c, v, a, kw) => {
    const all = findall(v, a[0] ?? kw.find ?? '', a[2] ?? kw.ignorecase);
    const i = Number(a[1] ?? kw.index ?? 0);
    const item = all.at(i);
    if (item === undefined) throw new RenderError('regex_findall_index: list index out of range');
    return item;
  },
  average: (ctx, v, a) => average(ctx, isList(v) ? v : [v, ...a], NO_DEFAULT),
  median: (_c, v, a) => {
    const xs = iterate(v).map((x) => pyFloat(x));
    if (!xs.length || xs.some((x) => x === undefined)) return a.length ? a[0] : noDefault('median', v);
    const s = (xs as number[]).sort((x, y) => x - y);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 ? s[mid] : float((s[mid - 1]! + s[mid]!) / 2);
  },
  flatten: (ctx, v, a) => {
    const depth = isNum(a[0]) ? num(a[0]) : 64;
    const out: unknown[] = [];
    const walk = (items: unknown[], d: number) => {
      for (const x of items) {
        ctx.countIteration();
        if (isList(x) && d < depth) walk(x, d + 1);
        else out.push(x);
      }
    };
    walk(iterate(v), 0);
    return out;
  },
  contains: (_c, v, a) => iterate(v).some((x) => x === a[0] || (str(x) === str(a[0]) && typeof x === typeof a[0])),
  typeof: (_c, v) => typeName(v),
  shuffle: (_c, v) => [...iterate(v)].sort(() => Math.random() - 0.5),
};

function findall(v: unknown, pattern: unknown, ignoreCase: unknown): unknown[] {
  const out: unknown[] = [];
  for (const m of subject(v).matchAll(compileRegex(pattern, ignoreCase, true))) {
    out.push(m.length === 1 ? m[0] : m.length === 2 ? (m[1] ?? '') : m.slice(1).map((g) => g ?? ''));
    if (out.length > 10_000) throw new RenderError('regex_findall: too many matches');
  }
  return out;
}

export { isDict };
