import { Callable, RenderError, float, isNum, num, type HasAttrs } from './values.ts';
import { PyDate, PyDateTime, fromWall, pad } from './datetime.ts';

/** Python's timedelta for templates (in microseconds), and arithmetic on datetimes and timedeltas. */

export class PyTimedelta implements HasAttrs {
  readonly pyType = 'timedelta';
  /** microseconds */
  readonly us: number;
  constructor(us: number) {
    this.us = Math.round(us);
  }
  static of(kw: Record<string, unknown>): PyTimedelta {
    const units: Record<string, number> = {
      weeks: 604_800e6,
      days: 86_400e6,
      hours: 3_600e6,
      minutes: 60e6,
      seconds: 1e6,
      milliseconds: 1e3,
      microseconds: 1,
    };
    let us = 0;
    for (const [k, v] of Object.entries(kw)) {
      const unit = units[k];
      if (unit === undefined) throw new RenderError(`timedelta() got an unexpected keyword argument '${k}'`);
      if (!isNum(v)) throw new RenderError(`unsupported type for timedelta ${k} component`);
      us += num(v) * unit;
    }
    return new PyTimedelta(us);
  }
  private parts(): { days: number; seconds: number; micro: number } {
    const days = Math.floor(this.us / 86_400e6);
    const rest = this.us - days * 86_400e6;
    return { days, seconds: Math.floor(rest / 1e6), micro: rest % 1e6 };
  }
  getAttr(name: string): unknown {
    const p = this.parts();
    switch (name) {
      case 'days':
        return p.days;
      case 'seconds':
        return p.seconds;
      case 'microseconds':
        return p.micro;
      case 'total_seconds':
        return new Callable('total_seconds', () => float(this.us / 1e6));
      default:
        return undefined;
    }
  }
  pyStr(): string {
    const { days, seconds, micro } = this.parts();
    const hms = `${Math.floor(seconds / 3600)}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}${micro ? `.${pad(micro, 6)}` : ''}`;
    return days ? `${days} day${Math.abs(days) === 1 ? '' : 's'}, ${hms}` : hms;
  }
  pyRepr(): string {
    const { days, seconds, micro } = this.parts();
    const parts = [days && `days=${days}`, seconds && `seconds=${seconds}`, micro && `microseconds=${micro}`].filter(
      Boolean,
    );
    return `datetime.timedelta(${parts.join(', ')})`;
  }
  pyBool(): boolean {
    return this.us !== 0;
  }
  pyEquals(o: unknown): boolean {
    return o instanceof PyTimedelta && o.us === this.us;
  }
  pyCompare(o: unknown): number | undefined {
    return o instanceof PyTimedelta ? this.us - o.us : undefined;
  }
  toJSON(): number {
    return this.us / 1e6;
  }
}

/** datetime ± timedelta, datetime - datetime; undefined when neither side is a date or duration. */
export function dateArith(op: '+' | '-', a: unknown, b: unknown): unknown {
  if (a instanceof PyDateTime && b instanceof PyTimedelta)
    return fromWall(wallOf(a) + ((op === '+' ? 1 : -1) * b.us) / 1000, a.zone);
  if (op === '+' && a instanceof PyTimedelta && b instanceof PyDateTime) return dateArith('+', b, a);
  if (a instanceof PyDateTime && b instanceof PyDateTime && op === '-') {
    if ((a.zone === null) !== (b.zone === null))
      throw new RenderError("can't subtract offset-naive and offset-aware datetimes");
    return new PyTimedelta((a.ms - b.ms) * 1000);
  }
  if (a instanceof PyTimedelta && b instanceof PyTimedelta)
    return new PyTimedelta(op === '+' ? a.us + b.us : a.us - b.us);
  return undefined;
}

/** timedelta * number, timedelta / number, timedelta / timedelta. */
export function durationScale(op: '*' | '/', a: unknown, b: unknown): unknown {
  if (a instanceof PyTimedelta && isNum(b)) return new PyTimedelta(op === '*' ? a.us * num(b) : a.us / num(b));
  if (op === '*' && isNum(a) && b instanceof PyTimedelta) return new PyTimedelta(b.us * num(a));
  if (op === '/' && a instanceof PyTimedelta && b instanceof PyTimedelta) return float(a.us / b.us);
  return undefined;
}

/** Wall-clock time (as a UTC epoch) of a datetime: arithmetic in Python is on wall time. */
function wallOf(dt: PyDateTime): number {
  const f = dt.fields();
  return Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second, f.ms);
}

export const isDateLike = (v: unknown): boolean =>
  v instanceof PyDateTime || v instanceof PyTimedelta || v instanceof PyDate;
