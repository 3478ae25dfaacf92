import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { IntIdParam, MessageBody } from '../common.ts';
import { CreateZoneBody, PatchZoneBody, Zone } from '../zones.ts';

const ZoneParams = z.object({ id: IntIdParam });

export const createZoneRoute = defineRoute({
  method: 'post',
  path: '/v1/zones',
  summary: 'Create a zone (a circle: centre and radius in metres)',
  tag: 'zones',
  auth: 'bearer',
  orgContext: true,
  body: CreateZoneBody,
  status: 201,
  response: Zone,
  errors: [400, 401, 403],
});
export const listZonesRoute = defineRoute({
  method: 'get',
  path: '/v1/zones',
  summary: 'List the zones of the scope (personal, or the X-Organization-Id organization)',
  tag: 'zones',
  auth: 'bearer',
  orgContext: true,
  status: 200,
  response: z.array(Zone),
  errors: [401, 403],
});
export const getZoneRoute = defineRoute({
  method: 'get',
  path: '/v1/zones/{id}',
  summary: 'Get a zone of the scope',
  tag: 'zones',
  auth: 'bearer',
  orgContext: true,
  params: ZoneParams,
  status: 200,
  response: Zone,
  errors: [401, 403, 404],
});
export const patchZoneRoute = defineRoute({
  method: 'patch',
  path: '/v1/zones/{id}',
  summary: 'Change a zone (only the fields sent)',
  tag: 'zones',
  auth: 'bearer',
  orgContext: true,
  params: ZoneParams,
  body: PatchZoneBody,
  status: 200,
  response: Zone,
  errors: [400, 401, 403, 404],
});
export const deleteZoneRoute = defineRoute({
  method: 'delete',
  path: '/v1/zones/{id}',
  summary: 'Delete a zone',
  tag: 'zones',
  auth: 'bearer',
  orgContext: true,
  params: ZoneParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404],
});
