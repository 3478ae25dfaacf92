import type { Edge } from '@smarthome/edge/edge';
import { EVERYONE, NOT_M, type Ctx, type Entry } from './types.ts';

/** Matrix entries of integrations on edges: config flows and config entries. */

/** Open flows have no read route: the edge's own count and the cloud's directory of them stand in. */
const flows = (x: Ctx, edge: Edge, edgeId: number) => async () => [
  edge.features.configFlows.flows.size,
  await x.w.cloud.sql('SELECT flow_id, edge_id, user_id FROM cloud_flows WHERE edge_id = ? ORDER BY flow_id', [edgeId]),
  await x.read('A', `/v1/config_entries?edge_id=${edgeId}`),
];

export const EDGE_CONFIG_ENTRIES: Record<string, Entry> = {
  'GET /v1/config_flow/handlers': {
    probes: (x) => [
      {
        what: "A's edge",
        path: `/v1/config_flow/handlers?edge_id=${x.w.edges.A.id}`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: flows(x, x.w.edges.A.edge, x.w.edges.A.id),
      },
      {
        what: "O's edge",
        path: `/v1/config_flow/handlers?edge_id=${x.w.edges.O.id}`,
        deny: ['foreign'],
        allow: ['A@O', 'M', 'M@O'],
        snapshot: flows(x, x.w.edges.O.edge, x.w.edges.O.id),
      },
    ],
  },
  'POST /v1/config_flow': {
    probes: (x) => [
      {
        what: "A's edge",
        path: '/v1/config_flow',
        body: { handler: 'demo', edge_id: x.w.edges.A.id },
        deny: EVERYONE,
        snapshot: flows(x, x.w.edges.A.edge, x.w.edges.A.id),
      },
      {
        what: "O's edge",
        path: '/v1/config_flow',
        body: { handler: 'demo', edge_id: x.w.edges.O.id },
        deny: EVERYONE,
        snapshot: flows(x, x.w.edges.O.edge, x.w.edges.O.id),
      },
      {
        what: "O's edge made by X",
        path: '/v1/config_flow',
        body: { handler: 'demo', edge_id: x.w.xMadeForO.edge },
        deny: EVERYONE,
        snapshot: () => x.w.cloud.sql('SELECT flow_id FROM cloud_flows WHERE edge_id = ?', [x.w.xMadeForO.edge]),
      },
      {
        what: "M's edge",
        path: '/v1/config_flow',
        body: { handler: 'demo', edge_id: x.w.m.edge },
        deny: NOT_M,
        snapshot: () => x.w.cloud.sql('SELECT flow_id FROM cloud_flows WHERE edge_id = ?', [x.w.m.edge]),
      },
    ],
  },
  'POST /v1/config_flow/{flowId}/advance': {
    // only the user who started a flow may continue it
    probes: (x) => [
      {
        what: "A's open flow on A's edge",
        path: `/v1/config_flow/${x.w.a.flow}/advance`,
        body: { name: 'mx pwned' },
        deny: EVERYONE,
        snapshot: flows(x, x.w.edges.A.edge, x.w.edges.A.id),
      },
      {
        what: "A's open flow on O's edge",
        path: `/v1/config_flow/${x.w.o.flow}/advance`,
        body: { name: 'mx pwned' },
        deny: EVERYONE,
        snapshot: flows(x, x.w.edges.O.edge, x.w.edges.O.id),
      },
    ],
  },
  'DELETE /v1/config_flow/{flowId}': {
    probes: (x) => [
      {
        what: "A's open flow on A's edge",
        path: `/v1/config_flow/${x.w.a.flow}`,
        deny: EVERYONE,
        snapshot: flows(x, x.w.edges.A.edge, x.w.edges.A.id),
      },
      {
        what: "A's open flow on O's edge",
        path: `/v1/config_flow/${x.w.o.flow}`,
        deny: EVERYONE,
        snapshot: flows(x, x.w.edges.O.edge, x.w.edges.O.id),
      },
    ],
  },
  'GET /v1/config_entries': {
    lists: (x) => [
      { path: '/v1/config_entries', sees: ['A', 'mx A demo'] },
      { path: `/v1/config_entries?edge_id=${x.w.edges.A.id}` },
    ],
  },
  'DELETE /v1/config_entries/{id}': {
    probes: (x) => [
      {
        what: "A's entry",
        path: `/v1/config_entries/${x.w.a.entry}?edge_id=${x.w.edges.A.id}`,
        deny: EVERYONE,
        snapshot: flows(x, x.w.edges.A.edge, x.w.edges.A.id),
      },
      {
        what: "A's entry (no edge_id)",
        path: `/v1/config_entries/${x.w.a.entry}`,
        deny: EVERYONE,
        snapshot: async () => [
          await flows(x, x.w.edges.A.edge, x.w.edges.A.id)(),
          await flows(x, x.w.edges.O.edge, x.w.edges.O.id)(),
        ],
      },
      {
        what: "O's entry",
        path: `/v1/config_entries/${x.w.o.entry}?edge_id=${x.w.edges.O.id}`,
        deny: EVERYONE,
        snapshot: flows(x, x.w.edges.O.edge, x.w.edges.O.id),
      },
    ],
  },
};
