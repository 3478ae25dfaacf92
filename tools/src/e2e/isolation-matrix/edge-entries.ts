import type { Edge } from '@smarthome/edge/edge';
import { ATTIC, DESK, HALL, MEDIA_URI, PORCH, type ActorName } from './world.ts';
import { EVERYONE, NOT_M, NOT_X, type Ctx, type Entry } from './types.ts';

/** Matrix entries of what lives on edges: devices, entities, services, config flows and entries, media, automations. */

/** Open flows have no read route: the edge's own count and the cloud's directory of them stand in. */
const flows = (x: Ctx, edge: Edge, edgeId: number) => async () => [
  edge.features.configFlows.flows.size,
  await x.w.cloud.sql('SELECT flow_id, edge_id, user_id FROM cloud_flows WHERE edge_id = ? ORDER BY flow_id', [edgeId]),
  await x.read('A', `/v1/config_entries?edge_id=${edgeId}`),
];
const automations = (x: Ctx, edgeId: number) => async () => {
  const list = (await x.read('A', `/v1/automations?edge_id=${edgeId}`)) as { id: string }[];
  return [list, ...(await Promise.all(list.map((a) => x.read('A', `/v1/automations/${a.id}`))))];
};
const entity =
  (x: Ctx, id: string, commands: string[], owner: ActorName = 'A') =>
  async () => [await x.read(owner, `/v1/entities/states/${id}`), [...commands]];
const automationBody = (edgeId?: number) => ({
  edge_id: edgeId,
  alias: 'mx pwned',
  trigger: [{ platform: 'webhook' }],
  action: [{ event: 'pwned' }],
});

