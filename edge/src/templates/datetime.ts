import { Callable, PyFloat, RenderError, float, isNum, num, type HasAttrs } from './values.ts';

/**
 * Python's datetime and date for templates, on epoch milliseconds. A datetime is
 * aware in the edge's local zone ('local'), at a fixed UTC offset (minutes), or naive
 * (null: wall time kept as if UTC, as Python does without a zone). timedelta and the
 * date arithmetic are in timedelta.ts.
 */

export const pad = (n: number, w = 2) => String(Math.trunc(Math.abs(n))).padStart(w, '0');
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

export type Zone = 'local' | number | null;

function offsetMinutes(zone: Zone, ms: number): number | null {
  if (zone === null) return null;
  if (zone === 'local') return -new Date(ms).getTimezoneOffset();
  return zone;
}

export class PyDateTime implements HasAttrs {
  readonly pyType = 'datetime';
  readonly ms: number;
  readonly zone: Zone;
  constructor(ms: number, zone: Zone) {
    if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) throw new RenderError('date value out of range');
    this.ms = ms;
    this.zone = zone;
  }
  /** Wall-clock fields in the datetime's zone. */
  fields(): {
    year: number;
    month: number;
    day: number;
    hour: number;
    minute: number;
    second: number;
    ms: number;
    dow: number;
    offset: number | null;
  } {
    const offset = offsetMinutes(this.zone, this.ms);
    const d = new Date(this.ms + (offset ?? 0) * 60_000);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
      ms: d.getUTCMilliseconds(),
      dow: (d.getUTCDay() + 6) % 7,
      offset,
    };
  }
  /** Epoch seconds (a naive datetime is taken as local time, as Python's timestamp() does). */
  timestamp(): number {
    if (this.zone !== null) return this.ms / 1000;
    const f = this.fields();
    return new Date(f.year, f.month - 1, f.day, f.hour, f.minute, f.second, f.ms).getTime() / 1000;
  }
  isoformat(sep = 'T'): string {
    const f = this.fields();
    const zone = f.offset === null ? '' : `${f.offset < 0 ? '-' : '+'}${pad(f.offset / 60)}:${pad(f.offset % 60)}`;
    return `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}${sep}${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}${f.ms ? `.${pad(f.ms * 1000, 6)}` : ''}${zone}`;
  }
  strftime(fmt: string): string {
    const f = this.fields();
    const doy = Math.floor((Date.UTC(f.year, f.month - 1, f.day) - Date.UTC(f.year, 0, 1)) / 86_400_000) + 1;
    const off = f.offset === null ? '' : `${f.offset < 0 ? '-' : '+'}${pad(f.offset / 60)}${pad(f.offset % 60)}`;
    const map: Record<string, () => string> = {
      Y: () => String(f.year),
      y: () => pad(f.year % 100),
      m: () => pad(f.month),
      d: () => pad(f.day),
      H: () => pad(f.hour),
      I: () => pad(f.hour % 12 || 12),
      M: () => pad(f.minute),
      S: () => pad(f.second),
      f: () => pad(f.ms * 1000, 6),
      p: () => (f.hour < 12 ? 'AM' : 'PM'),
      A: () => DAYS[f.dow]!,
      a: () => DAYS[f.dow]!.slice(0, 3),
      B: () => MONTHS[f.month - 1]!,
      b: () => MONTHS[f.month - 1]!.slice(0, 3),
      h: () => MONTHS[f.month - 1]!.slice(0, 3),
      w: () => String((f.dow + 1) % 7),
      u: () => String(f.dow + 1),
      j: () => pad(doy, 3),
      z: () => off,
      Z: () =>
        f.offset === null ? '' : this.zone === 'local' ? localZoneName(this.ms) : f.offset === 0 ? 'UTC' : `UTC${off}`,
      e: () => String(f.day).padStart(2, ' '),
      '-d': () => String(f.day),
      '-m': () => String(f.month),
      '-H': () => String(f.hour),
      '-I': () => String(f.hour % 12 || 12),
      '-M': () => String(f.minute),
      '-S': () => String(f.second),
      '-j': () => String(doy),
      D: () => `${pad(f.month)}/${pad(f.day)}/${pad(f.year % 100)}`,
      F: () => `${f.year}-${pad(f.month)}-${pad(f.day)}`,
      T: () => `${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}`,
      R: () => `${pad(f.hour)}:${pad(f.minute)}`,
      s: () => String(Math.floor(this.timestamp())),
      '%': () => '%',
      c: () =>
        `${DAYS[f.dow]!.slice(0, 3)} ${MONTHS[f.month - 1]!.slice(0, 3)} ${String(f.day).padStart(2, ' ')} ${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)} ${f.year}`,
      x: () => `${pad(f.month)}/${pad(f.day)}/${pad(f.year % 100)}`,
      X: () => `${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}`,
    };
    return fmt.replace(/%(-?[a-zA-Z%])/g, (m, k: string) => map[k]?.() ?? m);
  }
  replace(kw: Record<string, unknown>): PyDateTime {
    const f = this.fields();
    const get = (k: string, d: number) => {
      const v = kw[k];
      if (v === undefined) return d;
      if (!isNum(v)) throw new RenderError(`replace(): ${k} must be an integer`);
      return num(v);
    };
    const wall = Date.UTC(
      get('year', f.year),
      get('month', f.month) - 1,
      get('day', f.day),
      get('hour', f.hour),
      get('minute', f.minute),
      get('second', f.second),
      Math.floor(get('microsecond', f.ms * 1000) / 1000),
    );
    return fromWall(wall, this.zone);
  }
  getAttr(name: string): unknown {
    const f = this.fields();
    switch (name) {
      case 'year':
        return f.year;
      case 'month':
        return f.month;
      case 'day':
        return f.day;
      case 'hour':
        return f.hour;
      case 'minute':
        return f.minute;
      case 'second':
        return f.second;
      case 'microsecond':
        return f.ms * 1000;
      case 'tzinfo':
        return f.offset === null ? null : this.zone === 'local' ? localZoneName(this.ms) : 'UTC';
      case 'weekday':
        return new Callable('weekday', () => f.dow);
      case 'isoweekday':
        return new Callable('isoweekday', () => f.dow + 1);
      case 'timestamp':
        return new Callable('timestamp', () => float(this.timestamp()));
      case 'isoformat':
        return new Callable('isoformat', (a) => this.isoformat(typeof a[0] === 'string' ? a[0] : 'T'));
      case 'strftime':
        return new Callable('strftime', (a) => this.strftime(typeof a[0] === 'string' ? a[0] : ''));
      case 'replace':
        return new Callable('replace', (_a, kw) => this.replace(kw));
      case 'date':
        return new Callable('date', () => new PyDate(f.year, f.month, f.day));
      case 'astimezone':
        return new Callable(
          'astimezone',
          () => new PyDateTime(this.zone === null ? this.timestamp() * 1000 : this.ms, 'local'),
        );
      case 'isocalendar':
        return new Callable('isocalendar', () => isoCalendar(f.year, f.month, f.day));
      default:
        return undefined;
    }
  }
  pyStr(): string {
    return this.isoformat(' ');
  }
  pyRepr(): string {
    return `datetime.datetime(${this.isoformat(' ')})`;
  }
  pyEquals(o: unknown): boolean {
    return o instanceof PyDateTime && o.timestamp() === this.timestamp();
  }
  pyCompare(o: unknown): number | undefined {
    return o instanceof PyDateTime ? this.timestamp() - o.timestamp() : undefined;
  }
  toJSON(): string {
    return this.isoformat();
  }
}

