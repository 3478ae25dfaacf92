import { z } from 'zod';
import { JsonObject } from './common.ts';
import { EntityState } from './devices.ts';

/** App WebSocket (`GET /v1/websocket`), Home Assistant style. */
export const WsAuth = z.object({ type: z.literal('auth'), access_token: z.string() });
export const WsSubscribeEvents = z.object({
  id: z.number().int(),
  type: z.literal('subscribe_events'),
  event_type: z.string().optional(),
});
export const WsUnsubscribeEvents = z.object({
  id: z.number().int(),
  type: z.literal('unsubscribe_events'),
  subscription: z.number().int(),
});
export const WsGetStates = z.object({ id: z.number().int(), type: z.literal('get_states') });
export const WsCallService = z.object({
  id: z.number().int(),
  type: z.literal('call_service'),
  domain: z.string(),
  service: z.string(),
  service_data: JsonObject.optional(),
  target: z.object({ entity_id: z.union([z.string(), z.array(z.string())]) }).optional(),
});
export const WsPing = z.object({ id: z.number().int(), type: z.literal('ping') });
export const WsClientMessage = z.discriminatedUnion('type', [
  WsAuth,
  WsSubscribeEvents,
  WsUnsubscribeEvents,
  WsGetStates,
  WsCallService,
  WsPing,
]);
export type WsClientMessage = z.infer<typeof WsClientMessage>;

export const WsAuthRequired = z.object({ type: z.literal('auth_required'), ha_version: z.string() });
export const WsAuthOk = z.object({ type: z.literal('auth_ok'), ha_version: z.string() });
export const WsAuthInvalid = z.object({ type: z.literal('auth_invalid'), message: z.string() });
export const WsResult = z.object({
  id: z.number().int(),
  type: z.literal('result'),
  success: z.boolean(),
  result: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
export const StateChangedEvent = z.object({
  event_type: z.literal('state_changed'),
  data: z.object({ entity_id: z.string(), old_state: EntityState.nullable(), new_state: EntityState.nullable() }),
  time_fired: z.string(),
});
/** HA's event context: `parent_id` names the context (an automation run, a call) that caused the event. */
export const EventContext = z.object({
  id: z.string(),
  parent_id: z.string().nullable(),
  user_id: z.string().nullable(),
});
export type EventContext = z.infer<typeof EventContext>;
/**
 * Any other event of an edge's bus, as Home Assistant shapes it: custom events fired by
 * automations (`event` action), `automation_triggered` (name, entity_id, source) and
 * `call_service` (domain, service, service_data).
 */
export const BusEvent = z.object({
  event_type: z.string().min(1).max(200),
  data: JsonObject,
  origin: z.string(),
  time_fired: z.string(),
  context: EventContext,
});
export type BusEvent = z.infer<typeof BusEvent>;
export const WsEvent = z.object({
  id: z.number().int(),
  type: z.literal('event'),
  event: z.union([StateChangedEvent, BusEvent]),
});
export const WsPong = z.object({ id: z.number().int(), type: z.literal('pong') });
export const WsServerMessage = z.union([WsAuthRequired, WsAuthOk, WsAuthInvalid, WsResult, WsEvent, WsPong]);
export type WsServerMessage = z.infer<typeof WsServerMessage>;
