import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { IntIdParam } from '../common.ts';
import {
  ConfigEntry,
  Device,
  DeviceWithEntities,
  EntityIdParam,
  EntityState,
  ServiceCallBody,
  ServiceCallResult,
  ServiceName,
} from '../devices.ts';
import { MqttCredentials } from '../edges.ts';
import { PutVoiceEndpointBody, VoiceEndpoint } from '../integrations.ts';
import { AdvanceFlowBody, ConfigFlowResult, FlowHandlers, StartFlowBody } from '../config-flow.ts';
import { BrowseQuery, MediaNode, ResolveBody, ResolvedMedia } from '../media.ts';
import { MessageBody } from '../common.ts';

/** Cloud routes that read the mirror or reach an edge through the tunnel. */
// A filter: an id that cannot exist matches nothing (200 []), unlike a path id (404).
export const EdgeQuery = z.object({
  edge_id: z
    .string()
    .regex(/^[0-9]+$/, 'must be an integer id')
    .optional(),
});
export const CloudDeviceParams = z.object({ id: IntIdParam });
export const CloudEntityParams = z.object({ entity_id: EntityIdParam });
export const CloudServiceParams = z.object({ domain: ServiceName, service: ServiceName });
/** Flow ids are the edge's (32 hex digits): one plain path segment, never `..`, `/`, `?` or `#`. */
export const CloudFlowParams = z.object({ flowId: z.string().regex(/^[A-Za-z0-9_-]{1,200}$/, 'invalid flow id') });
export const CloudEntryParams = z.object({ id: IntIdParam });