/** A date (as `.date()` gives): prints as 2026-01-05. */
export class PyDate implements HasAttrs {
  readonly pyType = 'date';
  readonly year: number;
  readonly month: number;
  readonly day: number;
  constructor(year: number, month: number, day: number) {
    this.year = year;
    this.month = month;
    this.day = day;
  }
  getAttr(name: string): unknown {
    if (name === 'year' || name === 'month' || name === 'day') return this[name];
    if (name === 'weekday')
      return new Callable(
        'weekday',
        () => (new Date(Date.UTC(this.year, this.month - 1, this.day)).getUTCDay() + 6) % 7,
      );
    if (name === 'isoformat') return new Callable('isoformat', () => this.pyStr());
    if (name === 'strftime')
      return new Callable('strftime', (a) =>
        new PyDateTime(Date.UTC(this.year, this.month - 1, this.day), null).strftime(String(a[0] ?? '')),
      );
    return undefined;
  }
  pyStr(): string {
    return `${pad(this.year, 4)}-${pad(this.month)}-${pad(this.day)}`;
  }
  pyEquals(o: unknown): boolean {
    return o instanceof PyDate && o.pyStr() === this.pyStr();
  }
  pyCompare(o: unknown): number | undefined {
    return o instanceof PyDate ? (this.pyStr() < o.pyStr() ? -1 : this.pyStr() > o.pyStr() ? 1 : 0) : undefined;
  }
  toJSON(): string {
    return this.pyStr();
  }
}

function isoCalendar(y: number, m: number, d: number): number[] {
  const date = new Date(Date.UTC(y, m - 1, d));
  const dow = (date.getUTCDay() + 6) % 7;
  date.setUTCDate(date.getUTCDate() - dow + 3);
  const week1 = new Date(Date.UTC(date.getUTCFullYear(), 0, 4));
  const week =
    1 + Math.round((date.getTime() - week1.getTime()) / 86_400_000 / 7 - (((week1.getUTCDay() + 6) % 7) - 3) / 7);
  return [date.getUTCFullYear(), week, dow + 1];
}

function localZoneName(ms: number): string {
  return (
    Intl.DateTimeFormat('en-US', { timeZoneName: 'short' })
      .formatToParts(new Date(ms))
      .find((p) => p.type === 'timeZoneName')?.value ?? ''
  );
}

/** A datetime from wall-clock fields (given as a UTC epoch) in a zone. */
export function fromWall(wallMs: number, zone: Zone): PyDateTime {
  if (zone === null) return new PyDateTime(wallMs, null);
  if (zone !== 'local') return new PyDateTime(wallMs - zone * 60_000, zone);
  const d = new Date(wallMs);
  return new PyDateTime(
    new Date(
      d.getUTCFullYear(),
      d.getUTCMonth(),
      d.getUTCDate(),
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
      d.getUTCMilliseconds(),
    ).getTime(),
    'local',
  );
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** HA's dt_util.parse_datetime: ISO 8601 (space or T); naive without an offset; null if not a date. */
export function parseDateTime(text: string): PyDateTime | null {
  const m = ISO.exec(text.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', tz] = m;
  const wall = Date.UTC(
    Number(y),
    Number(mo) - 1,
    Number(d),
    Number(h),
    Number(mi),
    Number(s),
    Math.floor(Number(frac.padEnd(6, '0')) / 1000),
  );
  const check = new Date(wall);
  if (
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  )
    return null;
  if (!tz) return new PyDateTime(wall, null);
  if (tz.toUpperCase() === 'Z') return new PyDateTime(wall, 0);
  const sign = tz[0] === '-' ? -1 : 1;
  const digits = tz.slice(1).replace(':', '');
  const offset = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0));
  return new PyDateTime(wall - offset * 60_000, offset);
}

export { PyFloat };
