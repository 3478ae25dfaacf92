import type { Filter, RenderContext, Test } from './interpreter.ts';
import { isNamespace } from './objects.ts';
import { PyDate, PyDateTime } from './datetime.ts';
import { PyTimedelta } from './timedelta.ts';
import { compileRegex } from './regex.ts';
import { percentFormat } from './format.ts';
import {
  Callable,
  RenderError,
  tuple,
  compare,
  contains,
  dict,
  equals,
  float,
  floatRepr,
  isDict,
  isFloat,
  isList,
  isNum,
  iterate,
  length,
  num,
  repr,
  str,
  toJs,
  truthy,
  typeName,
} from './values.ts';

/** Jinja's built-in filters and tests, with Python semantics. HA's own are in ha-filters.ts. */

function attrGetter(ctx: RenderContext, attribute: unknown): (v: unknown) => unknown {
  const path =
    typeof attribute === 'number'
      ? [attribute]
      : String(attribute)
          .split('.')
          .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  return (v) => path.reduce<unknown>((o, p) => (o === undefined ? undefined : ctx.getItem(o, p)), v);
}

function sortKey(ctx: RenderContext, kw: Record<string, unknown>, caseSensitive: boolean): (v: unknown) => unknown {
  const get = kw.attribute !== undefined && kw.attribute !== null ? attrGetter(ctx, kw.attribute) : (v: unknown) => v;
  return (v) => {
    const k = get(v);
    return !caseSensitive && typeof k === 'string' ? k.toLowerCase() : k;
  };
}

function sorted(ctx: RenderContext, items: unknown[], key: (v: unknown) => unknown, reverse: boolean): unknown[] {
  const keyed = items.map((v) => [key(v), v] as const);
  keyed.sort((a, b) => compare(a[0], b[0], '<'));
  if (reverse) keyed.reverse();
  ctx.tick();
  return keyed.map(([, v]) => v);
}

function selectOrReject(ctx: RenderContext, value: unknown, args: unknown[], keep: boolean, attr: boolean): unknown[] {
  const items = iterate(value);
  const get = attr ? attrGetter(ctx, args[0]) : (v: unknown) => v;
  const rest = attr ? args.slice(1) : args;
  const test = rest.length ? String(rest[0]) : undefined;
  return items.filter((item) => {
    ctx.countIteration();
    const v = get(item);
    const ok = test === undefined ? truthy(v) : ctx.test(test, v, rest.slice(1));
    return ok === keep;
  });
}

function minMax(ctx: RenderContext, value: unknown, kw: Record<string, unknown>, sign: 1 | -1): unknown {
  const items = iterate(value);
  if (!items.length) return undefined;
  const key = sortKey(ctx, kw, truthy(kw.case_sensitive));
  return items.reduce((best, v) => (compare(key(v), key(best), '<') * sign < 0 ? v : best));
}

const arg = (args: unknown[], kw: Record<string, unknown>, i: number, name: string, dflt?: unknown) =>
  i < args.length ? args[i] : Object.hasOwn(kw, name) ? kw[name] : dflt;

