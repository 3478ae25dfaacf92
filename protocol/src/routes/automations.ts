import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { Automation, AutomationBody, Trace, WebhookParams } from '../automations.ts';
import { IdParams, JsonObject, MessageBody } from '../common.ts';

/**
 * A webhook call's body: any JSON object (at most 1 MiB), documented here but read by the
 * receiver itself (`readBody: 'manual'`), so 404 / 429 are answered before any body byte is read.
 */
export const WebhookBody = JsonObject.meta({
  id: 'WebhookBody',
  description: 'free-form JSON object (at most 1 MiB); the automation sees it as trigger.json',
});

/** Same paths and shapes on the edge's local API and on the cloud (which proxies to the owning edge). */
export const createAutomationRoute = defineRoute({
  method: 'post',
  path: '/v1/automations',
  summary: 'Create an automation (a webhook trigger gets a generated webhook_id)',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  body: AutomationBody,
  status: 201,
  response: Automation,
  errors: [400, 401, 403, 413, 503],
});
export const listAutomationsRoute = defineRoute({
  method: 'get',
  path: '/v1/automations',
  summary: 'List automations',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  status: 200,
  response: z.array(Automation),
  errors: [401, 403],
});
export const getAutomationRoute = defineRoute({
  method: 'get',
  path: '/v1/automations/{id}',
  summary: 'One automation',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  params: IdParams,
  status: 200,
  response: Automation,
  errors: [401, 403, 404],
});
export const updateAutomationRoute = defineRoute({
  method: 'put',
  path: '/v1/automations/{id}',
  summary: 'Replace an automation (an existing webhook trigger keeps its webhook_id)',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  params: IdParams,
  body: AutomationBody,
  status: 200,
  response: Automation,
  errors: [400, 401, 403, 404, 413, 503],
});
export const deleteAutomationRoute = defineRoute({
  method: 'delete',
  path: '/v1/automations/{id}',
  summary: 'Delete an automation (revokes its webhook_id)',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  params: IdParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404, 503],
});
export const automationTracesRoute = defineRoute({
  method: 'get',
  path: '/v1/automations/{id}/traces',
  summary: 'Recent runs, newest first (last 20 plus the last 20 failed)',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  params: IdParams,
  status: 200,
  response: z.array(Trace),
  errors: [401, 403, 404, 503],
});
export const automationTriggerRoute = defineRoute({
  method: 'post',
  path: '/v1/automations/{id}/trigger',
  summary:
    "Run the automation's actions now, conditions skipped (Home Assistant's automation.trigger); the run shows in its traces. 409 when it is disabled",
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  params: IdParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404, 409, 503],
});
export const automationWebhookRoute = defineRoute({
  method: 'post',
  path: '/v1/automations/webhook/{webhook_id}',
  summary: 'Webhook receiver: the body (a JSON object, at most 1 MiB) becomes trigger.json',
  tag: 'automations',
  auth: 'none',
  params: WebhookParams,
  body: WebhookBody,
  readBody: 'manual',
  status: 200,
  emptyResponse: true,
  errors: [400, 404, 413, 429],
});
