import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { IntIdParam, MessageBody } from '../common.ts';
import { CreateEdgeBody, CreatedEdge, Edge, RegisterCloudBody, RegisterCloudResult } from '../edges.ts';
import { SmartHomePage, SmartHomesQuery } from '../integrations.ts';

const EdgeIdParams = z.object({ id: IntIdParam });

export const createEdgeRoute = defineRoute({
  method: 'post',
  path: '/v1/edges',
  summary: 'Create an edge (returns its edge token once; stored hashed)',
  tag: 'edges',
  auth: 'bearer',
  orgContext: true,
  body: CreateEdgeBody,
  status: 201,
  response: CreatedEdge,
  errors: [400, 401, 403, 413],
});
export const listEdgesRoute = defineRoute({
  method: 'get',
  path: '/v1/edges',
  summary: 'Edges of the active scope (organization, or personal without the header)',
  tag: 'edges',
  auth: 'bearer',
  orgContext: true,
  status: 200,
  response: z.array(Edge),
  errors: [401, 403],
});
/** Mount before /v1/edges/{id}. */
export const cloudFleetRoute = defineRoute({
  method: 'get',
  path: '/v1/edges/cloud-fleet',
  summary: 'Cloud replicas of the shared fleet seen in the last 60 s (read-only)',
  tag: 'edges',
  auth: 'bearer',
  status: 200,
  response: z.array(Edge),
  errors: [401],
});
export const getEdgeRoute = defineRoute({
  method: 'get',
  path: '/v1/edges/{id}',
  summary: 'One edge',
  tag: 'edges',
  auth: 'bearer',
  orgContext: true,
  params: EdgeIdParams,
  status: 200,
  response: Edge,
  errors: [401, 403, 404],
});
export const deleteEdgeRoute = defineRoute({
  method: 'delete',
  path: '/v1/edges/{id}',
  summary: 'Revoke an edge: its token stops working and its tunnel is dropped',
  tag: 'edges',
  auth: 'bearer',
  orgContext: true,
  params: EdgeIdParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404],
});
export const registerCloudRoute = defineRoute({
  method: 'post',
  path: '/v1/edge/register-cloud',
  summary:
    'Self-registration of a cloud replica (FLEET_TOKEN); idempotent by hostname, rotates the edge token and MQTT password on every call',
  tag: 'edges',
  auth: 'fleet',
  body: RegisterCloudBody,
  status: 200,
  response: RegisterCloudResult,
  errors: [400, 401, 413],
});
export const edgeHeartbeatRoute = defineRoute({
  method: 'post',
  path: '/v1/edge/heartbeat',
  summary: 'Heartbeat of an edge (edge token): records last_seen_at',
  tag: 'edges',
  auth: 'edge',
  status: 200,
  response: Edge,
  errors: [401],
});
export const smartHomesRoute = defineRoute({
  method: 'get',
  path: '/v2/smarthomes',
  summary: 'Smart homes (one per edge in scope) with device and entity counts; cursor pagination',
  tag: 'smarthomes',
  auth: 'bearer',
  orgContext: true,
  query: SmartHomesQuery,
  status: 200,
  response: SmartHomePage,
  errors: [400, 401, 403],
});
