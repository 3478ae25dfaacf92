import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { IntIdParam } from '../common.ts';
import { CreateTransferBody, Transfer, TransferList } from '../transfers.ts';

const TransferParams = z.object({ id: IntIdParam });

export const createTransferRoute = defineRoute({
  method: 'post',
  path: '/v1/transfers',
  summary: 'Offer a resource the caller owns to another user, by e-mail (pending for 7 days)',
  tag: 'transfers',
  auth: 'bearer',
  body: CreateTransferBody,
  status: 201,
  response: Transfer,
  errors: [400, 401, 409],
});
export const listTransfersRoute = defineRoute({
  method: 'get',
  path: '/v1/transfers',
  summary: "The caller's sent and received transfers, newest first",
  tag: 'transfers',
  auth: 'bearer',
  status: 200,
  response: TransferList,
  errors: [401],
});
export const acceptTransferRoute = defineRoute({
  method: 'post',
  path: '/v1/transfers/{id}/accept',
  summary: 'Accept a transfer (recipient): ownership of the resource moves to the caller',
  tag: 'transfers',
  auth: 'bearer',
  params: TransferParams,
  status: 200,
  response: Transfer,
  errors: [401, 403, 404, 409],
});
export const declineTransferRoute = defineRoute({
  method: 'post',
  path: '/v1/transfers/{id}/decline',
  summary: 'Decline a transfer (recipient)',
  tag: 'transfers',
  auth: 'bearer',
  params: TransferParams,
  status: 200,
  response: Transfer,
  errors: [401, 403, 404, 409],
});
export const cancelTransferRoute = defineRoute({
  method: 'post',
  path: '/v1/transfers/{id}/cancel',
  summary: 'Cancel a transfer (sender)',
  tag: 'transfers',
  auth: 'bearer',
  params: TransferParams,
  status: 200,
  response: Transfer,
  errors: [401, 403, 404, 409],
});
