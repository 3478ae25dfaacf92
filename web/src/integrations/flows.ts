import { z } from 'zod';
import { ConfigFlowResult, FlowHandlers } from '@smarthome/protocol/config-flow';
import { ConfigEntry } from '@smarthome/protocol/devices';
import { Edge } from '@smarthome/protocol/edges';
import { api } from '../api/http.ts';

/**
 * The config-flow and config-entry calls of the Integrations page. The same paths serve the
 * cloud (which relays to the chosen edge: `edge_id`) and an edge's local API (no edge_id).
 */
export type FlowResult = z.infer<typeof ConfigFlowResult>;
export type Handler = z.infer<typeof FlowHandlers>[number];
export type Entry = z.infer<typeof ConfigEntry>;
export type Home = z.infer<typeof Edge>;

const query = (edgeId: number | null) => (edgeId === null ? '' : `?edge_id=${edgeId}`);

/** The homes a flow can run on (cloud): the scope's paired home edges. */
export async function homes(): Promise<Home[]> {
  const all = await api('GET', '/v1/edges', { schema: z.array(Edge) });
  return all.filter((e) => e.location === 'home' && e.status !== 'revoked');
}

export const handlers = (edgeId: number | null) =>
  api('GET', `/v1/config_flow/handlers${query(edgeId)}`, { schema: FlowHandlers });

export const entries = () => api('GET', '/v1/config_entries', { schema: z.array(ConfigEntry) });

export const removeEntry = (entry: Entry) =>
  api('DELETE', `/v1/config_entries/${entry.id}${query(entry.edge_id ?? null)}`);

export const startFlow = (handler: string, edgeId: number | null) =>
  api('POST', '/v1/config_flow', {
    body: edgeId === null ? { handler } : { handler, edge_id: edgeId },
    schema: ConfigFlowResult,
  });

export const advanceFlow = (flowId: string, input: Record<string, unknown>) =>
  api('POST', `/v1/config_flow/${encodeURIComponent(flowId)}/advance`, { body: input, schema: ConfigFlowResult });

/** A flow's current step or how it ended (an edge's local API: after its OAuth callback finished the flow). */
export const readFlow = (flowId: string) =>
  api('GET', `/v1/config_flow/${encodeURIComponent(flowId)}`, { schema: ConfigFlowResult });

export const abortFlow = (flowId: string) => api('DELETE', `/v1/config_flow/${encodeURIComponent(flowId)}`);
