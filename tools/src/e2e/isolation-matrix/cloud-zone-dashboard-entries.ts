import { EVERYONE, NOT_M, NOT_X, type Entry } from './types.ts';

/** Matrix entries of zones and dashboards. */

const zoneBody = { name: 'mx pwned', icon: 'mdi:skull', latitude: 1, longitude: 1, radius: 1 };

export const ZONE_DASHBOARD_ENTRIES: Record<string, Entry> = {
  'POST /v1/zones': {
    probes: (x) => [
      {
        what: "O's zones",
        path: '/v1/zones',
        body: zoneBody,
        deny: ['B@O'],
        snapshot: () => x.read('A@O', '/v1/zones'),
      },
    ],
  },
  'GET /v1/zones': { lists: () => [{ path: '/v1/zones', sees: ['M', 'mx M zone'] }] },
  'GET /v1/zones/{id}': {
    probes: (x) => [
      {
        what: "A's zone",
        path: `/v1/zones/${x.w.a.zone}`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: () => x.read('A', `/v1/zones/${x.w.a.zone}`),
      },
      {
        what: "O's zone",
        path: `/v1/zones/${x.w.o.zone}`,
        deny: ['foreign'],
        allow: ['A@O', 'M@O', 'V@O', 'C@O'],
        snapshot: () => x.read('A@O', `/v1/zones/${x.w.o.zone}`),
      },
      {
        what: "M's zone",
        path: `/v1/zones/${x.w.m.zone}`,
        deny: NOT_M,
        allow: ['M'],
        snapshot: () => x.read('M', `/v1/zones/${x.w.m.zone}`),
      },
      {
        what: "O's zone made by X",
        path: `/v1/zones/${x.w.xMadeForO.zone}`,
        deny: ['foreign'],
        allow: ['A@O', 'M@O'],
        snapshot: () => x.read('A@O', `/v1/zones/${x.w.xMadeForO.zone}`),
      },
    ],
  },
  'PATCH /v1/zones/{id}': {
    probes: (x) => [
      {
        what: "A's zone",
        path: `/v1/zones/${x.w.a.zone}`,
        body: { radius: 1 },
        deny: EVERYONE,
        snapshot: () => x.read('A', `/v1/zones/${x.w.a.zone}`),
      },
      {
        what: "O's zone",
        path: `/v1/zones/${x.w.o.zone}`,
        body: { radius: 1 },
        deny: EVERYONE,
        snapshot: () => x.read('A@O', `/v1/zones/${x.w.o.zone}`),
      },
      {
        what: "M's zone",
        path: `/v1/zones/${x.w.m.zone}`,
        body: { radius: 1 },
        deny: NOT_M,
        snapshot: () => x.read('M', `/v1/zones/${x.w.m.zone}`),
      },
      {
        what: "O's zone made by X",
        path: `/v1/zones/${x.w.xMadeForO.zone}`,
        body: { radius: 1 },
        deny: EVERYONE,
        snapshot: () => x.read('A@O', `/v1/zones/${x.w.xMadeForO.zone}`),
      },
    ],
  },
  'DELETE /v1/zones/{id}': {
    probes: (x) => [
      {
        what: "A's zone",
        path: `/v1/zones/${x.w.a.zone}`,
        deny: EVERYONE,
        snapshot: () => x.read('A', `/v1/zones/${x.w.a.zone}`),
      },
      {
        what: "O's zone",
        path: `/v1/zones/${x.w.o.zone}`,
        deny: EVERYONE,
        snapshot: () => x.read('A@O', `/v1/zones/${x.w.o.zone}`),
      },
      {
        what: "M's zone",
        path: `/v1/zones/${x.w.m.zone}`,
        deny: NOT_M,
        snapshot: () => x.read('M', `/v1/zones/${x.w.m.zone}`),
      },
      {
        what: "O's zone made by X",
        path: `/v1/zones/${x.w.xMadeForO.zone}`,
        deny: EVERYONE,
        snapshot: () => x.read('A@O', `/v1/zones/${x.w.xMadeForO.zone}`),
      },
    ],
  },

  'PUT /v1/ui-dashboard': {
    probes: (x) => {
      const board = (id: number, org?: boolean) => () => x.read(org ? 'A@O' : 'A', `/v1/ui-dashboard/${id}`);
      return [
        {
          what: "A's private board",
          path: '/v1/ui-dashboard',
          body: { id: x.w.a.privateBoard, name: 'mx pwned', config: { views: [] } },
          deny: EVERYONE,
          snapshot: board(x.w.a.privateBoard),
        },
        // V may view it, C may "control" it: neither may change it
        {
          what: "A's shared board",
          path: '/v1/ui-dashboard',
          body: { id: x.w.a.sharedBoard, name: 'mx pwned', config: { views: [] } },
          deny: EVERYONE,
          snapshot: board(x.w.a.sharedBoard),
        },
        {
          what: "O's board",
          path: '/v1/ui-dashboard',
          body: { id: x.w.o.board, name: 'mx pwned', config: { views: [] } },
          deny: EVERYONE,
          snapshot: board(x.w.o.board, true),
        },
        {
          what: "M's board",
          path: '/v1/ui-dashboard',
          body: { id: x.w.m.board, name: 'mx pwned', config: { views: [] } },
          deny: NOT_M,
          snapshot: () => x.read('M', `/v1/ui-dashboard/${x.w.m.board}`),
        },
        {
          what: "O's board made by X",
          path: '/v1/ui-dashboard',
          body: { id: x.w.xMadeForO.board, name: 'mx pwned', config: { views: [] } },
          deny: EVERYONE,
          snapshot: board(x.w.xMadeForO.board, true),
        },
        {
          what: "X's board (shared into O before X left)",
          path: '/v1/ui-dashboard',
          body: { id: x.w.xBoard, name: 'mx pwned', config: { views: [] } },
          deny: NOT_X,
          snapshot: () => x.read('X', `/v1/ui-dashboard/${x.w.xBoard}`),
        },
        // without an id, a name replaces the scope's board of that name: in O, admins only
        {
          what: "O's board by name",
          path: '/v1/ui-dashboard',
          body: { name: 'mx O board', config: { views: [] } },
          deny: ['B@O', 'M@O', 'V@O', 'C@O'],
          snapshot: board(x.w.o.board, true),
        },
      ];
    },
  },
  'GET /v1/ui-dashboard': { lists: () => [{ path: '/v1/ui-dashboard', sees: ['V', 'mx A shared board'] }] },
  'GET /v1/ui-dashboard/{id}': {
    probes: (x) => [
      {
        what: "A's private board",
        path: `/v1/ui-dashboard/${x.w.a.privateBoard}`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: () => x.read('A', `/v1/ui-dashboard/${x.w.a.privateBoard}`),
      },
      {
        what: "A's shared board",
        path: `/v1/ui-dashboard/${x.w.a.sharedBoard}`,
        deny: ['foreign', 'member'],
        allow: ['A', 'V', 'V@O', 'C', 'C@O'],
        snapshot: () => x.read('A', `/v1/ui-dashboard/${x.w.a.sharedBoard}`),
      },
      {
        what: "O's board",
        path: `/v1/ui-dashboard/${x.w.o.board}`,
        deny: ['foreign'],
        allow: ['A@O', 'M@O'],
        snapshot: () => x.read('A@O', `/v1/ui-dashboard/${x.w.o.board}`),
      },
      {
        what: "M's board",
        path: `/v1/ui-dashboard/${x.w.m.board}`,
        deny: NOT_M,
        allow: ['M'],
        snapshot: () => x.read('M', `/v1/ui-dashboard/${x.w.m.board}`),
      },
      {
        what: "O's board made by X",
        path: `/v1/ui-dashboard/${x.w.xMadeForO.board}`,
        deny: ['foreign'],
        allow: ['A@O', 'M@O'],
        snapshot: () => x.read('A@O', `/v1/ui-dashboard/${x.w.xMadeForO.board}`),
      },
      {
        what: "X's board (shared into O before X left)",
        path: `/v1/ui-dashboard/${x.w.xBoard}`,
        deny: NOT_X,
        allow: ['X'],
        snapshot: () => x.read('X', `/v1/ui-dashboard/${x.w.xBoard}`),
      },
    ],
  },
  'DELETE /v1/ui-dashboard/{id}': {
    probes: (x) => [
      {
        what: "A's private board",
        path: `/v1/ui-dashboard/${x.w.a.privateBoard}`,
        deny: EVERYONE,
        snapshot: () => x.read('A', `/v1/ui-dashboard/${x.w.a.privateBoard}`),
      },
      {
        what: "A's shared board",
        path: `/v1/ui-dashboard/${x.w.a.sharedBoard}`,
        deny: EVERYONE,
        snapshot: () => x.read('A', `/v1/ui-dashboard/${x.w.a.sharedBoard}`),
      },
      {
        what: "O's board",
        path: `/v1/ui-dashboard/${x.w.o.board}`,
        deny: EVERYONE,
        snapshot: () => x.read('A@O', `/v1/ui-dashboard/${x.w.o.board}`),
      },
      {
        what: "M's board",
        path: `/v1/ui-dashboard/${x.w.m.board}`,
        deny: NOT_M,
        snapshot: () => x.read('M', `/v1/ui-dashboard/${x.w.m.board}`),
      },
      {
        what: "O's board made by X",
        path: `/v1/ui-dashboard/${x.w.xMadeForO.board}`,
        deny: EVERYONE,
        snapshot: () => x.read('A@O', `/v1/ui-dashboard/${x.w.xMadeForO.board}`),
      },
    ],
  },
};
