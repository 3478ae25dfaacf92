import type { OutputGuard } from './output-guard.ts';
import { strFormat } from './format.ts';
import {
  Callable,
  RenderError,
  dict,
  tuple,
  equals,
  isDict,
  isList,
  isNum,
  iterate,
  num,
  str,
  typeName,
} from './values.ts';

/**
 * The Python methods templates call on str, list and dict values. Only methods that do not
 * change their object (Home Assistant renders in Jinja's immutable sandbox, so
 * `list.append` is refused there too).
 */

const method = (name: string, fn: (a: unknown[], kw: Record<string, unknown>) => unknown) => new Callable(name, fn);

function needStr(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new RenderError(`${what} argument must be str, not ${typeName(v)}`);
  return v;
}

const WS = /^[\s]+|[\s]+$/g;
function stripChars(s: string, chars: unknown, side: 'both' | 'left' | 'right'): string {
  if (chars === undefined || chars === null) {
    if (side === 'both') return s.replace(WS, '');
    return side === 'left' ? s.replace(/^\s+/, '') : s.replace(/\s+$/, '');
  }
  const set = new Set(needStr(chars, 'strip'));
  let a = 0;
  let b = s.length;
  if (side !== 'right') while (a < b && set.has(s[a]!)) a++;
  if (side !== 'left') while (b > a && set.has(s[b - 1]!)) b--;
  return s.slice(a, b);
}

function split(s: string, sep: unknown, maxsplit: unknown): string[] {
  const max = isNum(maxsplit) ? num(maxsplit) : -1;
  if (sep === undefined || sep === null) {
    const parts = s
      .trim()
      .split(/\s+/)
      .filter((p) => p !== '');
    if (max < 0 || parts.length <= max + 1) return parts;
    // re-split keeping the rest of the string whole
    const out: string[] = [];
    let rest = s.replace(/^\s+/, '');
    for (let i = 0; i < max; i++) {
      const m = /\s+/.exec(rest);
      if (!m) break;
      out.push(rest.slice(0, m.index));
      rest = rest.slice(m.index + m[0].length);
    }
    out.push(rest);
    return out;
  }
  const d = needStr(sep, 'split');
  if (d === '') throw new RenderError('empty separator');
  const parts = s.split(d);
  if (max < 0 || parts.length <= max + 1) return parts;
  return [...parts.slice(0, max), parts.slice(max).join(d)];
}

