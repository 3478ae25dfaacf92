import { z } from 'zod';

/**
 * The optional commands of HA's websocket_api: render_template (websocket_api/commands.py),
 * validate_config, history/history_during_period (history/websocket_api.py) and logbook
 * (logbook/websocket_api.py); and what they answer.
 */

const Id = z.number().int();

export const HaRenderTemplate = z.object({
  id: Id,
  type: z.literal('render_template'),
  template: z.string(),
  entity_ids: z.union([z.string(), z.array(z.string())]).optional(),
  variables: z.record(z.string(), z.unknown()).optional(),
  /** seconds; a first render slower than this fails with template_error */
  timeout: z.coerce.number().positive().optional(),
  strict: z.boolean().default(false),
  report_errors: z.boolean().default(false),
});
export type HaRenderTemplate = z.infer<typeof HaRenderTemplate>;

/** What a render_template subscription depends on (HA's RenderInfo listeners). */
export const HaTemplateListeners = z.object({
  all: z.boolean(),
  domains: z.array(z.string()),
  entities: z.array(z.string()),
  time: z.boolean(),
});
export type HaTemplateListeners = z.infer<typeof HaTemplateListeners>;
/** render_template's events: a result (native value as HA parses it) or, with report_errors, an error */
export const HaTemplateUpdate = z.union([
  z.object({ result: z.unknown(), listeners: HaTemplateListeners }),
  z.object({ error: z.string(), level: z.enum(['ERROR', 'WARNING']) }),
]);
export type HaTemplateUpdate = z.infer<typeof HaTemplateUpdate>;

const ConfigPart = z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]);
export const HaValidateConfig = z.object({
  id: Id,
  type: z.literal('validate_config'),
  trigger: ConfigPart.optional(),
  condition: ConfigPart.optional(),
  action: ConfigPart.optional(),
  triggers: ConfigPart.optional(),
  conditions: ConfigPart.optional(),
  actions: ConfigPart.optional(),
});
export type HaValidateConfig = z.infer<typeof HaValidateConfig>;
export const HaValidateResult = z.record(z.string(), z.object({ valid: z.boolean(), error: z.string().nullable() }));

export const HaHistoryDuringPeriod = z.object({
  id: Id,
  type: z.literal('history/history_during_period'),
  start_time: z.string(),
  end_time: z.string().optional(),
  entity_ids: z.array(z.string()).min(1),
  include_start_time_state: z.boolean().default(true),
  significant_changes_only: z.boolean().default(true),
  minimal_response: z.boolean().default(false),
  no_attributes: z.boolean().default(false),
});
export type HaHistoryDuringPeriod = z.infer<typeof HaHistoryDuringPeriod>;

/** history/history_during_period item: s state, a attributes, lu last_updated (epoch s), lc last_changed when it differs */
export const HaHistoryState = z.object({
  s: z.string().nullable(),
  a: z.record(z.string(), z.unknown()).optional(),
  lu: z.number(),
  lc: z.number().optional(),
});
export const HaHistoryResult = z.record(z.string(), z.array(HaHistoryState)).meta({ id: 'HaHistoryResult' });

export const HaLogbookGetEvents = z.object({
  id: Id,
  type: z.literal('logbook/get_events'),
  start_time: z.string(),
  end_time: z.string().optional(),
  entity_ids: z.array(z.string()).optional(),
  device_ids: z.array(z.string()).optional(),
  context_id: z.string().optional(),
});
export const HaLogbookEventStream = z.object({
  id: Id,
  type: z.literal('logbook/event_stream'),
  start_time: z.string(),
  end_time: z.string().optional(),
  entity_ids: z.array(z.string()).optional(),
  device_ids: z.array(z.string()).optional(),
});

/** A logbook entry: `when` epoch seconds on the socket, ISO on REST (which adds `name` for entities). */
export const HaLogbookEntry = z
  .object({
    when: z.union([z.number(), z.string()]),
    name: z.string().optional(),
    message: z.string().optional(),
    domain: z.string().optional(),
    entity_id: z.string().optional(),
    state: z.string().nullable().optional(),
    icon: z.string().optional(),
  })
  .meta({ id: 'HaLogbookEntry' });
export type HaLogbookEntry = z.infer<typeof HaLogbookEntry>;

export const HaSubscribeTrigger = z.object({
  id: Id,
  type: z.literal('subscribe_trigger'),
  trigger: z.unknown().meta({ description: 'one trigger or a list (required)' }),
  variables: z.record(z.string(), z.unknown()).optional(),
});
export const HaExecuteScript = z.object({
  id: Id,
  type: z.literal('execute_script'),
  sequence: z.unknown().meta({ description: 'one action or a list (required)' }),
  variables: z.record(z.string(), z.unknown()).optional(),
});
/** subscribe_trigger's event */
export const HaTriggerEvent = z.object({
  variables: z.record(z.string(), z.unknown()),
  context: z.object({ id: z.string(), parent_id: z.string().nullable(), user_id: z.string().nullable() }).nullable(),
});
export type HaTriggerEvent = z.infer<typeof HaTriggerEvent>;
