import type { Filter } from './interpreter.ts';
import { PyDate, PyDateTime, parseDateTime } from './datetime.ts';
import { PyTimedelta } from './timedelta.ts';
import { NO_DEFAULT, noDefault, pyFloat } from './ha-filters.ts';
import { Callable, RenderError, float, isNum, num, str } from './values.ts';

/** Home Assistant's time functions and filters, on the engine's clock (a fake one in tests). */

export interface TemplateClock {
  now(): number;
}

/** HA's dt_util.as_timestamp: a datetime, or a string that parses as one (no offset = local). */
export function asTimestampValue(v: unknown): number | undefined {
  if (v instanceof PyDateTime) return v.timestamp();
  if (v === undefined || v === null) return undefined;
  const d = parseDateTime(str(v));
  return d ? d.timestamp() : undefined;
}

/** HA's as_datetime: datetimes as they are, dates at midnight, numbers as UTC timestamps, ISO strings parsed. */
export function asDatetimeValue(v: unknown): PyDateTime | undefined {
  if (v instanceof PyDateTime) return v;
  if (v instanceof PyDate) return new PyDateTime(Date.UTC(v.year, v.month - 1, v.day), null);
  if (isNum(v) || (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v))) {
    const n = typeof v === 'string' ? Number(v) : num(v);
    return Number.isFinite(n) && Math.abs(n) < 1e13 ? new PyDateTime(n * 1000, 0) : undefined;
  }
  return typeof v === 'string' ? (parseDateTime(v) ?? undefined) : undefined;
}

/** dt_util.get_age: the largest whole unit since `then` ("5 minutes"); months are 30 days, years 365. */
export function relativeTime(nowMs: number, thenSeconds: number): string | null {
  let seconds = Math.floor(nowMs / 1000 - thenSeconds);
  if (seconds < 0) return null;
  const units: [string, number][] = [
    ['year', 365 * 86400],
    ['month', 30 * 86400],
    ['day', 86400],
    ['hour', 3600],
    ['minute', 60],
  ];
  for (const [unit, size] of units) {
    const n = Math.floor(seconds / size);
    if (n > 0) return n === 1 ? `1 ${unit}` : `${n} ${unit}s`;
    seconds %= size;
  }
  return seconds === 1 ? '1 second' : `${seconds} seconds`;
}

function timestampArg(name: string, v: unknown, dflt: unknown): number | undefined {
  const n = typeof v === 'boolean' ? undefined : isNum(v) ? num(v) : typeof v === 'string' ? pyFloat(v) : undefined;
  if (n === undefined || !Number.isFinite(n)) {
    if (dflt === NO_DEFAULT) noDefault(name, v);
    return undefined;
  }
  return n;
}

/** strptime for the directives HA users write (%Y %m %d %H %M %S %f %z %b %y %p %I %j). */
function strptime(text: string, fmt: string): PyDateTime | undefined {
  const months = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
  const fields: Record<string, string> = {};
  const parts: Record<string, string> = {
    Y: '(\\d{4})',
    m: '(\\d{1,2})',
    d: '(\\d{1,2})',
    H: '(\\d{1,2})',
    M: '(\\d{1,2})',
    S: '(\\d{1,2})',
    f: '(\\d{1,6})',
    z: '([+-]\\d{2}:?\\d{2}|Z)',
    b: '([A-Za-z]{3})',
    B: '([A-Za-z]+)',
    y: '(\\d{2})',
    p: '(AM|PM|am|pm)',
    I: '(\\d{1,2})',
    j: '(\\d{1,3})',
    a: '[A-Za-z]{3}',
    A: '[A-Za-z]+',
    '%': '%',
  };
  const order: string[] = [];
  const re = fmt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/%([a-zA-Z%])/g, (_m, k: string) => {
    const p = parts[k];
    if (p === undefined) throw new RenderError(`strptime: unsupported directive %${k}`);
    if (p.startsWith('(')) order.push(k);
    return p;
  });
  const m = new RegExp(`^${re}$`).exec(text.trim());
  if (!m) return undefined;
  order.forEach((k, i) => {
    fields[k] = m[i + 1]!;
  });
  const month = fields.m
    ? Number(fields.m)
    : fields.b || fields.B
      ? months.indexOf((fields.b ?? fields.B)!.slice(0, 3).toLowerCase()) + 1
      : 1;
  let hour = Number(fields.H ?? fields.I ?? 0);
  if (fields.p) hour = (hour % 12) + (fields.p.toLowerCase() === 'pm' ? 12 : 0);
  const year = fields.Y
    ? Number(fields.Y)
    : fields.y
      ? 2000 + Number(fields.y) - (Number(fields.y) >= 69 ? 100 : 0)
      : 1900;
  const wall = Date.UTC(
    year,
    month - 1,
    fields.j ? Number(fields.j) : Number(fields.d ?? 1),
    hour,
    Number(fields.M ?? 0),
    Number(fields.S ?? 0),
    Math.floor(Number((fields.f ?? '').padEnd(6, '0')) / 1000),
  );
  if (!fields.z) return new PyDateTime(wall, null);
  if (fields.z === 'Z') return new PyDateTime(wall, 0);
  const z = fields.z.replace(':', '');
  const offset = (z[0] === '-' ? -1 : 1) * (Number(z.slice(1, 3)) * 60 + Number(z.slice(3, 5)));
  return new PyDateTime(wall - offset * 60_000, offset);
}