export const listDevicesRoute = defineRoute({
  method: 'get',
  path: '/v1/devices',
  summary: 'Devices of the edges in scope (mirror)',
  tag: 'devices',
  auth: 'bearer',
  orgContext: true,
  query: EdgeQuery,
  status: 200,
  response: z.array(Device),
  errors: [401, 403],
});
export const getDeviceRoute = defineRoute({
  method: 'get',
  path: '/v1/devices/{id}',
  summary: 'A device with its entities (mirror; answers while the edge is offline)',
  tag: 'devices',
  auth: 'bearer',
  params: CloudDeviceParams,
  query: EdgeQuery,
  status: 200,
  response: DeviceWithEntities,
  errors: [401, 404],
});
export const listStatesRoute = defineRoute({
  method: 'get',
  path: '/v1/entities/states',
  summary: 'Every entity the caller may view, with its current state (mirror)',
  tag: 'devices',
  auth: 'bearer',
  orgContext: true,
  conditional: true,
  status: 200,
  response: z.array(EntityState),
  errors: [401, 403],
});
export const getStateRoute = defineRoute({
  method: 'get',
  path: '/v1/entities/states/{entity_id}',
  summary: 'One entity state (mirror)',
  tag: 'devices',
  auth: 'bearer',
  params: CloudEntityParams,
  status: 200,
  response: EntityState,
  errors: [401, 404],
});
export const callServiceRoute = defineRoute({
  method: 'post',
  path: '/v1/services/{domain}/{service}',
  summary: 'Call a service on entities (relayed to their edge; needs can_control on shared entities)',
  tag: 'devices',
  auth: 'bearer',
  params: CloudServiceParams,
  body: ServiceCallBody,
  status: 200,
  response: ServiceCallResult,
  errors: [400, 401, 403, 404, 503, 504],
});
export const edgeMqttCredentialsRoute = defineRoute({
  method: 'post',
  path: '/v1/edges/{id}/mqtt-credentials',
  summary: "Create credentials accepted by that edge's MQTT broker",
  tag: 'edges',
  auth: 'bearer',
  params: z.object({ id: IntIdParam }),
  status: 201,
  response: MqttCredentials,
  errors: [401, 403, 404, 503, 504],
});
export const voiceEndpointsRoute = defineRoute({
  method: 'get',
  path: '/v1/voice-assistant/endpoints',
  summary: 'Entities for voice assistants, with their state and exposure',
  tag: 'integrations',
  auth: 'bearer',
  orgContext: true,
  status: 200,
  response: z.array(VoiceEndpoint),
  errors: [401, 403],
});
export const putVoiceEndpointRoute = defineRoute({
  method: 'put',
  path: '/v1/voice-assistant/endpoints/{entity_id}',
  summary: 'Expose or hide an entity to voice assistants',
  tag: 'integrations',
  auth: 'bearer',
  params: CloudEntityParams,
  body: PutVoiceEndpointBody,
  status: 200,
  response: VoiceEndpoint,
  errors: [400, 401, 403, 404],
});
export const flowHandlersRoute = defineRoute({
  method: 'get',
  path: '/v1/config_flow/handlers',
  summary: 'Integrations that can be set up on an edge',
  tag: 'config flows',
  auth: 'bearer',
  orgContext: true,
  query: EdgeQuery,
  status: 200,
  response: FlowHandlers,
  errors: [401, 403, 404, 503, 504],
});
export const startFlowRoute = defineRoute({
  method: 'post',
  path: '/v1/config_flow',
  summary: 'Start a config flow on an edge',
  tag: 'config flows',
  auth: 'bearer',
  orgContext: true,
  body: StartFlowBody,
  status: 200,
  response: ConfigFlowResult,
  errors: [400, 401, 403, 404, 503, 504],
});
export const advanceFlowRoute = defineRoute({
  method: 'post',
  path: '/v1/config_flow/{flowId}/advance',
  summary: 'Submit the current step of a config flow',
  tag: 'config flows',
  auth: 'bearer',
  params: CloudFlowParams,
  body: AdvanceFlowBody,
  status: 200,
  response: ConfigFlowResult,
  errors: [400, 401, 403, 404, 503, 504],
});
export const deleteFlowRoute = defineRoute({
  method: 'delete',
  path: '/v1/config_flow/{flowId}',
  summary: 'Abort and delete a config flow',
  tag: 'config flows',
  auth: 'bearer',
  params: CloudFlowParams,
  status: 200,
  response: MessageBody,
  errors: [400, 401, 404, 503, 504],
});
export const listEntriesRoute = defineRoute({
  method: 'get',
  path: '/v1/config_entries',
  summary: 'Config entries of the edges in scope (mirror)',
  tag: 'config flows',
  auth: 'bearer',
  orgContext: true,
  query: EdgeQuery,
  status: 200,
  response: z.array(ConfigEntry),
  errors: [401, 403],
});
export const deleteEntryRoute = defineRoute({
  method: 'delete',
  path: '/v1/config_entries/{id}',
  summary: 'Remove a config entry (and its devices and entities) on its edge',
  tag: 'config flows',
  auth: 'bearer',
  orgContext: true,
  params: CloudEntryParams,
  query: EdgeQuery,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404, 503, 504],
});
export const browseMediaRoute = defineRoute({
  method: 'get',
  path: '/v1/media-source/browse',
  summary: 'Browse media providers (root without uri)',
  tag: 'media',
  auth: 'bearer',
  orgContext: true,
  query: BrowseQuery,
  status: 200,
  response: MediaNode,
  errors: [400, 401, 403, 404, 503, 504],
});
export const resolveMediaRoute = defineRoute({
  method: 'post',
  path: '/v1/media-source/resolve',
  summary: 'Resolve a media URI to a playable URL',
  tag: 'media',
  auth: 'bearer',
  orgContext: true,
  body: ResolveBody,
  status: 200,
  response: ResolvedMedia,
  errors: [400, 401, 403, 404, 503, 504],
});

/**
 * Relayed into the edge's path: the token is a JWS (base64url parts joined by dots, so never `.`
 * or `..`), the filename one segment that is not `.` or `..` and has no `/`, `\\` or NUL.
 */
export const EdgeMediaParams = z.object({
  id: IntIdParam,
  token: z
    .string()
    .min(1)
    .max(4096)
    .regex(/^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/, 'invalid media token'),
  filename: z
    .string()
    .min(1)
    .max(512)
    .regex(/^(?!\.{1,2}$)[^/\\\0]+$/, 'invalid file name'),
});
export const edgeMediaRoute = defineRoute({
  method: 'get',
  path: '/v1/edges/{id}/media/{token}/{filename}',
  summary: 'Signed edge media, relayed through the tunnel (HTTP Range supported; the signature is the authorization)',
  tag: 'media',
  auth: 'none',
  params: EdgeMediaParams,
  status: 200,
  emptyResponse: true,
  errors: [400, 403, 404, 416, 503, 504],
});
