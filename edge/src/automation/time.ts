/** Durations, local times of day and time_pattern matching. All times are epoch ms. */

export type DurationInput =
  number | string | { days?: number; hours?: number; minutes?: number; seconds?: number; milliseconds?: number };

/** HA durations → ms: seconds as a number, "HH:MM[:SS[.fff]]", or {hours, minutes, …}. Throws on anything else. */
export function durationMs(value: DurationInput | unknown): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw new Error(`invalid duration ${value}`);
    return Math.round(value * 1000);
  }
  if (typeof value === 'string') {
    const s = value.trim();
    if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
    const m = /^(\d{1,3}):(\d{2})(?::(\d{2}(?:\.\d+)?))?$/.exec(s);
    if (!m) throw new Error(`invalid duration "${value.slice(0, 50)}"`);
    return Math.round((Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0)) * 1000);
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const d = value as Record<string, unknown>;
    const n = (k: string) => {
      const v = d[k] ?? 0;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new Error(`invalid duration field ${k}`);
      return v;
    };
    return Math.round(
      n('days') * 86_400_000 + n('hours') * 3_600_000 + n('minutes') * 60_000 + n('seconds') * 1000 + n('milliseconds'),
    );
  }
  throw new Error('invalid duration');
}

/** "HH:MM[:SS]" → seconds since local midnight. */
export function parseTimeOfDay(s: string): number {
  const m = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(s);
  if (!m) throw new Error(`invalid time "${s}"`);
  return Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0);
}

/** Seconds since local midnight of an instant. */
export function secondsOfDay(ms: number): number {
  const d = new Date(ms);
  return d.getHours() * 3600 + d.getMinutes() * 60 + d.getSeconds();
}

/** The next instant strictly after `now` whose local time of day is `secs`. */
export function nextTimeOfDay(now: number, secs: number): number {
  const d = new Date(now);
  const candidate = new Date(
    d.getFullYear(),
    d.getMonth(),
    d.getDate(),
    Math.floor(secs / 3600),
    Math.floor(secs / 60) % 60,
    secs % 60,
    0,
  ).getTime();
  if (candidate > now) return candidate;
  const t = new Date(
    d.getFullYear(),
    d.getMonth(),
    d.getDate() + 1,
    Math.floor(secs / 3600),
    Math.floor(secs / 60) % 60,
    secs % 60,
    0,
  );
  return t.getTime();
}

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;

/** HA time condition: after/before (a range across midnight when after > before) and weekday. */
export function timeConditionMatches(
  now: number,
  c: { after?: string; before?: string; weekday?: string | string[] },
): boolean {
  const d = new Date(now);
  if (c.weekday !== undefined) {
    const days = Array.isArray(c.weekday) ? c.weekday : [c.weekday];
    if (!days.includes(WEEKDAYS[d.getDay()])) return false;
  }
  const t = secondsOfDay(now);
  const after = c.after !== undefined ? parseTimeOfDay(c.after) : undefined;
  const before = c.before !== undefined ? parseTimeOfDay(c.before) : undefined;
  if (after !== undefined && before !== undefined && after > before) return t >= after || t < before;
  if (after !== undefined && t < after) return false;
  if (before !== undefined && t >= before) return false;
  return true;
}

/** One time_pattern field: undefined = any; "/N" = divisible by N; number = exactly. */
export type PatternField = { kind: 'any' } | { kind: 'every'; n: number } | { kind: 'at'; v: number };

export function parsePatternField(v: number | string | undefined, max: number, name: string): PatternField {
  if (v === undefined || v === '*') return { kind: 'any' };
  if (typeof v === 'string' && v.startsWith('/')) {
    const n = Number(v.slice(1));
    if (!Number.isInteger(n) || n <= 0 || n > max) throw new Error(`${name}: invalid interval "${v}"`);
    return { kind: 'every', n };
  }
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new Error(`${name}: must be 0..${max}`);
  return { kind: 'at', v: n };
}

const fieldMatches = (f: PatternField, v: number) =>
  f.kind === 'any' || (f.kind === 'every' ? v % f.n === 0 : v === f.v);

export interface TimePattern {
  hours: PatternField;
  minutes: PatternField;
  seconds: PatternField;
}

/** HA defaults: units smaller than the smallest given unit are 0, larger ones are "any". */
export function compilePattern(p: {
  hours?: number | string;
  minutes?: number | string;
  seconds?: number | string;
}): TimePattern {
  const hours = p.hours;
  let { minutes, seconds } = p;
  if (hours !== undefined && minutes === undefined) minutes = 0;
  if (minutes !== undefined && seconds === undefined) seconds = 0;
  return {
    hours: parsePatternField(hours, 23, 'hours'),
    minutes: parsePatternField(minutes, 59, 'minutes'),
    seconds: parsePatternField(seconds, 59, 'seconds'),
  };
}

/** Next instant (whole second, local time) strictly after `now` matching the pattern. */
export function nextPatternMatch(now: number, p: TimePattern): number {
  let t = Math.floor(now / 1000) * 1000 + 1000;
  const limit = t + 3 * 86_400_000;
  while (t < limit) {
    const d = new Date(t);
    if (!fieldMatches(p.hours, d.getHours())) {
      t = new Date(d.getFullYear(), d.getMonth(), d.getDate(), d.getHours() + 1, 0, 0, 0).getTime();
      continue;
    }
    if (!fieldMatches(p.minutes, d.getMinutes())) {
      t = new Date(d.getFullYear(), d.getMonth(), d.getDate(), d.getHours(), d.getMinutes() + 1, 0, 0).getTime();
      continue;
    }
    if (!fieldMatches(p.seconds, d.getSeconds())) {
      t += 1000;
      continue;
    }
    return t;
  }
  throw new Error('time_pattern never matches');
}

/** setTimeout caps at 2^31-1 ms; longer waits re-arm in steps. */
export const MAX_TIMER_MS = 2_000_000_000;