const dfl = (a: unknown[], i: number, kw: Record<string, unknown>) =>
  a.length > i ? a[i] : Object.hasOwn(kw, 'default') ? kw.default : NO_DEFAULT;

export function timeFilters(): Record<string, Filter> {
  return {
    as_timestamp: (_c, v, a, kw) => {
      const ts = asTimestampValue(v);
      if (ts !== undefined) return float(ts);
      const d = dfl(a, 0, kw);
      return d === NO_DEFAULT ? noDefault('as_timestamp', v) : d;
    },
    as_datetime: (_c, v, a, kw) => {
      const d = asDatetimeValue(v);
      if (d) return d;
      const x = dfl(a, 0, kw);
      return x === NO_DEFAULT ? noDefault('as_datetime', v) : x;
    },
    as_local: (_c, v) => {
      if (!(v instanceof PyDateTime)) throw new RenderError('as_local: a datetime is required');
      return new PyDateTime(v.zone === null ? v.timestamp() * 1000 : v.ms, 'local');
    },
    timestamp_custom: (_c, v, a, kw) => {
      const ts = timestampArg('timestamp_custom', v, dfl(a, 2, kw));
      if (ts === undefined) return dfl(a, 2, kw);
      const local = a.length > 1 ? a[1] : (kw.local ?? true);
      return new PyDateTime(ts * 1000, local ? 'local' : 0).strftime(
        str(a[0] ?? kw.format_string ?? '%Y-%m-%d %H:%M:%S'),
      );
    },
    timestamp_local: (_c, v, a, kw) => {
      const ts = timestampArg('timestamp_local', v, dfl(a, 0, kw));
      return ts === undefined ? dfl(a, 0, kw) : new PyDateTime(ts * 1000, 'local').isoformat();
    },
    timestamp_utc: (_c, v, a, kw) => {
      const ts = timestampArg('timestamp_utc', v, dfl(a, 0, kw));
      return ts === undefined ? dfl(a, 0, kw) : new PyDateTime(ts * 1000, 0).isoformat();
    },
  };
}

/** The time globals: now(), utcnow(), today_at(), timedelta(), relative_time(), strptime(), … */
export function timeGlobals(
  clock: TemplateClock,
  filters: Record<string, Filter>,
  call: (f: Filter, v: unknown, a: unknown[], kw: Record<string, unknown>) => unknown,
): Record<string, unknown> {
  const fn = (name: string, f: (a: unknown[], kw: Record<string, unknown>) => unknown) => new Callable(name, f);
  const asFn = (name: string) => fn(name, (a, kw) => call(filters[name]!, a[0], a.slice(1), kw));
  return {
    now: fn('now', () => new PyDateTime(clock.now(), 'local')),
    utcnow: fn('utcnow', () => new PyDateTime(clock.now(), 0)),
    today_at: fn('today_at', (a) => {
      const text = a[0] === undefined ? '00:00' : str(a[0]);
      const m = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?$/.exec(text.trim());
      if (!m || Number(m[1]) > 23 || Number(m[2]) > 59 || Number(m[3] ?? 0) > 59)
        throw new RenderError(`today_at: invalid time '${text}'`);
      const d = new Date(clock.now());
      return new PyDateTime(
        new Date(
          d.getFullYear(),
          d.getMonth(),
          d.getDate(),
          Number(m[1]),
          Number(m[2]),
          Number(m[3] ?? 0),
          Math.floor(Number((m[4] ?? '').padEnd(6, '0')) / 1000),
        ).getTime(),
        'local',
      );
    }),
    timedelta: fn('timedelta', (a, kw) => {
      const names = ['days', 'seconds', 'microseconds', 'milliseconds', 'minutes', 'hours', 'weeks'];
      const all: Record<string, unknown> = { ...kw };
      a.forEach((v, i) => {
        all[names[i]!] = v;
      });
      return PyTimedelta.of(all);
    }),
    // HA: only a datetime has an age; anything else (a string too) comes back as it is
    relative_time: fn('relative_time', (a) => {
      const v = a[0];
      if (!(v instanceof PyDateTime)) return v;
      return relativeTime(clock.now(), v.timestamp()) ?? v;
    }),
    time_since: fn('time_since', (a) => {
      const v = a[0];
      if (!(v instanceof PyDateTime)) return v;
      return relativeTime(clock.now(), v.timestamp()) ?? v;
    }),
    strptime: fn('strptime', (a, kw) => {
      const r = strptime(str(a[0]), str(a[1]));
      if (r) return r;
      const d = dfl(a, 2, kw);
      return d === NO_DEFAULT ? noDefault('strptime', a[0]) : d;
    }),
    as_timestamp: asFn('as_timestamp'),
    as_datetime: asFn('as_datetime'),
    as_local: asFn('as_local'),
  };
}
