import { z } from 'zod';
import { Duration, EntityIds, listOf, Num, StateValue, TimeOfDay, Weekday } from './automation-values.ts';

export type Condition =
  | { condition: 'state'; entity_id: string | string[]; state: string | string[]; attribute?: string; for?: Duration }
  | {
      condition: 'numeric_state';
      entity_id: string | string[];
      above?: number | string;
      below?: number | string;
      attribute?: string;
      value_template?: string;
    }
  | { condition: 'time'; after?: string; before?: string; weekday?: string | string[] }
  | { condition: 'template'; value_template: string }
  | { condition: 'and' | 'or'; conditions: Condition[] }
  | { condition: 'not'; conditions: Condition[] };
export const condList = () => listOf(Condition, 100);
export const Condition: z.ZodType<Condition> = z.lazy(() =>
  z
    .discriminatedUnion('condition', [
      z.object({
        condition: z.literal('state'),
        entity_id: EntityIds,
        state: StateValue,
        attribute: z.string().optional(),
        for: Duration.optional(),
      }),
      z.object({
        condition: z.literal('numeric_state'),
        entity_id: EntityIds,
        above: Num.optional(),
        below: Num.optional(),
        attribute: z.string().optional(),
        value_template: z.string().optional(),
      }),
      z.object({
        condition: z.literal('time'),
        after: TimeOfDay.optional(),
        before: TimeOfDay.optional(),
        weekday: z.union([Weekday, z.array(Weekday)]).optional(),
      }),
      z.object({ condition: z.literal('template'), value_template: z.string().min(1).max(10_000) }),
      z.object({ condition: z.literal('and'), conditions: condList() }),
      z.object({ condition: z.literal('or'), conditions: condList() }),
      z.object({ condition: z.literal('not'), conditions: condList() }),
    ])
    .meta({ id: 'Condition' }),
) as z.ZodType<Condition>;
