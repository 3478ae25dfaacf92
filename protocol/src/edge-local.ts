import { z } from 'zod';
import { IntIdParam, JsonObject, MessageBody, Timestamp } from './common.ts';
import {
  DeviceWithEntities,
  Device,
  EntityIdParam,
  EntityState,
  ServiceCallBody,
  ServiceCallResult,
  ServiceName,
} from './devices.ts';
import { MqttCredentials } from './edges.ts';
import { EDGE_FIRED_EVENTS } from './automation-actions.ts';
import { defineRoute } from './route.ts';
import { Health } from './routes/core.ts';

/**
 * The edge's local HTTP API: the same paths and shapes as the cloud for what the edge
 * owns, plus MQTT credential and ownership management. Bearer auth with local tokens
 * (`pnpm edge token create`); `/healthz` is public.
 */

/** Who may do what on the edge's MQTT broker (see edge/src/mqtt/acl.ts). */
export const MqttRole = z.enum(['device', 'integration']).meta({ id: 'MqttRole' });
export type MqttRole = z.infer<typeof MqttRole>;

export const MqttUsername = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'username: 1-64 of A-Z a-z 0-9 _ . -');

/** `POST /v1/mqtt/credentials`: username is generated when absent; role defaults to device. */
export const CreateMqttCredentialsBody = z
  .object({
    username: MqttUsername.optional(),
    role: MqttRole.default('device'),
  })
  .meta({ id: 'CreateMqttCredentials' });
export type CreateMqttCredentialsBody = z.input<typeof CreateMqttCredentialsBody>;

export const MqttUser = z
  .object({
    username: z.string(),
    role: MqttRole,
    created_at: Timestamp,
  })
  .meta({ id: 'MqttUser' });
export type MqttUser = z.infer<typeof MqttUser>;

/**
 * Who owns one MQTT discovery config on the edge's broker: that user alone (besides
 * integration users) may re-publish it and publish to or subscribe to its command topics.
 */
export const MqttOwnership = z
  .object({
    discovery_topic: z.string(),
    owner: z
      .string()
      .nullable()
      .describe('MQTT username; null: released, the next user publishing this config claims it'),
    device_id: z.number().int().nullable(),
    entity_ids: z.array(z.string()),
    command_topics: z.array(z.string()),
  })
  .meta({ id: 'MqttOwnership' });
export type MqttOwnership = z.infer<typeof MqttOwnership>;

/** `PUT /v1/mqtt/owners`: the configs of one device, or one config, go to `username` (null releases them). */
export const SetMqttOwnerBody = z
  .object({
    device_id: z.number().int().positive().optional(),
    discovery_topic: z.string().min(1).max(1024).optional(),
    username: MqttUsername.nullable(),
  })
  .refine((b) => (b.device_id === undefined) !== (b.discovery_topic === undefined), {
    message: 'give exactly one of device_id or discovery_topic',
  })
  .meta({ id: 'SetMqttOwner' });
export type SetMqttOwnerBody = z.infer<typeof SetMqttOwnerBody>;

export const DeviceIdParams = z.object({ id: IntIdParam });
export const EntityIdParams = z.object({ entity_id: EntityIdParam });
export const ServiceParams = z.object({ domain: ServiceName, service: ServiceName });
export const MqttUserParams = z.object({ username: MqttUsername });

const TAG = 'Edge local API';

