import { z } from 'zod';
import { JsonObject } from './common.ts';
import { Area, ConfigEntry, Device, EntityRecord, EntityState } from './devices.ts';
import { AutomationSummary } from './automations.ts';
import { EventContext } from './websocket.ts';

/** Bumped on any incompatible change of the messages below; the hello carries it. */
export const TUNNEL_PROTOCOL_VERSION = 1;

/** A full copy of what the edge owns, sent on connect (and on resync). */
export const Snapshot = z.object({
  devices: z.array(Device),
  entities: z.array(EntityRecord),
  states: z.array(EntityState),
  config_entries: z.array(ConfigEntry),
  automations: z.array(AutomationSummary),
  /** the edge's area registry (older edges send none) */
  areas: z.array(Area).optional(),
});
export type Snapshot = z.infer<typeof Snapshot>;

/** One change after the snapshot; `seq` is the edge's monotonically increasing sequence. */
export const Delta = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('state'),
    state: EntityState,
    /**
     * the entity's state before this change on the edge (null: it had none). Optional: an edge
     * that sends it lets the cloud announce the change to apps before the mirror's commit, an
     * older edge's change is announced after it, with the mirror's old state.
     */
    old_state: EntityState.nullable().optional(),
  }),
  z.object({ kind: z.literal('device_upsert'), device: Device }),
  z.object({ kind: z.literal('device_remove'), id: z.number().int() }),
  z.object({ kind: z.literal('entity_upsert'), entity: EntityRecord }),
  z.object({ kind: z.literal('entity_remove'), entity_id: z.string() }),
  /** an area created or renamed (areas are never removed on the edge yet) */
  z.object({ kind: z.literal('area_upsert'), area: Area }),
  z.object({ kind: z.literal('config_entry_upsert'), entry: ConfigEntry }),
  z.object({ kind: z.literal('config_entry_remove'), id: z.number().int() }),
  z.object({ kind: z.literal('automation_upsert'), automation: AutomationSummary }),
  z.object({ kind: z.literal('automation_remove'), id: z.string() }),
]);
export type Delta = z.infer<typeof Delta>;
export type DeltaMessage = z.infer<typeof DeltaMessage>;

export const HelloMessage = z.object({
  type: z.literal('hello'),
  protocol: z.number().int(),
  edge_version: z.string(),
  hostname: z.string().optional(),
  /** last sequence the edge believes the cloud acknowledged; null forces a snapshot */
  resume_from: z.number().int().nullable(),
});
export const WelcomeMessage = z.object({
  type: z.literal('welcome'),
  protocol: z.number().int(),
  edge_id: z.number().int(),
  /** last sequence the cloud has applied for this edge, or null when it needs a snapshot */
  acked_seq: z.number().int().nullable(),
  heartbeat_ms: z.number().int(),
});
export const SnapshotMessage = z.object({ type: z.literal('snapshot'), seq: z.number().int(), data: Snapshot });
export const DeltaMessage = z.object({ type: z.literal('delta'), seq: z.number().int(), delta: Delta });
export const AckMessage = z.object({ type: z.literal('ack'), seq: z.number().int() });
/** An RPC from the cloud to the edge: an HTTP-shaped call into the edge's local API. */
export const RequestMessage = z.object({
  type: z.literal('request'),
  id: z.string(),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
  path: z.string(),
  body: z.unknown().optional(),
  /** forwarded request headers (e.g. Range for media) */
  headers: z.record(z.string(), z.string()).optional(),
  /** who asked, so the edge never mistakes a relayed call for a local one */
  origin: z.object({ via: z.literal('cloud'), user_id: z.string().nullable(), remote_addr: z.string().nullable() }),
});
export const ResponseMessage = z.object({
  type: z.literal('response'),
  id: z.string(),
  status: z.number().int(),
  body: z.unknown(),
  /** response headers worth relaying (content type, range) */
  headers: z.record(z.string(), z.string()).optional(),
  /** set when body is a base64 string of non-JSON bytes (media) */
  encoding: z.literal('base64').optional(),
});
/**
 * An event of the edge's bus (custom events, automation_triggered, call_service), live only: not
 * sequenced, not resent after a reconnect. origin, time_fired and context came later (optional).
 */
export const EventMessage = z.object({
  type: z.literal('event'),
  event_type: z.string(),
  data: JsonObject,
  origin: z.string().optional(),
  time_fired: z.string().optional(),
  context: EventContext.optional(),
});
export type EventMessage = z.infer<typeof EventMessage>;
/**
 * A subscribe_trigger subscription the cloud made on this edge (POST /v1/ha/relay, op
 * subscribe_trigger) fired: HA's event body for it. Live only, like EventMessage; the edge drops
 * the cloud's subscriptions when the tunnel closes and the cloud makes them again after hello.
 */
export const TriggerMessage = z.object({
  type: z.literal('trigger'),
  subscription: z.string().min(1).max(100),
  variables: JsonObject,
  context: EventContext.nullable(),
});
export type TriggerMessage = z.infer<typeof TriggerMessage>;
export const ErrorMessage = z.object({
  type: z.literal('error'),
  id: z.string().optional(),
  code: z.string(),
  message: z.string(),
});
export const PingMessage = z.object({ type: z.literal('ping'), ts: z.number() });
export const PongMessage = z.object({ type: z.literal('pong'), ts: z.number() });

export const EdgeToCloud = z.discriminatedUnion('type', [
  HelloMessage,
  SnapshotMessage,
  DeltaMessage,
  ResponseMessage,
  EventMessage,
  TriggerMessage,
  ErrorMessage,
  PingMessage,
  PongMessage,
]);
export const CloudToEdge = z.discriminatedUnion('type', [
  WelcomeMessage,
  AckMessage,
  RequestMessage,
  EventMessage,
  ErrorMessage,
  PingMessage,
  PongMessage,
]);
export type EdgeToCloud = z.infer<typeof EdgeToCloud>;
export type CloudToEdge = z.infer<typeof CloudToEdge>;
export type TunnelRequest = z.infer<typeof RequestMessage>;
export type TunnelResponse = z.infer<typeof ResponseMessage>;
