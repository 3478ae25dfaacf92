import { ATTIC, DESK, HALL, PORCH, type ActorName } from './world.ts';
import { EVERYONE, NOT_M, NOT_X, type Ctx, type Entry } from './types.ts';

/** Matrix entries of devices, entities and what acts on them: services, MQTT credentials, voice-assistant exposure. */

const entity =
  (x: Ctx, id: string, commands: string[], owner: ActorName = 'A') =>
  async () => [await x.read(owner, `/v1/entities/states/${id}`), [...commands]];

export const EDGE_DEVICE_ENTRIES: Record<string, Entry> = {
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
};
