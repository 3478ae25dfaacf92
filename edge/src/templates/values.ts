/**
 * Python values as templates see them, on plain JavaScript data: None = null, Jinja's
 * undefined = undefined, int = an integral number, float = a non-integral number or a
 * PyFloat box (so `10 / 2` prints `5.0` as Python does), str, bool, list = array,
 * dict = object. Everything a template can do to a value goes through this file and
 * interpreter.ts: only own data properties are read, and nothing callable from the host
 * (functions, prototypes, constructors) is ever reachable.
 */

export class RenderError extends Error {}

/** A float whose value is integral (others are plain numbers). */
export class PyFloat {
  readonly v: number;
  constructor(v: number) {
    this.v = v;
  }
}

/** Something a template may call: runtime functions, macros, bound methods. */
export class Callable {
  readonly name: string;
  readonly fn: (args: unknown[], kwargs: Record<string, unknown>) => unknown;
  constructor(name: string, fn: (args: unknown[], kwargs: Record<string, unknown>) => unknown) {
    this.name = name;
    this.fn = fn;
  }
}

/** Objects with attributes of their own (datetime, timedelta, states, loop, namespace). */
export interface HasAttrs {
  getAttr(name: string): unknown;
}
export const hasAttrs = (v: unknown): v is HasAttrs =>
  v instanceof Object && !isDict(v) && !Array.isArray(v) && typeof (v as Partial<HasAttrs>).getAttr === 'function';

export const isNum = (v: unknown): v is number | PyFloat => typeof v === 'number' || v instanceof PyFloat;
export const num = (v: number | PyFloat): number => (typeof v === 'number' ? v : v.v);
export const isFloat = (v: unknown): boolean => v instanceof PyFloat || (typeof v === 'number' && !Number.isInteger(v));
/** A float result: boxed when integral so it keeps printing as a float. */
export const float = (n: number): number | PyFloat => (Number.isInteger(n) ? new PyFloat(n) : n);
export const isList = (v: unknown): v is unknown[] => Array.isArray(v);
export const isDict = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

export function dict(entries: Iterable<[string, unknown]> = []): Record<string, unknown> {
  const d = Object.create(null) as Record<string, unknown>;
  for (const [k, v] of entries) d[k] = v;
  return d;
}

/** Python tuples are lists here, marked so they print as (a, b). */
const tuples = new WeakSet<unknown[]>();
export function tuple(items: unknown[]): unknown[] {
  tuples.add(items);
  return items;
}
export const isTuple = (v: unknown): boolean => Array.isArray(v) && tuples.has(v);

export function typeName(v: unknown): string {
  if (v === undefined) return 'Undefined';
  if (v === null) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (isNum(v)) return isFloat(v) ? 'float' : 'int';
  if (typeof v === 'string') return 'str';
  if (isList(v)) return tuples.has(v) ? 'tuple' : 'list';
  if (isDict(v)) return 'dict';
  if (v instanceof Callable) return 'function';
  return (v as { pyType?: string }).pyType ?? 'object';
}

export function truthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '') return false;
  if (isNum(v)) return num(v) !== 0 && !Number.isNaN(num(v));
  if (isList(v)) return v.length > 0;
  if (isDict(v)) return Object.keys(v).length > 0;
  const b = (v as { pyBool?: () => boolean }).pyBool;
  return typeof b === 'function' ? b.call(v) : true;
}

/** Python's repr of a float: shortest round-trip digits, exponent outside 1e-4 ≤ |x| < 1e16. */
export function floatRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const [mant, expS] = n.toExponential().split('e') as [string, string];
  const exp = Number(expS);
  if (exp < -4 || exp >= 16) {
    const m = mant.includes('.') ? mant : mant;
    return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const s = String(n);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch < ' ') out += `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return quote + out + quote;
}

/** Python's repr(), as lists and dicts print their items. */
/** Most characters (and items) printing or converting one value may produce: shared structure cannot blow up. */
export const MAX_VALUE_SIZE = 1_100_000;

export function repr(v: unknown, depth = 0, budget = { left: MAX_VALUE_SIZE }): string {
  if (depth > 64) throw new RenderError('value nested too deeply');
  if ((budget.left -= 2) < 0) throw new RenderError('value too large to print');
  if (typeof v === 'string') return strRepr(v);
  if (typeof v === 'string' && (budget.left -= v.length) < 0) throw new RenderError('value too large to print');
  if (isList(v) && tuples.has(v))
    return `(${v.map((x) => repr(x, depth + 1, budget)).join(', ')}${v.length === 1 ? ',' : ''})`;
  if (isList(v)) return `[${v.map((x) => repr(x, depth + 1, budget)).join(', ')}]`;
  if (isDict(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${strRepr(k)}: ${repr(x, depth + 1, budget)}`)
      .join(', ')}}`;
  const r = (v as { pyRepr?: () => string } | null)?.pyRepr;
  if (typeof r === 'function') return r.call(v);
  return str(v);
}

/** Python's str(); Jinja's undefined prints as nothing. */
export function str(v: unknown): string {
  if (v === undefined) return '';
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'string') return v;
  if (typeof v === 'number')
    return Number.isInteger(v) ? (Math.abs(v) < 1e21 ? String(v) : BigInt(v).toString()) : floatRepr(v);
  if (v instanceof PyFloat) return floatRepr(v.v);
  if (isList(v) || isDict(v)) return repr(v);
  if (v instanceof Callable) return `<function ${v.name}>`;
  const s = (v as { pyStr?: () => string }).pyStr;
  if (typeof s === 'function') return s.call(v);
  return '<object>';
}

/** Python ==: numbers by value (1 == 1.0 == True), lists and dicts deeply. */
export function equals(a: unknown, b: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  const an = isNum(a) || typeof a === 'boolean';
  const bn = isNum(b) || typeof b === 'boolean';
  if (an && bn) return toNumber(a) === toNumber(b);
  if (isList(a) && isList(b)) return a.length === b.length && a.every((x, i) => equals(x, b[i], depth + 1));
  if (isDict(a) && isDict(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equals(a[k], b[k], depth + 1));
  }
  const eq = (a as { pyEquals?: (o: unknown) => boolean } | null)?.pyEquals;
  if (typeof eq === 'function') return eq.call(a, b);
  return a === b;
}

const toNumber = (v: unknown): number => (typeof v === 'boolean' ? Number(v) : num(v as number));

/** Python ordering (<): numbers with numbers, str with str, lists item by item; TypeError otherwise. */
export function compare(a: unknown, b: unknown, op: string): number {
  if ((isNum(a) || typeof a === 'boolean') && (isNum(b) || typeof b === 'boolean')) return toNumber(a) - toNumber(b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (isList(a) && isList(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      if (!equals(a[i], b[i])) return compare(a[i], b[i], op);
    }
    return a.length - b.length;
  }
  const cmp = (a as { pyCompare?: (o: unknown) => number | undefined } | null)?.pyCompare;
  const r = typeof cmp === 'function' ? cmp.call(a, b) : undefined;
  if (r !== undefined) return r;
  throw new RenderError(`'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

