import { z } from 'zod';
import { JsonObject } from '../common.ts';
import { EntityIdParam } from '../devices.ts';
import { defineRoute } from '../route.ts';
import { HaErrorCode } from './messages.ts';
import { HaEntityRegistryUpdate } from './registry.ts';

/**
 * `POST /v1/ha/relay` on the edge: the Home Assistant commands the cloud cannot answer from its
 * mirror (history, logbook, execute_script, validate_config, state writes, subscribe_trigger), relayed through the
 * tunnel for a caller the cloud has already authorized. The answer is HA's result envelope, so
 * HA's error codes (template_error, invalid_format, …) cross the tunnel unchanged.
 */

const Seconds = z.number().finite();
const EntityIds = z.array(EntityIdParam).max(10_000);
/** the cloud's id of a subscribe_trigger subscription (unique across replicas) */
const TriggerSubscriptionId = z.string().min(1).max(100);

export const HaRelayHistoryQuery = z.object({
  format: z.enum(['websocket', 'rest']),
  start: Seconds,
  end: Seconds.optional(),
  entity_ids: EntityIds.optional(),
  include_start_time_state: z.boolean(),
  significant_changes_only: z.boolean(),
  minimal_response: z.boolean(),
  no_attributes: z.boolean(),
});
export const HaRelayLogbookQuery = z.object({
  format: z.enum(['websocket', 'rest']),
  start: Seconds,
  end: Seconds.optional(),
  entity_ids: EntityIds.optional(),
});

export const HaRelayBody = z
  .discriminatedUnion('op', [
    z.object({ op: z.literal('history'), query: HaRelayHistoryQuery }),
    z.object({ op: z.literal('logbook'), query: HaRelayLogbookQuery }),
    z.object({
      op: z.literal('execute_script'),
      sequence: z.unknown().meta({ description: 'one action or a list' }),
      variables: JsonObject,
    }),
    z.object({
      op: z.literal('validate_config'),
      kind: z.enum(['trigger', 'condition', 'action']),
      config: z.unknown(),
    }),
    z.object({
      op: z.literal('set_state'),
      entity_id: EntityIdParam,
      state: z.string().max(255),
      attributes: JsonObject,
      force_update: z.boolean(),
    }),
    z.object({ op: z.literal('remove_state'), entity_id: EntityIdParam }),
    // a live subscription for the cloud: its events come back as tunnel `trigger` messages
    z.object({
      op: z.literal('subscribe_trigger'),
      subscription: TriggerSubscriptionId,
      trigger: z.unknown().meta({ description: 'one trigger or a list' }),
      variables: JsonObject,
    }),
    z.object({ op: z.literal('unsubscribe_trigger'), subscription: TriggerSubscriptionId }),
    /** config/entity_registry/update: the edge's own ids (area_id without the cloud's edge prefix) */
    z.object({
      op: z.literal('update_entity_registry'),
      entity_id: EntityIdParam,
      changes: HaEntityRegistryUpdate.omit({ id: true, type: true, entity_id: true }),
    }),
  ])
  .meta({ id: 'HaRelayBody' });
export type HaRelayBody = z.infer<typeof HaRelayBody>;

export const HaRelayResult = z
  .union([
    z.object({ success: z.literal(true), result: z.unknown() }),
    z.object({ success: z.literal(false), error: z.object({ code: HaErrorCode, message: z.string() }) }),
  ])
  .meta({ id: 'HaRelayResult' });
export type HaRelayResult = z.infer<typeof HaRelayResult>;

export const edgeHaRelayRoute = defineRoute({
  method: 'post',
  path: '/v1/ha/relay',
  summary:
    "A Home Assistant API operation relayed by the cloud (history, logbook, execute_script, validate_config, POST/DELETE /api/states, config/entity_registry/update): HA's result envelope",
  tag: 'Edge local API',
  auth: 'bearer',
  body: HaRelayBody,
  status: 200,
  response: HaRelayResult,
  errors: [400, 401],
});
