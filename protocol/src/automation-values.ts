import { z } from 'zod';

/** Value shapes shared by automation triggers, conditions and actions (Home Assistant's spellings). */

export const EntityIds = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);
/** HA durations: "00:05:00", seconds as a number, or {hours, minutes, seconds, milliseconds}. */
export const Duration = z
  .union([
    z.number().nonnegative(),
    z.string().regex(/^\d{1,3}:\d{2}(:\d{2}(\.\d+)?)?$/, 'duration must be HH:MM[:SS]'),
    z
      .object({
        days: z.number().nonnegative(),
        hours: z.number().nonnegative(),
        minutes: z.number().nonnegative(),
        seconds: z.number().nonnegative(),
        milliseconds: z.number().nonnegative(),
      })
      .partial()
      .strict(),
  ])
  .meta({ id: 'Duration' });
export type Duration = z.infer<typeof Duration>;
export const StateValue = z.union([z.string(), z.array(z.string())]);
export const Num = z.union([z.number(), z.string()]);
export const TimeOfDay = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/, 'time must be HH:MM[:SS]');
export const Weekday = z.enum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
/** `x` or `[x]` → `[x]` (a preprocess rather than a union, so errors point into the element). */
export const listOf = <T extends z.ZodType>(s: T, max = 1000) =>
  z.preprocess((v) => (v === undefined || Array.isArray(v) ? v : [v]), z.array(s).max(max));
