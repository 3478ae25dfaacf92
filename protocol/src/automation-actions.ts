import { z } from 'zod';
import { JsonObject } from './common.ts';
import { Duration, EntityIds, listOf } from './automation-values.ts';
import { Trigger } from './automation-triggers.ts';
import { condList, Condition } from './automation-conditions.ts';

/**
 * Actions are validated by the kind their key names, so a 400 points at the bad field
 * (`action[1].delay: …`) rather than "invalid union".
 */

export const CallUrl = z.object({
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
  url: z.string().min(1).max(4096),
  headers: z
    .record(z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'invalid header name'), z.string().max(8192))
    .optional(),
  body: z.union([z.string().max(1_048_576), JsonObject]).optional(),
  timeout: z.number().positive().max(60).optional().meta({ description: 'seconds (default 10, max 60)' }),
});

export type Action = Record<string, unknown>;
/** Events whose shape the edge guarantees: an `event` action may not fire them. */
export const EDGE_FIRED_EVENTS: readonly string[] = ['state_changed', 'call_service'];
const actionBase = {
  alias: z.string().max(200).optional(),
  enabled: z.boolean().optional(),
  continue_on_error: z.boolean().optional(),
};
const Sequence = () => listOf(Action);
const ChooseOption = () => z.object({ conditions: condList(), sequence: Sequence() });
/** Each action kind, picked by the key it carries. */
const actionKinds: [string, () => z.ZodType][] = [
  [
    'service',
    () =>
      z.object({
        service: z.string().regex(/^[a-z0-9_]+\.[a-z0-9_]+$/, 'service must be <domain>.<service>'),
        target: z.object({ entity_id: EntityIds.optional(), device_id: EntityIds.optional() }).optional(),
        data: JsonObject.optional(),
        response_variable: z.string().optional(),
        ...actionBase,
      }),
  ],
  [
    'call_url',
    () =>
      z.object({
        call_url: CallUrl,
        response_variable: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
          .optional(),
        ...actionBase,
      }),
  ],
  ['delay', () => z.object({ delay: z.union([Duration, z.string().min(1).max(10_000)]), ...actionBase })],
  [
    'wait_for_trigger',
    () =>
      z.object({
        wait_for_trigger: listOf(Trigger, 100).refine((v) => v.length > 0, 'at least one trigger'),
        timeout: Duration.optional(),
        continue_on_timeout: z.boolean().optional(),
        ...actionBase,
      }),
  ],
  [
    'choose',
    () =>
      z.object({
        choose: listOf(ChooseOption(), 100).refine((v) => v.length > 0, 'at least one option'),
        default: Sequence().optional(),
        ...actionBase,
      }),
  ],
  [
    'repeat',
    () =>
      z.object({
        repeat: z.union([
          z
            .object({ count: z.union([z.number().int().min(0).max(10_000), z.string().min(1)]), sequence: Sequence() })
            .strict(),
          z.object({ while: condList(), sequence: Sequence() }).strict(),
          z.object({ until: condList(), sequence: Sequence() }).strict(),
        ]),
        ...actionBase,
      }),
  ],
  ['variables', () => z.object({ variables: JsonObject, ...actionBase })],
  ['condition', () => Condition],
  [
    'event',
    () =>
      z.object({
        event: z
          .string()
          .min(1)
          .max(200)
          .refine(
            (name) => !EDGE_FIRED_EVENTS.includes(name),
            'state_changed and call_service are fired by the edge itself',
          ),
        event_data: JsonObject.optional(),
        /** HA's older spelling; rendered and merged over event_data */
        event_data_template: JsonObject.optional(),
        ...actionBase,
      }),
  ],
  ['stop', () => z.object({ stop: z.string(), error: z.boolean().optional(), ...actionBase })],
];
export const ACTION_KINDS = actionKinds.map(([k]) => k);
const kindSchemas = new Map<string, z.ZodType>();
export const Action: z.ZodType<Action> = z.lazy(() =>
  z
    .record(z.string(), z.unknown())
    .transform((value, ctx) => {
      const kind = ACTION_KINDS.find((k) => k in value);
      if (!kind) {
        ctx.addIssue({ code: 'custom', message: `action needs one of: ${ACTION_KINDS.join(', ')}` });
        return z.NEVER;
      }
      let schema = kindSchemas.get(kind);
      if (!schema) {
        schema = actionKinds.find(([k]) => k === kind)![1]();
        kindSchemas.set(kind, schema);
      }
      const result = schema.safeParse(value);
      if (!result.success) {
        for (const issue of result.error.issues)
          ctx.addIssue({
            code: 'custom',
            message: issue.message,
            path: issue.path as PropertyKey[] as (string | number)[],
          });
        return z.NEVER;
      }
      return result.data as Action;
    })
    .meta({
      id: 'Action',
      description: `one of the action kinds, named by its key: ${actionKinds.map(([k]) => k).join(', ')}`,
    }),
) as unknown as z.ZodType<Action>;
