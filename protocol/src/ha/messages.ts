import { z } from 'zod';
import { HaConfig, HaServices } from './config.ts';
import { HaContext, HaEntitiesEvent, HaEvent, HaState } from './state.ts';

/** The Home Assistant WebSocket protocol (`/api/websocket`), message by message. */

export const HA_VERSION = '2026.11.0';

/** The error codes HA's websocket_api uses (homeassistant/components/websocket_api/const.py). */
export const HaErrorCode = z.enum([
  'invalid_format',
  'unknown_command',
  'not_found',
  'unauthorized',
  'home_assistant_error',
  'template_error',
  'id_reuse',
  'unknown_error',
  'service_validation_error',
  'not_allowed',
  // history/logbook (their own codes in HA)
  'invalid_start_time',
  'invalid_end_time',
]);
export type HaErrorCode = z.infer<typeof HaErrorCode>;

// ---- auth phase
/** `organization_id` (our extension) selects the organization on the cloud, like X-Organization-Id. */
export const HaAuth = z.object({
  type: z.literal('auth'),
  access_token: z.string().min(1),
  organization_id: z.string().optional().meta({
    description:
      'cloud only: the organization scope, as the X-Organization-Id header (the caller must be a member, else auth_invalid; with multi-factor sign-in when the organization requires it, else auth_invalid with a message starting mfa_enrollment_required); without it, every edge and share the user reaches',
  }),
});
export type HaAuth = z.infer<typeof HaAuth>;
export const HaAuthRequired = z.object({ type: z.literal('auth_required'), ha_version: z.string() });
export const HaAuthOk = z.object({ type: z.literal('auth_ok'), ha_version: z.string() });
export const HaAuthInvalid = z.object({ type: z.literal('auth_invalid'), message: z.string() });

// ---- commands (every command has a positive, increasing integer id)
export const HaCommandBase = z.looseObject({ id: z.number().int().nonnegative(), type: z.string() });
export type HaCommandBase = z.infer<typeof HaCommandBase>;

export const HaSupportedFeatures = z.object({
  id: z.number().int(),
  type: z.literal('supported_features'),
  features: z.record(z.string(), z.number()).default({}),
});
export const HaPing = z.object({ id: z.number().int(), type: z.literal('ping') });
export const HaGetStates = z.object({ id: z.number().int(), type: z.literal('get_states') });
export const HaGetConfig = z.object({ id: z.number().int(), type: z.literal('get_config') });
export const HaGetServices = z.object({ id: z.number().int(), type: z.literal('get_services') });
export const HaGetPanels = z.object({ id: z.number().int(), type: z.literal('get_panels') });

const StringOrList = z.union([z.string(), z.array(z.string())]);
export const HaTarget = z.object({
  entity_id: StringOrList.optional(),
  device_id: StringOrList.optional(),
  area_id: StringOrList.optional(),
});
export type HaTarget = z.infer<typeof HaTarget>;
export const HaCallService = z.object({
  id: z.number().int(),
  type: z.literal('call_service'),
  domain: z.string().min(1),
  service: z.string().min(1),
  service_data: z.record(z.string(), z.unknown()).optional(),
  target: HaTarget.optional(),
  return_response: z.boolean().default(false),
});
export type HaCallService = z.infer<typeof HaCallService>;
export const HaCallServiceResult = z.object({ context: HaContext, response: z.unknown().optional() });
export type HaCallServiceResult = z.infer<typeof HaCallServiceResult>;

export const HaSubscribeEvents = z.object({
  id: z.number().int(),
  type: z.literal('subscribe_events'),
  event_type: z.string().min(1).optional(),
});
export const HaUnsubscribeEvents = z.object({
  id: z.number().int(),
  type: z.literal('unsubscribe_events'),
  subscription: z.number().int(),
});
export const HaSubscribeEntities = z.object({
  id: z.number().int(),
  type: z.literal('subscribe_entities'),
  entity_ids: z.array(z.string()).optional(),
});
export const HaFireEvent = z.object({
  id: z.number().int(),
  type: z.literal('fire_event'),
  event_type: z.string().min(1),
  event_data: z.record(z.string(), z.unknown()).optional(),
});

// ---- server messages
export const HaResultOk = z.object({
  id: z.number().int(),
  type: z.literal('result'),
  success: z.literal(true),
  result: z.unknown(),
});
export const HaResultError = z.object({
  id: z.number().int(),
  type: z.literal('result'),
  success: z.literal(false),
  error: z.object({ code: z.string(), message: z.string() }),
});
export const HaEventMessage = z.object({
  id: z.number().int(),
  type: z.literal('event'),
  event: z.union([HaEvent, HaEntitiesEvent, z.unknown()]),
});
export const HaPong = z.object({ id: z.number().int(), type: z.literal('pong') });
export const HaServerMessage = z.union([
  HaAuthRequired,
  HaAuthOk,
  HaAuthInvalid,
  HaResultOk,
  HaResultError,
  HaEventMessage,
  HaPong,
]);
export type HaServerMessage = z.infer<typeof HaServerMessage>;

export { HaConfig, HaServices, HaState };
