import { z } from 'zod';

/** Home Assistant wire shapes: the state object, its context and subscribe_entities' compressed form. */

export const HaContext = z
  .object({ id: z.string(), parent_id: z.string().nullable(), user_id: z.string().nullable() })
  .meta({ id: 'HaContext' });
export type HaContext = z.infer<typeof HaContext>;

export const HaState = z
  .object({
    entity_id: z.string(),
    /** HA's states are strings: an entity that never reported is "unknown" */
    state: z.string(),
    attributes: z.record(z.string(), z.unknown()),
    last_changed: z.string(),
    last_updated: z.string(),
    last_reported: z.string(),
    context: HaContext,
  })
  .meta({ id: 'HaState' });
export type HaState = z.infer<typeof HaState>;

/** subscribe_entities' compressed state: s state, a attributes, c context id, lc/lu seconds since the epoch (lu only when ≠ lc). */
export const HaCompressedState = z.object({
  s: z.string(),
  a: z.record(z.string(), z.unknown()),
  c: z.union([
    z.string(),
    z.object({
      id: z.string().optional(),
      parent_id: z.string().nullable().optional(),
      user_id: z.string().nullable().optional(),
    }),
  ]),
  lc: z.number(),
  lu: z.number().optional(),
});
export type HaCompressedState = z.infer<typeof HaCompressedState>;

/** One entity's change: "+" what is new (only changed attributes), "-" attribute keys removed. */
export const HaCompressedDiff = z.object({
  '+': HaCompressedState.partial().optional(),
  '-': z.object({ a: z.array(z.string()) }).optional(),
});
export type HaCompressedDiff = z.infer<typeof HaCompressedDiff>;

/** subscribe_entities' event: a added (full), c changed (diff), r removed. */
export const HaEntitiesEvent = z.object({
  a: z.record(z.string(), HaCompressedState).optional(),
  c: z.record(z.string(), HaCompressedDiff).optional(),
  r: z.array(z.string()).optional(),
});
export type HaEntitiesEvent = z.infer<typeof HaEntitiesEvent>;

export const HaEvent = z
  .object({
    event_type: z.string(),
    data: z.record(z.string(), z.unknown()),
    origin: z.enum(['LOCAL', 'REMOTE']),
    time_fired: z.string(),
    context: HaContext,
  })
  .meta({ id: 'HaEvent' });
export type HaEvent = z.infer<typeof HaEvent>;