export const EDGE_ENTRIES: Record<string, Entry> = {
  'GET /v1/devices': {
    lists: (x) => [
      { path: '/v1/devices', sees: ['A', 'MxAtticCo'] },
      { path: `/v1/devices?edge_id=${x.w.edges.A.id}` },
      { path: `/v1/devices?edge_id=${x.w.edges.O.id}`, sees: ['M', 'MxHallCo'] },
    ],
  },
  'GET /v1/devices/{id}': {
    probes: (x) => [
      // an entity share (V, C) does not open its device
      {
        what: "A's desk lamp device",
        path: `/v1/devices/${x.w.a.deskDevice}?edge_id=${x.w.edges.A.id}`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: () => x.read('A', `/v1/devices/${x.w.a.deskDevice}?edge_id=${x.w.edges.A.id}`),
      },
      {
        what: "O's hall lamp device",
        path: `/v1/devices/${x.w.o.hallDevice}?edge_id=${x.w.edges.O.id}`,
        deny: ['foreign'],
        allow: ['A', 'M', 'V@O'],
        snapshot: () => x.read('A', `/v1/devices/${x.w.o.hallDevice}?edge_id=${x.w.edges.O.id}`),
      },
    ],
  },
  'GET /v1/entities/states': { lists: () => [{ path: '/v1/entities/states', sees: ['V', DESK] }] },
  'GET /v1/entities/states/{entity_id}': {
    probes: (x) => [
      {
        what: ATTIC,
        path: `/v1/entities/states/${ATTIC}`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: entity(x, ATTIC, x.w.lamps.attic.commands),
      },
      {
        what: `${DESK} (shared)`,
        path: `/v1/entities/states/${DESK}`,
        deny: ['foreign', 'member'],
        allow: ['A', 'V', 'C'],
        snapshot: entity(x, DESK, x.w.lamps.desk.commands),
      },
      {
        what: HALL,
        path: `/v1/entities/states/${HALL}`,
        deny: ['foreign'],
        allow: ['A', 'M'],
        snapshot: entity(x, HALL, x.w.lamps.hall.commands),
      },
      {
        what: `${PORCH} (shared into O before X left)`,
        path: `/v1/entities/states/${PORCH}`,
        deny: NOT_X,
        allow: ['X'],
        snapshot: entity(x, PORCH, x.w.lamps.porch.commands, 'X'),
      },
    ],
  },
  'POST /v1/services/{domain}/{service}': {
    probes: (x) => [
      {
        what: ATTIC,
        path: '/v1/services/light/turn_on',
        body: { entity_id: ATTIC },
        deny: EVERYONE,
        snapshot: entity(x, ATTIC, x.w.lamps.attic.commands),
      },
      // V's share is view-only; C's allows control
      {
        what: `${DESK} (shared)`,
        path: '/v1/services/light/turn_on',
        body: { entity_id: DESK },
        deny: ['foreign', 'member', 'viewer'],
        snapshot: entity(x, DESK, x.w.lamps.desk.commands),
      },
      {
        what: HALL,
        path: '/v1/services/light/turn_on',
        body: { entity_id: HALL },
        deny: ['foreign'],
        snapshot: entity(x, HALL, x.w.lamps.hall.commands),
      },
      {
        what: `${PORCH} (shared into O before X left)`,
        path: '/v1/services/light/turn_on',
        body: { entity_id: PORCH },
        deny: NOT_X,
        snapshot: entity(x, PORCH, x.w.lamps.porch.commands, 'X'),
      },
      {
        what: `${HALL} with ${ATTIC}`,
        path: '/v1/services/light/turn_on',
        body: { entity_id: [HALL, ATTIC] },
        deny: EVERYONE,
        snapshot: async () => [
          await entity(x, HALL, x.w.lamps.hall.commands)(),
          await entity(x, ATTIC, x.w.lamps.attic.commands)(),
        ],
      },
    ],
  },
  'POST /v1/edges/{id}/mqtt-credentials': {
    probes: (x) => [
      // MQTT users have no read route: the edge's own list stands in
      {
        what: "A's edge",
        path: `/v1/edges/${x.w.edges.A.id}/mqtt-credentials`,
        deny: EVERYONE,
        snapshot: async () => x.w.edges.A.edge.listMqttUsers(),
      },
      {
        what: "O's edge",
        path: `/v1/edges/${x.w.edges.O.id}/mqtt-credentials`,
        deny: EVERYONE,
        snapshot: async () => x.w.edges.O.edge.listMqttUsers(),
      },
      // never connected: refused before any relay (a relay would answer 503)
      {
        what: "M's edge",
        path: `/v1/edges/${x.w.m.edge}/mqtt-credentials`,
        deny: NOT_M,
        snapshot: () => x.read('M', `/v1/edges/${x.w.m.edge}`),
      },
      {
        what: "O's edge made by X",
        path: `/v1/edges/${x.w.xMadeForO.edge}/mqtt-credentials`,
        deny: EVERYONE,
        snapshot: () => x.read('A@O', `/v1/edges/${x.w.xMadeForO.edge}`),
      },
    ],
  },
  'GET /v1/voice-assistant/endpoints': { lists: () => [{ path: '/v1/voice-assistant/endpoints', sees: ['A', ATTIC] }] },
  'PUT /v1/voice-assistant/endpoints/{entity_id}': {
    // exposure is each user's own choice: V, C (shared) and M (O's edge) may set theirs; A's stays as it is
    probes: (x) => [
      {
        what: ATTIC,
        path: `/v1/voice-assistant/endpoints/${ATTIC}`,
        body: { exposed: true },
        deny: EVERYONE,
        snapshot: () => x.read('A', '/v1/voice-assistant/endpoints'),
      },
      {
        what: DESK,
        path: `/v1/voice-assistant/endpoints/${DESK}`,
        body: { exposed: false },
        deny: ['foreign', 'member'],
        snapshot: () => x.read('A', '/v1/voice-assistant/endpoints'),
      },
      {
        what: HALL,
        path: `/v1/voice-assistant/endpoints/${HALL}`,
        body: { exposed: false },
        deny: ['foreign'],
        snapshot: () => x.read('A', '/v1/voice-assistant/endpoints'),
      },
    ],
  },
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
  // reads: nothing to snapshot
  'GET /v1/media-source/browse': {
    probes: (x) => [
      {
        what: "A's edge",
        path: `/v1/media-source/browse?edge_id=${x.w.edges.A.id}`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: async () => null,
      },
      {
        what: "O's edge",
        path: `/v1/media-source/browse?edge_id=${x.w.edges.O.id}&uri=${encodeURIComponent('media-source://demo')}`,
        deny: ['foreign'],
        allow: ['A@O', 'M@O'],
        snapshot: async () => null,
      },
    ],
  },
  'POST /v1/media-source/resolve': {
    probes: (x) => [
      {
        what: "A's edge",
        path: '/v1/media-source/resolve',
        body: { uri: MEDIA_URI, edge_id: x.w.edges.A.id },
        deny: EVERYONE,
        snapshot: async () => null,
      },
      {
        what: "O's edge",
        path: '/v1/media-source/resolve',
        body: { uri: MEDIA_URI, edge_id: x.w.edges.O.id },
        deny: ['foreign'],
        snapshot: async () => null,
      },
      {
        what: "M's edge",
        path: '/v1/media-source/resolve',
        body: { uri: MEDIA_URI, edge_id: x.w.m.edge },
        deny: NOT_M,
        snapshot: async () => null,
      },
      {
        what: "O's edge made by X",
        path: '/v1/media-source/resolve',
        body: { uri: MEDIA_URI, edge_id: x.w.xMadeForO.edge },
        deny: ['foreign'],
        snapshot: async () => null,
      },
    ],
  },
  'GET /v1/edges/{id}/media/{token}/{filename}': {
    // no Authorization: the edge's signature is. O's edge signed this path; A's edge must not honour it.
    probes: (x) => [
      {
        what: "O's signed media on A's edge",
        path: `/v1/edges/${x.w.edges.A.id}/media/${x.w.o.media.token}/${x.w.o.media.file}`,
        deny: ['foreign'],
        noneMay: "a signature of O's edge is never valid on A's edge",
        snapshot: async () => null,
      },
    ],
  },
  'POST /v1/webhooks/store-iap': {
    exempt: 'public',
    reason: 'app-store notifications: the JWS signature inside is the authorization (cloud/src/store-iap)',
  },

  'GET /v1/automations': {
    lists: (x) => [
      { path: '/v1/automations', sees: ['A', 'mx A automation'] },
      { path: `/v1/automations?edge_id=${x.w.edges.A.id}` },
    ],
  },
  'POST /v1/automations': {
    probes: (x) => [
      {
        what: "A's edge",
        path: '/v1/automations',
        body: automationBody(x.w.edges.A.id),
        deny: EVERYONE,
        snapshot: automations(x, x.w.edges.A.id),
      },
      {
        what: "O's edge",
        path: '/v1/automations',
        body: automationBody(x.w.edges.O.id),
        deny: EVERYONE,
        snapshot: automations(x, x.w.edges.O.id),
      },
      {
        what: "O's edge made by X",
        path: '/v1/automations',
        body: automationBody(x.w.xMadeForO.edge),
        deny: EVERYONE,
        snapshot: () => x.read('A@O', `/v1/automations?edge_id=${x.w.xMadeForO.edge}`),
      },
      {
        what: "M's edge",
        path: '/v1/automations',
        body: automationBody(x.w.m.edge),
        deny: NOT_M,
        snapshot: () => x.read('M', `/v1/automations?edge_id=${x.w.m.edge}`),
      },
    ],
  },
  'GET /v1/automations/{id}': {
    probes: (x) => [
      {
        what: "A's automation",
        path: `/v1/automations/${x.w.a.automation.id}`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: automations(x, x.w.edges.A.id),
      },
      {
        what: "O's automation",
        path: `/v1/automations/${x.w.o.automation.id}`,
        deny: ['foreign'],
        allow: ['A@O', 'M', 'M@O'],
        snapshot: automations(x, x.w.edges.O.id),
      },
    ],
  },
  'PUT /v1/automations/{id}': {
    probes: (x) => [
      {
        what: "A's automation",
        path: `/v1/automations/${x.w.a.automation.id}`,
        body: automationBody(),
        deny: EVERYONE,
        snapshot: automations(x, x.w.edges.A.id),
      },
      {
        what: "O's automation",
        path: `/v1/automations/${x.w.o.automation.id}`,
        body: automationBody(),
        deny: EVERYONE,
        snapshot: automations(x, x.w.edges.O.id),
      },
    ],
  },
  'DELETE /v1/automations/{id}': {
    probes: (x) => [
      {
        what: "A's automation",
        path: `/v1/automations/${x.w.a.automation.id}`,
        deny: EVERYONE,
        snapshot: automations(x, x.w.edges.A.id),
      },
      {
        what: "O's automation",
        path: `/v1/automations/${x.w.o.automation.id}`,
        deny: EVERYONE,
        snapshot: automations(x, x.w.edges.O.id),
      },
    ],
  },
  'GET /v1/automations/{id}/traces': {
    probes: (x) => [
      {
        what: "A's automation",
        path: `/v1/automations/${x.w.a.automation.id}/traces`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: automations(x, x.w.edges.A.id),
      },
      {
        what: "O's automation",
        path: `/v1/automations/${x.w.o.automation.id}/traces`,
        deny: ['foreign'],
        allow: ['A@O', 'M@O'],
        snapshot: automations(x, x.w.edges.O.id),
      },
    ],
  },
  'POST /v1/automations/{id}/trigger': {
    // a refused run leaves no trace: the owner's traces are part of the snapshot
    probes: (x) => [
      {
        what: "A's automation",
        path: `/v1/automations/${x.w.a.automation.id}/trigger`,
        deny: EVERYONE,
        snapshot: async () => [
          await automations(x, x.w.edges.A.id)(),
          await x.read('A', `/v1/automations/${x.w.a.automation.id}/traces`),
        ],
      },
      {
        what: "O's automation",
        path: `/v1/automations/${x.w.o.automation.id}/trigger`,
        deny: EVERYONE,
        snapshot: async () => [
          await automations(x, x.w.edges.O.id)(),
          await x.read('A@O', `/v1/automations/${x.w.o.automation.id}/traces`),
        ],
      },
    ],
  },
  'POST /v1/automations/webhook/{webhook_id}': {
    exempt: 'public',
    reason: 'the webhook_id (256 random bits) in the path is the authorization, by design (portal-api.md)',
  },
  'GET /v1/automation/cloud-bootstrap': {
    lists: () => [{ path: '/v1/automation/cloud-bootstrap', sees: ['A', 'mx-secret-A'] }],
  },
};
