import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { Automation, AutomationBody, AutomationSummary, CloudBootstrap, Trace, WebhookParams } from '../automations.ts';
import { MessageBody } from '../common.ts';
import { EdgeQuery } from './devices.ts';
import { WebhookBody } from './automations.ts';

/**
 * The cloud's automation routes. Definitions live on the edges; the cloud finds the owning
 * edge through its mirror and relays through the tunnel, so these add the relay's errors
 * (503 edge offline, 504 edge timeout) to the edge-local specs in ./automations.ts. The list
 * answers from the mirror (summaries, also while the edge is offline).
 */
export const CloudAutomationParams = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/) });
export const CloudAutomationSummary = AutomationSummary.extend({
  edge_id: z.number().int().meta({ description: 'the edge that stores and runs the automation' }),
}).meta({ id: 'CloudAutomationSummary' });

export const cloudCreateAutomationRoute = defineRoute({
  method: 'post',
  path: '/v1/automations',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  summary:
    "Create an automation on an edge (edge_id, or the scope's only home edge; needs edit rights on the edge; counts against the plan). A webhook trigger gets a generated webhook_id",
  body: AutomationBody,
  status: 201,
  response: Automation,
  errors: [400, 401, 403, 404, 413, 503, 504],
});
export const cloudListAutomationsRoute = defineRoute({
  method: 'get',
  path: '/v1/automations',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  summary:
    'Summaries of the automations on the edges in scope, from the mirror (last known while an edge is offline); GET /v1/automations/{id} has the full definition',
  query: EdgeQuery,
  status: 200,
  response: z.array(CloudAutomationSummary),
  errors: [401, 403],
});
export const cloudGetAutomationRoute = defineRoute({
  method: 'get',
  path: '/v1/automations/{id}',
  summary: 'One automation, full definition (from its edge)',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  params: CloudAutomationParams,
  status: 200,
  response: Automation,
  errors: [401, 403, 404, 503, 504],
});
export const cloudUpdateAutomationRoute = defineRoute({
  method: 'put',
  path: '/v1/automations/{id}',
  summary: 'Replace an automation (an existing webhook trigger keeps its webhook_id; needs edit rights)',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  params: CloudAutomationParams,
  body: AutomationBody,
  status: 200,
  response: Automation,
  errors: [400, 401, 403, 404, 413, 503, 504],
});
export const cloudDeleteAutomationRoute = defineRoute({
  method: 'delete',
  path: '/v1/automations/{id}',
  summary: 'Delete an automation (revokes its webhook_id; needs edit rights)',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  params: CloudAutomationParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404, 503, 504],
});
export const cloudAutomationTracesRoute = defineRoute({
  method: 'get',
  path: '/v1/automations/{id}/traces',
  summary: 'Recent runs, newest first (last 20 plus the last 20 failed), from the edge',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  params: CloudAutomationParams,
  status: 200,
  response: z.array(Trace),
  errors: [401, 403, 404, 503, 504],
});
export const cloudAutomationTriggerRoute = defineRoute({
  method: 'post',
  path: '/v1/automations/{id}/trigger',
  summary:
    "Run the automation's actions now on its edge, conditions skipped (Home Assistant's automation.trigger; needs edit rights); 409 when it is disabled",
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  params: CloudAutomationParams,
  status: 200,
  response: MessageBody,
  errors: [401, 403, 404, 409, 503, 504],
});
export const cloudAutomationWebhookRoute = defineRoute({
  method: 'post',
  path: '/v1/automations/webhook/{webhook_id}',
  tag: 'automations',
  auth: 'none',
  summary:
    'Webhook receiver, relayed to the owning edge as a cloud (not local) call: the body (a JSON object, at most 1 MiB) becomes trigger.json; 200 with an empty body',
  params: WebhookParams,
  body: WebhookBody,
  readBody: 'manual',
  status: 200,
  emptyResponse: true,
  errors: [400, 404, 413, 429, 503, 504],
});
export const automationCloudBootstrapRoute = defineRoute({
  method: 'get',
  path: '/v1/automation/cloud-bootstrap',
  tag: 'automations',
  auth: 'bearer',
  orgContext: true,
  summary:
    "The enabled automations (full definitions) of the scope's edges, for cloud replicas that run an organization's automations; edges that are offline are skipped",
  status: 200,
  response: CloudBootstrap,
  errors: [401, 403],
});