export const jinjaFilters: Record<string, Filter> = {
  default: (_c, v, a, kw) => {
    const dflt = arg(a, kw, 0, 'default_value', '');
    const boolean = truthy(arg(a, kw, 1, 'boolean', false));
    return v === undefined || (boolean && !truthy(v)) ? dflt : v;
  },
  abs: (_c, v) => {
    if (!isNum(v)) throw new RenderError(`bad operand type for abs(): '${typeName(v)}'`);
    return isFloat(v) ? float(Math.abs(num(v))) : Math.abs(num(v));
  },
  join: (ctx, v, a, kw) => {
    const get = kw.attribute !== undefined ? attrGetter(ctx, kw.attribute) : (x: unknown) => x;
    return ctx.join(
      iterate(v).map((x) => str(get(x))),
      str(arg(a, kw, 0, 'd', '')),
    );
  },
  map: (ctx, v, a, kw) => {
    const items = iterate(v);
    if (kw.attribute !== undefined) {
      const get = attrGetter(ctx, kw.attribute);
      return items.map((x) => {
        const r = get(x);
        return r === undefined && Object.hasOwn(kw, 'default') ? kw.default : r;
      });
    }
    if (!a.length) throw new RenderError('map: a filter name or attribute= is required');
    const name = String(a[0]);
    const rest = dict(Object.entries(kw));
    return items.map((x) => {
      ctx.countIteration();
      return ctx.filter(name, x, a.slice(1), rest);
    });
  },
  select: (ctx, v, a) => selectOrReject(ctx, v, a, true, false),
  reject: (ctx, v, a) => selectOrReject(ctx, v, a, false, false),
  selectattr: (ctx, v, a) => selectOrReject(ctx, v, a, true, true),
  rejectattr: (ctx, v, a) => selectOrReject(ctx, v, a, false, true),
  list: (_c, v) => [...iterate(v)],
  first: (_c, v) => iterate(v)[0],
  last: (_c, v) => iterate(v).at(-1),
  length: (_c, v) => length(v),
  count: (_c, v) => length(v),
  min: (ctx, v, _a, kw) => minMax(ctx, v, kw, 1),
  max: (ctx, v, _a, kw) => minMax(ctx, v, kw, -1),
  sum: (ctx, v, a, kw) => {
    const get = kw.attribute !== undefined ? attrGetter(ctx, kw.attribute) : (x: unknown) => x;
    return iterate(v).reduce((acc, x) => ctx.filter('add', acc, [get(x)]), arg(a, kw, 1, 'start', 0));
  },
  add: (ctx, v, a) => {
    const b = a[0];
    if (isNum(v) && isNum(b)) return isFloat(v) || isFloat(b) ? float(num(v) + num(b)) : num(v) + num(b);
    if (typeof v === 'string' && typeof b === 'string') return ctx.checkString(v + b);
    if (isList(v) && isList(b)) return [...v, ...b];
    throw new RenderError(`unsupported operand type(s) for +: '${typeName(v)}' and '${typeName(b)}'`);
  },
  sort: (ctx, v, a, kw) =>
    sorted(
      ctx,
      [...iterate(v)],
      sortKey(ctx, { attribute: arg(a, kw, 2, 'attribute') }, truthy(arg(a, kw, 1, 'case_sensitive', false))),
      truthy(arg(a, kw, 0, 'reverse', false)),
    ),
  dictsort: (ctx, v, a, kw) => {
    if (!isDict(v)) throw new RenderError('dictsort: a mapping is required');
    const byValue = arg(a, kw, 1, 'by', 'key') === 'value';
    const cs = truthy(arg(a, kw, 0, 'case_sensitive', false));
    return sorted(
      ctx,
      Object.entries(v).map((e) => tuple(e)),
      (e) => {
        const k = (e as unknown[])[byValue ? 1 : 0];
        return !cs && typeof k === 'string' ? k.toLowerCase() : k;
      },
      truthy(arg(a, kw, 2, 'reverse', false)),
    );
  },
  items: (_c, v) =>
    v === undefined
      ? []
      : isDict(v)
        ? Object.entries(v).map((e) => tuple(e))
        : (() => {
            throw new RenderError('items: a mapping is required');
          })(),
  unique: (ctx, v, _a, kw) => {
    const out: unknown[] = [];
    const key = sortKey(ctx, kw, truthy(kw.case_sensitive));
    for (const x of iterate(v))
      if (
        !out.some((y) => {
          ctx.tick();
          return equals(key(y), key(x));
        })
      )
        out.push(x);
    return out;
  },
  reverse: (_c, v) => (typeof v === 'string' ? [...v].reverse().join('') : [...iterate(v)].reverse()),
  replace: (ctx, v, a) => {
    const s = str(v);
    const [from, to] = [str(a[0]), str(a[1])];
    const count = isNum(a[2]) ? num(a[2]) : -1;
    const parts = s.split(from);
    if (count < 0 || parts.length <= count + 1) return ctx.join(parts, to);
    return ctx.checkString(ctx.join(parts.slice(0, count + 1), to) + from + parts.slice(count + 1).join(from));
  },
  lower: (_c, v) => str(v).toLowerCase(),
  upper: (_c, v) => str(v).toUpperCase(),
  title: (_c, v) => str(v).replace(/([\w]+)/g, (w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase()),
  capitalize: (_c, v) => {
    const s = str(v);
    return s ? s[0]!.toUpperCase() + s.slice(1).toLowerCase() : s;
  },
  trim: (_c, v, a) =>
    a[0] === undefined
      ? str(v).trim()
      : str(v).replace(new RegExp(`^[${escapeClass(str(a[0]))}]+|[${escapeClass(str(a[0]))}]+$`, 'g'), ''),
  center: (_c, v, a) => {
    const s = str(v);
    const w = Math.min(isNum(a[0]) ? num(a[0]) : 80, 10_000);
    const t = Math.max(w - s.length, 0);
    return ' '.repeat(Math.floor(t / 2)) + s + ' '.repeat(t - Math.floor(t / 2));
  },
  truncate: (_c, v, a, kw) => {
    const s = str(v);
    const n = Number(arg(a, kw, 0, 'length', 255));
    const end = str(arg(a, kw, 2, 'end', '...'));
    const leeway = Number(arg(a, kw, 3, 'leeway', 5));
    if (s.length <= n + leeway) return s;
    if (truthy(arg(a, kw, 1, 'killwords', false))) return s.slice(0, n - end.length) + end;
    const cut = s.slice(0, n - end.length);
    return cut.replace(/\s*\S*$/, '') + end;
  },
  wordcount: (_c, v) => (str(v).match(/\w+/g) ?? []).length,
  string: (_c, v) => str(v),
  format: (ctx, v, a, kw) => ctx.checkString(percentFormat(str(v), Object.keys(kw).length ? kw : a)),
  pprint: (_c, v) => repr(v),
  batch: (ctx, v, a) => {
    const items = iterate(v);
    const n = Math.min(Math.max(1, Math.trunc(Number(num(a[0] as number)))), ctx.limits.maxIterations);
    const out: unknown[][] = [];
    for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
    if (a.length > 1 && out.length && out.at(-1)!.length < n) while (out.at(-1)!.length < n) out.at(-1)!.push(a[1]);
    return out;
  },
  attr: (ctx, v, a) => ctx.getAttr(v, str(a[0])),
  indent: (_c, v, a, kw) => {
    const width = arg(a, kw, 0, 'width', 4);
    const pad = typeof width === 'string' ? width : ' '.repeat(Math.min(Number(num(width as number)), 100));
    const lines = str(v).split('\n');
    const first = truthy(arg(a, kw, 1, 'first', false));
    return lines
      .map((l, i) => ((i === 0 && !first) || (l === '' && !truthy(arg(a, kw, 2, 'blank', false))) ? l : pad + l))
      .join('\n');
  },
  urlencode: (_c, v) =>
    isDict(v)
      ? Object.entries(v)
          .map(([k, x]) => `${encodeURIComponent(k)}=${encodeURIComponent(str(x))}`)
          .join('&')
      : encodeURIComponent(str(v)).replace(/%2F/g, '/'),
  random: (_c, v) => {
    const items = iterate(v);
    return items[Math.floor(Math.random() * items.length)];
  },
  tojson: (_c, v, a, kw) => pyJson(toJs(v), a[0] ?? kw.indent, 0),
  safe: (_c, v) => v,
  e: (_c, v) =>
    str(v)
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&#34;')
      .replace(/'/g, '&#39;'),
  striptags: (_c, v) =>
    str(v)
      .replace(/<[^>]*>/g, '')
      .replace(/\s+/g, ' ')
      .trim(),
};
jinjaFilters.d = jinjaFilters.default!;
jinjaFilters.escape = jinjaFilters.e!;

/** Jinja's tojson: Python's json.dumps (", " and ": " separators, ASCII only) made safe inside HTML. */
function pyJson(v: unknown, indent: unknown, depth: number): string {
  if (depth > 64) throw new RenderError('value nested too deeply');
  const ind = isNum(indent) ? ' '.repeat(Math.min(num(indent), 16)) : undefined;
  const nl = (d: number) => (ind === undefined ? '' : `\n${ind.repeat(d)}`);
  const sep = ind === undefined ? ', ' : ',';
  let out: string;
  if (Array.isArray(v))
    out = v.length
      ? `[${nl(depth + 1)}${v.map((x) => pyJson(x, indent, depth + 1)).join(sep + nl(depth + 1))}${nl(depth)}]`
      : '[]';
  else if (v && typeof v === 'object') {
    const e = Object.entries(v as Record<string, unknown>);
    out = e.length
      ? `{${nl(depth + 1)}${e.map(([k, x]) => `${pyJson(k, indent, depth + 1)}: ${pyJson(x, indent, depth + 1)}`).join(sep + nl(depth + 1))}${nl(depth)}}`
      : '{}';
  } else if (typeof v === 'number') out = Number.isInteger(v) ? String(v) : floatRepr(v);
  else out = JSON.stringify(v ?? null);
  if (depth > 0) return out;
  return out
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/'/g, '\\u0027');
}

function escapeClass(s: string): string {
  return s.replace(/[\\\]^-]/g, '\\$&');
}

/** json.dumps as HA's to_json does it (compact unless pretty_print; keys in order unless sort_keys). */
export function toJson(v: unknown, kw: Record<string, unknown> = {}): string {
  let data = toJs(v);
  if (truthy(kw.sort_keys)) data = sortKeys(data);
  const out = JSON.stringify(data === undefined ? null : data, null, truthy(kw.pretty_print) ? 2 : undefined) ?? 'null';
  return truthy(kw.ensure_ascii)
    ? out.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : out;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}

const cmpTest = (op: string) => (_c: RenderContext, v: unknown, a: unknown[]) => {
  if (op === '==') return equals(v, a[0]);
  if (op === '!=') return !equals(v, a[0]);
  const c = compare(v, a[0], op);
  return op === '<' ? c < 0 : op === '>' ? c > 0 : op === '<=' ? c <= 0 : c >= 0;
};

export const jinjaTests: Record<string, Test> = {
  defined: (_c, v) => v !== undefined,
  undefined: (_c, v) => v === undefined,
  none: (_c, v) => v === null,
  boolean: (_c, v) => typeof v === 'boolean',
  true: (_c, v) => v === true,
  false: (_c, v) => v === false,
  number: (_c, v) => isNum(v) || typeof v === 'boolean',
  integer: (_c, v) => isNum(v) && !isFloat(v),
  float: (_c, v) => isFloat(v),
  string: (_c, v) => typeof v === 'string',
  mapping: (_c, v) => isDict(v) || isNamespace(v),
  sequence: (_c, v) => typeof v === 'string' || isList(v) || isDict(v),
  iterable: (_c, v) =>
    typeof v === 'string' || isList(v) || isDict(v) || typeof (v as { pyIter?: unknown } | null)?.pyIter === 'function',
  callable: (_c, v) => v instanceof Callable,
  odd: (_c, v) => isNum(v) && Math.abs(num(v) % 2) === 1,
  even: (_c, v) => isNum(v) && num(v) % 2 === 0,
  divisibleby: (_c, v, a) => isNum(v) && isNum(a[0]) && num(v) % num(a[0]) === 0,
  lower: (_c, v) => typeof v === 'string' && v === v.toLowerCase(),
  upper: (_c, v) => typeof v === 'string' && v === v.toUpperCase(),
  sameas: (_c, v, a) => v === a[0],
  in: (_c, v, a) => contains(a[0], v),
  eq: cmpTest('=='),
  equalto: cmpTest('=='),
  '==': cmpTest('=='),
  ne: cmpTest('!='),
  '!=': cmpTest('!='),
  lt: cmpTest('<'),
  lessthan: cmpTest('<'),
  '<': cmpTest('<'),
  gt: cmpTest('>'),
  greaterthan: cmpTest('>'),
  '>': cmpTest('>'),
  le: cmpTest('<='),
  '<=': cmpTest('<='),
  ge: cmpTest('>='),
  '>=': cmpTest('>='),
  // Home Assistant's tests
  match: (_c, v, a) => compileRegex(a[0], a[1]).exec(str(v))?.index === 0,
  search: (_c, v, a) => compileRegex(a[0], a[1]).test(str(v)),
  contains: (_c, v, a) => contains(v, a[0]),
  list: (_c, v) => isList(v),
  set: () => false,
  tuple: () => false,
  datetime: (_c, v) => v instanceof PyDateTime,
  string_like: (_c, v) => typeof v === 'string',
  is_number: (_c, v) => isNumber(v),
  date: (_c, v) => v instanceof PyDate,
  timedelta: (_c, v) => v instanceof PyTimedelta,
};

/** HA's is_number: a number, or a string that float() reads as a finite number. */
export function isNumber(v: unknown): boolean {
  if (typeof v === 'boolean') return true; // float(True) is 1.0
  if (isNum(v)) return Number.isFinite(num(v));
  if (typeof v !== 'string') return false;
  const s = v.trim().replace(/_/g, '');
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s) && Number.isFinite(Number(s));
}