export const edgeHealthRoute = defineRoute({
  method: 'get',
  path: '/healthz',
  summary: 'Liveness',
  tag: TAG,
  auth: 'none',
  status: 200,
  response: Health,
  errors: [],
});
export const edgeListDevicesRoute = defineRoute({
  method: 'get',
  path: '/v1/devices',
  summary: 'Devices of this edge',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: z.array(Device),
  errors: [401],
});
export const edgeGetDeviceRoute = defineRoute({
  method: 'get',
  path: '/v1/devices/{id}',
  summary: 'One device with its entities',
  tag: TAG,
  auth: 'bearer',
  params: DeviceIdParams,
  status: 200,
  response: DeviceWithEntities,
  errors: [401, 404],
});
export const edgeListStatesRoute = defineRoute({
  method: 'get',
  path: '/v1/entities/states',
  summary: 'Current state of every entity',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: z.array(EntityState),
  errors: [401],
});
export const edgeGetStateRoute = defineRoute({
  method: 'get',
  path: '/v1/entities/states/{entity_id}',
  summary: 'Current state of one entity',
  tag: TAG,
  auth: 'bearer',
  params: EntityIdParams,
  status: 200,
  response: EntityState,
  errors: [401, 404],
});
export const edgeCallServiceRoute = defineRoute({
  method: 'post',
  path: '/v1/services/{domain}/{service}',
  summary: 'Call a service on entities',
  tag: TAG,
  auth: 'bearer',
  params: ServiceParams,
  body: ServiceCallBody,
  status: 200,
  response: ServiceCallResult,
  errors: [400, 401, 404],
});
/** An event type fired through the API: HA's are free-form; ours stay a plain path segment. */
export const EventTypeParam = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'event_type: 1-100 of A-Z a-z 0-9 _ . : -')
  .refine((name) => !EDGE_FIRED_EVENTS.includes(name), 'state_changed and call_service are fired by the edge itself');
export const edgeFireEventRoute = defineRoute({
  method: 'post',
  path: '/v1/events/{event_type}',
  summary:
    "Fire an event on the edge bus (automations and the cloud see it; the cloud's Home Assistant fire_event relays here)",
  tag: TAG,
  auth: 'bearer',
  params: z.object({ event_type: EventTypeParam }),
  body: JsonObject,
  status: 200,
  response: MessageBody,
  errors: [400, 401, 404],
});
export const edgeCreateMqttCredentialsRoute = defineRoute({
  method: 'post',
  path: '/v1/mqtt/credentials',
  summary: 'Create MQTT broker credentials (password shown once)',
  tag: TAG,
  auth: 'bearer',
  body: CreateMqttCredentialsBody,
  status: 201,
  response: MqttCredentials,
  errors: [400, 401, 409],
});
export const edgeListMqttUsersRoute = defineRoute({
  method: 'get',
  path: '/v1/mqtt/credentials',
  summary: 'MQTT broker users',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: z.array(MqttUser),
  errors: [401],
});
export const edgeDeleteMqttUserRoute = defineRoute({
  method: 'delete',
  path: '/v1/mqtt/credentials/{username}',
  summary: 'Delete an MQTT user and disconnect its clients',
  tag: TAG,
  auth: 'bearer',
  params: MqttUserParams,
  status: 200,
  response: MessageBody,
  errors: [401, 404],
});

export const edgeListMqttOwnersRoute = defineRoute({
  method: 'get',
  path: '/v1/mqtt/owners',
  summary: 'Who owns each MQTT discovery config (and its command topics)',
  tag: TAG,
  auth: 'bearer',
  status: 200,
  response: z.array(MqttOwnership),
  errors: [401],
});
export const edgeSetMqttOwnerRoute = defineRoute({
  method: 'put',
  path: '/v1/mqtt/owners',
  summary: 'Give the MQTT discovery configs of a device, or one config, to an MQTT user (null releases them)',
  tag: TAG,
  auth: 'bearer',
  body: SetMqttOwnerBody,
  status: 200,
  response: z.array(MqttOwnership),
  errors: [400, 401, 404],
});

export const edgeLocalRoutes = [
  edgeHealthRoute,
  edgeListDevicesRoute,
  edgeGetDeviceRoute,
  edgeListStatesRoute,
  edgeGetStateRoute,
  edgeCallServiceRoute,
  edgeCreateMqttCredentialsRoute,
  edgeListMqttUsersRoute,
  edgeDeleteMqttUserRoute,
  edgeListMqttOwnersRoute,
  edgeSetMqttOwnerRoute,
];
