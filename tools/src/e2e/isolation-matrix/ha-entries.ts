import { ATTIC, DESK, HALL, PORCH, type ActorName } from './world.ts';
import { EVERYONE, NOT_X, type Ctx, type Entry } from './types.ts';

/**
 * Matrix entries of Home Assistant's REST API on the cloud (/api/*, cloud/src/ha-api): the
 * caller's personal scope (X-Organization-Id is not read), the same grants as /v1. HA's
 * refusals: 404 {message} for an entity not in scope, 400 {message} for a service call on one,
 * 401 {message} for a view-only share. History and logbook are lists: each caller gets the rows of
 * what it may view, relayed from the edges.
 */
const entity =
  (x: Ctx, id: string, commands: string[], owner: ActorName = 'A') =>
  async () => [await x.read(owner, `/v1/entities/states/${id}`), [...commands]];
const HA_REFUSALS = [400, 401];

export const HA_ENTRIES: Record<string, Entry> = {
  'GET /api/': { exempt: 'self-scoped', reason: 'answers "API running." to any valid token; names nothing' },
  'GET /api/config': { lists: () => [{ path: '/api/config' }] },
  'GET /api/states': { lists: () => [{ path: '/api/states', sees: ['V', DESK] }] },
  'GET /api/states/{entity_id}': {
    probes: (x) => [
      {
        what: ATTIC,
        path: `/api/states/${ATTIC}`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: entity(x, ATTIC, x.w.lamps.attic.commands),
      },
      {
        what: `${DESK} (shared)`,
        path: `/api/states/${DESK}`,
        deny: ['foreign', 'member'],
        allow: ['A', 'V', 'C'],
        snapshot: entity(x, DESK, x.w.lamps.desk.commands),
      },
      {
        what: HALL,
        path: `/api/states/${HALL}`,
        deny: ['foreign'],
        allow: ['A', 'M'],
        snapshot: entity(x, HALL, x.w.lamps.hall.commands),
      },
      {
        what: `${PORCH} (shared into O before X left)`,
        path: `/api/states/${PORCH}`,
        deny: NOT_X,
        allow: ['X'],
        snapshot: entity(x, PORCH, x.w.lamps.porch.commands, 'X'),
      },
    ],
  },
  'GET /api/services': { lists: () => [{ path: '/api/services' }] },
  'POST /api/services/{domain}/{service}': {
    probes: (x) => [
      {
        what: ATTIC,
        path: '/api/services/light/turn_on',
        body: { entity_id: ATTIC },
        deny: EVERYONE,
        refusals: HA_REFUSALS,
        snapshot: entity(x, ATTIC, x.w.lamps.attic.commands),
      },
      // V's share is view-only (401); C's allows control
      {
        what: `${DESK} (shared)`,
        path: '/api/services/light/turn_on',
        body: { entity_id: DESK },
        deny: ['foreign', 'member', 'viewer'],
        refusals: HA_REFUSALS,
        snapshot: entity(x, DESK, x.w.lamps.desk.commands),
      },
      {
        what: HALL,
        path: '/api/services/light/turn_on',
        body: { entity_id: HALL },
        deny: ['foreign'],
        refusals: HA_REFUSALS,
        snapshot: entity(x, HALL, x.w.lamps.hall.commands),
      },
      {
        what: `${PORCH} (shared into O before X left)`,
        path: '/api/services/light/turn_on',
        body: { entity_id: PORCH },
        deny: NOT_X,
        refusals: HA_REFUSALS,
        snapshot: entity(x, PORCH, x.w.lamps.porch.commands, 'X'),
      },
      {
        what: `${HALL} with ${ATTIC}`,
        path: '/api/services/light/turn_on',
        body: { entity_id: [HALL, ATTIC] },
        deny: EVERYONE,
        refusals: HA_REFUSALS,
        snapshot: async () => [
          await entity(x, HALL, x.w.lamps.hall.commands)(),
          await entity(x, ATTIC, x.w.lamps.attic.commands)(),
        ],
      },
    ],
  },
  // history and logbook relayed to the edges in scope, for the entities the caller may view
  'GET /api/history/period': {
    lists: () => [
      { path: `/api/history/period?filter_entity_id=${[DESK, ATTIC, HALL, PORCH].join(',')}`, sees: ['V', DESK] },
    ],
  },
  'GET /api/history/period/{timestamp}': {
    lists: () => [
      {
        path: `/api/history/period/${new Date(Date.now() - 86_400_000).toISOString()}?filter_entity_id=${[DESK, ATTIC, HALL, PORCH].join(',')}`,
        sees: ['A', ATTIC],
      },
    ],
  },
  'GET /api/logbook': { lists: () => [{ path: '/api/logbook' }] },
  'GET /api/logbook/{timestamp}': {
    lists: () => [{ path: `/api/logbook/${new Date(Date.now() - 86_400_000).toISOString()}` }],
  },
  'GET /api/events': { lists: () => [{ path: '/api/events' }] },
  'POST /api/template': {
    exempt: 'self-scoped',
    reason:
      "renders over the states the caller may view: another's entity reads as unknown (cloud/src/ha-api/relayed.test.ts)",
  },
  'POST /api/states/{entity_id}': {
    exempt: 'self-scoped',
    reason:
      "an entity in scope needs control (view-only 401); an id out of scope is created on the caller's own administered edge, never on another's (relayed.test.ts, ha-cloud.test.ts)",
  },
  'DELETE /api/states/{entity_id}': {
    probes: (x) => [
      {
        what: ATTIC,
        path: `/api/states/${ATTIC}`,
        deny: EVERYONE,
        refusals: HA_REFUSALS,
        snapshot: entity(x, ATTIC, x.w.lamps.attic.commands),
      },
      {
        what: `${DESK} (shared)`,
        path: `/api/states/${DESK}`,
        deny: ['foreign', 'member', 'viewer'],
        refusals: HA_REFUSALS,
        snapshot: entity(x, DESK, x.w.lamps.desk.commands),
      },
      {
        what: HALL,
        path: `/api/states/${HALL}`,
        deny: ['foreign'],
        refusals: HA_REFUSALS,
        snapshot: entity(x, HALL, x.w.lamps.hall.commands),
      },
      {
        what: `${PORCH} (shared into O before X left)`,
        path: `/api/states/${PORCH}`,
        deny: NOT_X,
        refusals: HA_REFUSALS,
        snapshot: entity(x, PORCH, x.w.lamps.porch.commands, 'X'),
      },
    ],
  },
  'POST /api/events/{event_type}': {
    exempt: 'self-scoped',
    reason: "fires only on the edges the caller owns or administers; names no one else's resource (401 without one)",
  },
  'POST /api/config/core/check_config': {
    exempt: 'self-scoped',
    reason: 'answers "valid" to any valid token; names nothing',
  },
};
