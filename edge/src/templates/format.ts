import { RenderError, isDict, isFloat, isList, isNum, num, repr, str, typeName } from './values.ts';

/** Python's `'%.1f' % x` and `'{:.1f}'.format(x)` for the conversions templates use. */

function numberArg(v: unknown, conv: string): number {
  if (typeof v === 'boolean') return Number(v);
  if (!isNum(v)) throw new RenderError(`%${conv} format: a real number is required, not ${typeName(v)}`);
  return num(v);
}

function fixed(n: number, precision: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'nan' : n > 0 ? 'inf' : '-inf';
  // Python rounds the exact binary value half-to-even; toFixed rounds the decimal
  // expansion, which agrees for every value whose expansion is exact
  return n.toFixed(Math.min(precision, 100));
}

/** One conversion: flags, width, precision, type (Python's format-spec mini-language, common subset). */
function convert(
  v: unknown,
  spec: { flags: string; width: number; precision: number | undefined; type: string },
): string {
  if (spec.width > 10_000) throw new RenderError('format width too large');
  let s: string;
  const t = spec.type;
  switch (t) {
    case 'd':
    case 'i':
    case 'n':
      s = String(Math.trunc(numberArg(v, t)));
      break;
    case 'f':
    case 'F':
      s = fixed(numberArg(v, t), spec.precision ?? 6);
      break;
    case 'e':
    case 'E':
      s = numberArg(v, t)
        .toExponential(spec.precision ?? 6)
        .replace(/e([+-])(\d)$/, 'e$10$2');
      if (t === 'E') s = s.toUpperCase();
      break;
    case 'g':
    case 'G': {
      const n = numberArg(v, t);
      s = String(Number(n.toPrecision(spec.precision || 6)));
      break;
    }
    case '%':
      s = `${fixed(numberArg(v, t) * 100, spec.precision ?? 6)}%`;
      break;
    case 'x':
      s = Math.trunc(numberArg(v, t)).toString(16);
      break;
    case 'X':
      s = Math.trunc(numberArg(v, t)).toString(16).toUpperCase();
      break;
    case 'o':
      s = Math.trunc(numberArg(v, t)).toString(8);
      break;
    case 'b':
      s = Math.trunc(numberArg(v, t)).toString(2);
      break;
    case 'r':
      s = repr(v);
      break;
    case 'c':
      s = typeof v === 'string' ? v : String.fromCodePoint(numberArg(v, t));
      break;
    default:
      s = str(v);
      if (spec.precision !== undefined) s = s.slice(0, spec.precision);
  }
  if (spec.flags.includes('+') && isNum(v) && !s.startsWith('-')) s = `+${s}`;
  if (spec.flags.includes(',') && /^-?\d+/.test(s))
    s = s.replace(/^(-?\d+)/, (d) => d.replace(/\B(?=(\d{3})+(?!\d))/g, ','));
  if (s.length < spec.width) {
    if (spec.flags.includes('<') || spec.flags.includes('-'))
      s = s.padEnd(spec.width, spec.flags.includes('*') ? '*' : ' ');
    else if (spec.flags.includes('^')) {
      const total = spec.width - s.length;
      s = ' '.repeat(Math.floor(total / 2)) + s + ' '.repeat(total - Math.floor(total / 2));
    } else if (spec.flags.includes('0') && /^[-+]?\d/.test(s)) {
      const sign = /^[-+]/.test(s) ? s[0] : '';
      s = sign + s.slice(sign.length).padStart(spec.width - sign.length, '0');
    } else if (spec.flags.includes('>') || isNum(v) || !/[<^>]/.test(spec.flags)) {
      s =
        typeof v === 'string' && !spec.flags.includes('>') && !spec.flags.includes('%')
          ? s.padEnd(spec.width)
          : s.padStart(spec.width);
    }
  }
  return s;
}

/** `fmt % args` (printf style). */
export function percentFormat(fmt: string, args: unknown): string {
  const list = isList(args) ? args : [args];
  let i = 0;
  const out = fmt.replace(
    /%(?:\(([^)]*)\))?([-+ 0#]*)(\d+)?(?:\.(\d+))?([sdifFeEgGxXorc%])/g,
    (_m, key: string | undefined, flags: string, width: string | undefined, prec: string | undefined, type: string) => {
      if (type === '%') return '%';
      let v: unknown;
      if (key !== undefined) {
        if (!isDict(args)) throw new RenderError('format requires a mapping');
        v = args[key];
      } else {
        if (i >= list.length) throw new RenderError('not enough arguments for format string');
        v = list[i++];
      }
      const f = flags.includes('-') ? `${flags}<` : flags;
      return convert(v, {
        flags: f + (type === 's' || type === 'r' ? '>' : ''),
        width: Number(width ?? 0),
        precision: prec === undefined ? undefined : Number(prec),
        type: type === 's' ? '' : type,
      });
    },
  );
  if (!isDict(args) && i < list.length) throw new RenderError('not all arguments converted during string formatting');
  return out;
}

/** `'{} {:.1f} {name}'.format(…)`. */
export function strFormat(fmt: string, args: unknown[], kwargs: Record<string, unknown>): string {
  let auto = 0;
  return fmt.replace(
    /\{\{|\}\}|\{([^{}:!]*)(?:!([rs]))?(?::([^{}]*))?\}/g,
    (m, field: string | undefined, conv: string | undefined, spec: string | undefined) => {
      if (m === '{{') return '{';
      if (m === '}}') return '}';
      const name = field ?? '';
      let v: unknown;
      if (name === '') v = args[auto++];
      else if (/^\d+$/.test(name)) v = args[Number(name)];
      else v = Object.hasOwn(kwargs, name) ? kwargs[name] : undefined;
      if (v === undefined && !(name in kwargs)) throw new RenderError(`format: no value for field '{${name}}'`);
      if (conv === 'r') v = repr(v);
      const sm = /^(?:(.)?([<>^=]))?([+\- ])?(0)?(\d+)?(,)?(?:\.(\d+))?([a-zA-Z%])?$/.exec(spec ?? '');
      if (!sm) throw new RenderError(`invalid format specifier '${spec}'`);
      const [, fill, align, sign, zero, width, comma, prec, type] = sm;
      let flags = `${align ?? ''}${sign ?? ''}${zero ?? ''}${comma ?? ''}`;
      if (fill && fill !== ' ' && align === '<') flags += '*';
      if (!align && typeof v === 'string') flags += '<';
      if (!align && isNum(v) && !zero) flags += '>';
      const t = type ?? (isNum(v) && isFloat(v) && prec !== undefined ? 'g' : '');
      return convert(v, {
        flags,
        width: Number(width ?? 0),
        precision: prec === undefined ? undefined : Number(prec),
        type: t,
      });
    },
  );
}