/** Values a template may iterate: lists, strings (characters), dicts (keys), iterables of the runtime. */
export function iterate(v: unknown): unknown[] {
  if (isList(v)) return v;
  if (typeof v === 'string') return [...v];
  if (isDict(v)) return Object.keys(v);
  if (v === undefined) return [];
  const it = (v as { pyIter?: () => unknown[] } | null)?.pyIter;
  if (typeof it === 'function') return it.call(v);
  throw new RenderError(`'${typeName(v)}' object is not iterable`);
}

export function contains(container: unknown, item: unknown): boolean {
  if (typeof container === 'string') {
    if (typeof item !== 'string')
      throw new RenderError(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    return container.includes(item);
  }
  if (isDict(container)) return typeof item === 'string' || isNum(item) ? Object.hasOwn(container, str(item)) : false;
  return iterate(container).some((x) => equals(x, item));
}

export function length(v: unknown): number {
  if (typeof v === 'string') return [...v].length;
  if (isList(v)) return v.length;
  if (isDict(v)) return Object.keys(v).length;
  const it = (v as { pyIter?: () => unknown[] } | null)?.pyIter;
  if (typeof it === 'function') return it.call(v).length;
  throw new RenderError(`object of type '${typeName(v)}' has no len()`);
}

/** Python index: negative counts from the end; IndexError when out of range. */
export function index(len: number, i: number): number {
  const j = i < 0 ? len + i : i;
  return j >= 0 && j < len ? j : -1;
}

export function slice<T>(items: T[], start: unknown, stop: unknown, step: unknown): T[] {
  const st = step === null || step === undefined ? 1 : toInt(step);
  if (st === 0) throw new RenderError('slice step cannot be zero');
  const len = items.length;
  const norm = (v: unknown, dflt: number, lo: number, hi: number) => {
    if (v === null || v === undefined) return dflt;
    let n = toInt(v);
    if (n < 0) n += len;
    return Math.min(Math.max(n, lo), hi);
  };
  const out: T[] = [];
  if (st > 0) {
    for (let i = norm(start, 0, 0, len), e = norm(stop, len, 0, len); i < e; i += st) out.push(items[i]!);
  } else {
    for (let i = norm(start, len - 1, -1, len - 1), e = norm(stop, -1, -1, len - 1); i > e; i += st)
      out.push(items[i]!);
  }
  return out;
}

function toInt(v: unknown): number {
  if (typeof v === 'boolean') return Number(v);
  if (isNum(v) && Number.isInteger(num(v)) && !isFloat(v)) return num(v);
  throw new RenderError(`slice indices must be integers or None, not ${typeName(v)}`);
}

/** A JSON-safe copy for to_json and callers (floats unboxed, undefined dropped). */
export function toJs(v: unknown, depth = 0, budget = { left: MAX_VALUE_SIZE }): unknown {
  if (depth > 64) throw new RenderError('value nested too deeply');
  if (--budget.left < 0 || (typeof v === 'string' && (budget.left -= v.length) < 0))
    throw new RenderError('value too large to convert');
  if (v instanceof PyFloat) return v.v;
  if (isList(v)) return v.map((x) => toJs(x, depth + 1, budget));
  if (isDict(v))
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => [k, toJs(x, depth + 1, budget)]),
    );
  const j = (v as { toJSON?: () => unknown } | null)?.toJSON;
  if (typeof j === 'function') return j.call(v);
  return v;
}
