import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { IntIdParam, MessageBody } from '../common.ts';
import { CreateVoipAccountBody, VoipAccount } from '../voip.ts';

export const createVoipAccountRoute = defineRoute({
  method: 'post',
  path: '/v1/voip-accounts',
  summary: 'Create a VoIP (SIP) account; the password is stored encrypted and never returned',
  tag: 'voip',
  auth: 'bearer',
  orgContext: true,
  body: CreateVoipAccountBody,
  status: 201,
  response: VoipAccount,
  errors: [400, 401, 403],
});
export const listVoipAccountsRoute = defineRoute({
  method: 'get',
  path: '/v1/voip-accounts',
  summary: 'List the VoIP accounts of the scope',
  tag: 'voip',
  auth: 'bearer',
  orgContext: true,
  status: 200,
  response: z.array(VoipAccount),
  errors: [401, 403],
});
export const deleteVoipAccountRoute = defineRoute({
  method: 'delete',
  path: '/v1/voip-accounts/{id}',
  summary: 'Delete a VoIP account (owner or organization admin)',
  tag: 'voip',
  auth: 'bearer',
  orgContext: true,
  params: z.object({ id: IntIdParam }),
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404],
});
