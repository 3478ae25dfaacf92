import { z } from 'zod';
import { Automation, AutomationSummary, Trace } from '@smarthome/protocol/automations';
import { api } from '../api/http.ts';

/** The same paths on the cloud (relayed to the owning edge) and on an edge's local API. */
const item = (id: string) => `/v1/automations/${encodeURIComponent(id)}`;

export const listAutomations = () => api('GET', '/v1/automations', { schema: z.array(AutomationSummary) });
export const getAutomation = (id: string) => api('GET', item(id), { schema: Automation });
export const traces = (id: string) => api('GET', `${item(id)}/traces`, { schema: z.array(Trace) });
export const runNow = (id: string) => api('POST', `${item(id)}/trigger`);
export const create = (body: Record<string, unknown>) => api('POST', '/v1/automations', { body, schema: Automation });
export const update = (id: string, body: Record<string, unknown>) => api('PUT', item(id), { body, schema: Automation });

/** What the editor shows and saves: the definition without what the service assigns. */
export function editable(a: Automation): Record<string, unknown> {
  const out: Record<string, unknown> = { alias: a.alias };
  if (a.description !== null) out.description = a.description;
  out.mode = a.mode;
  if (a.max !== null) out.max = a.max;
  out.enabled = a.enabled;
  if (a.variables) out.variables = a.variables;
  if (a.secrets) out.secrets = a.secrets;
  out.trigger = a.trigger;
  out.condition = a.condition;
  out.action = a.action;
  return out;
}

/** The API has no partial update: the switch writes the whole definition back with `enabled` flipped. */
export async function setEnabled(id: string, enabled: boolean): Promise<Automation> {
  return update(id, { ...editable(await getAutomation(id)), enabled });
}

export const webhookUrl = (webhookId: string) =>
  `${location.origin}/v1/automations/webhook/${encodeURIComponent(webhookId)}`;

export const STARTER = {
  alias: 'New automation',
  trigger: [{ platform: 'state', entity_id: 'binary_sensor.example', to: 'on' }],
  condition: [],
  action: [{ service: 'light.turn_on', target: { entity_id: 'light.example' } }],
};