function strMethod(ctx: OutputGuard, s: string, name: string): Callable | undefined {
  switch (name) {
    case 'split':
      return method(name, (a, kw) => split(s, a[0] ?? kw.sep, a[1] ?? kw.maxsplit));
    case 'rsplit':
      return method(name, (a) => {
        if (a[1] === undefined) return split(s, a[0], undefined);
        const max = num(a[1] as number);
        const parts = split(s, a[0], undefined);
        const d = a[0] === undefined || a[0] === null ? ' ' : String(a[0]);
        return max < 0 || parts.length <= max + 1
          ? parts
          : [parts.slice(0, parts.length - max).join(d), ...parts.slice(parts.length - max)];
      });
    case 'strip':
      return method(name, (a) => stripChars(s, a[0], 'both'));
    case 'lstrip':
      return method(name, (a) => stripChars(s, a[0], 'left'));
    case 'rstrip':
      return method(name, (a) => stripChars(s, a[0], 'right'));
    case 'lower':
      return method(name, () => s.toLowerCase());
    case 'upper':
      return method(name, () => s.toUpperCase());
    case 'title':
      return method(name, () => s.replace(/[A-Za-z]+/g, (w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase()));
    case 'capitalize':
      return method(name, () => (s ? s[0]!.toUpperCase() + s.slice(1).toLowerCase() : s));
    case 'replace':
      return method(name, (a) => {
        const from = needStr(a[0], 'replace');
        const to = needStr(a[1], 'replace');
        const count = isNum(a[2]) ? num(a[2]) : -1;
        const parts = s.split(from);
        if (count < 0) return ctx.join(parts, to);
        return ctx.checkString(
          ctx.join(parts.slice(0, count + 1), to) +
            (parts.length > count + 1 ? from + parts.slice(count + 1).join(from) : ''),
        );
      });
    case 'startswith':
      return method(name, (a) =>
        isList(a[0]) ? a[0].some((p) => s.startsWith(String(p))) : s.startsWith(needStr(a[0], 'startswith')),
      );
    case 'endswith':
      return method(name, (a) =>
        isList(a[0]) ? a[0].some((p) => s.endsWith(String(p))) : s.endsWith(needStr(a[0], 'endswith')),
      );
    case 'find':
      return method(name, (a) => s.indexOf(needStr(a[0], 'find')));
    case 'rfind':
      return method(name, (a) => s.lastIndexOf(needStr(a[0], 'rfind')));
    case 'index':
      return method(name, (a) => {
        const i = s.indexOf(needStr(a[0], 'index'));
        if (i < 0) throw new RenderError('substring not found');
        return i;
      });
    case 'count':
      return method(name, (a) => s.split(needStr(a[0], 'count')).length - 1);
    case 'join':
      return method(name, (a) =>
        ctx.join(
          iterate(a[0]).map((x) => {
            if (typeof x !== 'string')
              throw new RenderError(`sequence item: expected str instance, ${typeName(x)} found`);
            return x;
          }),
          s,
        ),
      );
    case 'format':
      return method(name, (a, kw) => ctx.checkString(strFormat(s, a, kw)));
    case 'isdigit':
    case 'isnumeric':
    case 'isdecimal':
      return method(name, () => /^\d+$/.test(s));
    case 'isalpha':
      return method(name, () => /^\p{L}+$/u.test(s));
    case 'isalnum':
      return method(name, () => /^[\p{L}\d]+$/u.test(s));
    case 'isspace':
      return method(name, () => /^\s+$/.test(s));
    case 'islower':
      return method(name, () => /[a-z]/.test(s) && s === s.toLowerCase());
    case 'isupper':
      return method(name, () => /[A-Z]/.test(s) && s === s.toUpperCase());
    case 'zfill':
      return method(name, (a) => {
        const w = Math.min(isNum(a[0]) ? num(a[0]) : 0, ctx.limits.maxOutput);
        const sign = s[0] === '-' || s[0] === '+' ? s[0] : '';
        return sign + s.slice(sign.length).padStart(w - sign.length, '0');
      });
    case 'center':
    case 'ljust':
    case 'rjust':
      return method(name, (a) => {
        const w = Math.min(isNum(a[0]) ? num(a[0]) : 0, ctx.limits.maxOutput);
        const fill = typeof a[1] === 'string' && a[1].length === 1 ? a[1] : ' ';
        if (name === 'ljust') return s.padEnd(w, fill);
        if (name === 'rjust') return s.padStart(w, fill);
        const total = Math.max(w - s.length, 0);
        const left = Math.floor(total / 2) + (total % 2 && w % 2 ? 1 : 0);
        return fill.repeat(left) + s + fill.repeat(total - left);
      });
    case 'removeprefix':
      return method(name, (a) => (s.startsWith(needStr(a[0], name)) ? s.slice(String(a[0]).length) : s));
    case 'removesuffix':
      return method(name, (a) =>
        a[0] !== '' && s.endsWith(needStr(a[0], name)) ? s.slice(0, s.length - String(a[0]).length) : s,
      );
    case 'splitlines':
      return method(name, () => s.split(/\r\n|\r|\n/).filter((p, i, all) => i < all.length - 1 || p !== ''));
    case 'encode':
      return undefined;
    default:
      return undefined;
  }
}

function listMethod(items: unknown[], name: string): Callable | undefined {
  switch (name) {
    case 'index':
      return method(name, (a) => {
        const i = items.findIndex((x) => equals(x, a[0]));
        if (i < 0) throw new RenderError(`${str(a[0])} is not in list`);
        return i;
      });
    case 'count':
      return method(name, (a) => items.filter((x) => equals(x, a[0])).length);
    case 'copy':
      return method(name, () => [...items]);
    default:
      return undefined;
  }
}

function dictMethod(d: Record<string, unknown>, name: string): Callable | undefined {
  switch (name) {
    case 'items':
      return method(name, () => Object.entries(d).map((e) => tuple(e)));
    case 'keys':
      return method(name, () => Object.keys(d));
    case 'values':
      return method(name, () => Object.values(d));
    case 'get':
      return method(name, (a) => {
        const k = a[0];
        const key = typeof k === 'string' ? k : isNum(k) ? str(k) : undefined;
        return key !== undefined && Object.hasOwn(d, key) ? d[key] : a.length > 1 ? a[1] : null;
      });
    case 'copy':
      return method(name, () => dict(Object.entries(d)));
    default:
      return undefined;
  }
}

/** A bound method of a str, list or dict; undefined when it has none by that name. */
export function methodOf(ctx: OutputGuard, obj: unknown, name: string): Callable | undefined {
  if (typeof obj === 'string') return strMethod(ctx, obj, name);
  if (isList(obj)) return listMethod(obj, name);
  if (isDict(obj)) return dictMethod(obj, name);
  return undefined;
}
