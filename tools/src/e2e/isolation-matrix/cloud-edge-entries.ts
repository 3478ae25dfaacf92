import type { ActorName } from './world.ts';
import { EVERYONE, NOT_M, type Ctx, type Entry, type Probe } from './types.ts';

/** Matrix entries of transfers, VoIP accounts, edges (as the cloud sees them) and billing. */

export const EDGE_BILLING_ENTRIES: Record<string, Entry> = {
  'POST /v1/transfers': {
    // contract.md: offering a resource the caller does not own → 400
    probes: (x) => {
      const offer = (what: string, type: string, id: number, owner: ActorName, deny = EVERYONE): Probe => ({
        what,
        path: '/v1/transfers',
        body: { to_email: x.w.users.R.email, resource_type: type, resource_id: String(id) },
        deny,
        refusals: [400],
        snapshot: async () => [
          await x.read(owner, '/v1/transfers'),
          await x.read(owner, `/v1/${type === 'zone' ? 'zones' : 'ui-dashboard'}/${id}`),
        ],
      });
      return [
        offer("A's zone", 'zone', x.w.a.zone, 'A'),
        offer("O's zone", 'zone', x.w.o.zone, 'A@O'),
        offer("A's shared board", 'ui_dashboard', x.w.a.sharedBoard, 'A'),
        offer("O's board", 'ui_dashboard', x.w.o.board, 'A@O'),
        offer("M's zone", 'zone', x.w.m.zone, 'M', NOT_M),
        offer("M's board", 'ui_dashboard', x.w.m.board, 'M', NOT_M),
        offer("O's zone made by X", 'zone', x.w.xMadeForO.zone, 'A@O'),
        offer("O's board made by X", 'ui_dashboard', x.w.xMadeForO.board, 'A@O'),
      ];
    },
  },
  'GET /v1/transfers': { lists: () => [{ path: '/v1/transfers', sees: ['A', 'mx A transfer'] }] },
  ...Object.fromEntries(
    ['accept', 'decline', 'cancel'].map((action) => [
      `POST /v1/transfers/{id}/${action}`,
      {
        probes: (x: Ctx) => [
          {
            what: "A's transfer to R",
            path: `/v1/transfers/${x.w.a.transfer}/${action}`,
            deny: EVERYONE,
            snapshot: async () => [
              await x.read('A', '/v1/transfers'),
              await x.read('A', `/v1/zones/${x.w.a.transferZone}`),
            ],
          },
        ],
      } satisfies Entry,
    ]),
  ),

  'POST /v1/voip-accounts': {
    probes: (x) => [
      {
        what: "O's VoIP accounts",
        path: '/v1/voip-accounts',
        body: { name: 'mx pwned', server: 'sip.example.test', username: 'x', password: 'y' },
        deny: ['B@O'],
        snapshot: () => x.read('A@O', '/v1/voip-accounts'),
      },
    ],
  },
  'GET /v1/voip-accounts': { lists: () => [{ path: '/v1/voip-accounts', sees: ['A', 'mx A sip'] }] },
  'DELETE /v1/voip-accounts/{id}': {
    probes: (x) => [
      {
        what: "A's VoIP account",
        path: `/v1/voip-accounts/${x.w.a.voip}`,
        deny: EVERYONE,
        snapshot: () => x.read('A', '/v1/voip-accounts'),
      },
      {
        what: "O's VoIP account",
        path: `/v1/voip-accounts/${x.w.o.voip}`,
        deny: EVERYONE,
        snapshot: () => x.read('A@O', '/v1/voip-accounts'),
      },
      {
        what: "M's VoIP account",
        path: `/v1/voip-accounts/${x.w.m.voip}`,
        deny: NOT_M,
        snapshot: () => x.read('M', '/v1/voip-accounts'),
      },
    ],
  },

  'POST /v1/edges': {
    probes: (x) => [
      {
        what: "O's edges",
        path: '/v1/edges',
        body: { name: 'mx pwned' },
        deny: ['B@O'],
        snapshot: () => x.read('A@O', '/v1/edges'),
      },
    ],
  },
  'GET /v1/edges': { lists: () => [{ path: '/v1/edges', sees: ['A', 'mx A home'] }] },
  'GET /v1/edges/cloud-fleet': { lists: () => [{ path: '/v1/edges/cloud-fleet' }] },
  'GET /v1/edges/{id}': {
    probes: (x) => [
      {
        what: "A's edge",
        path: `/v1/edges/${x.w.edges.A.id}`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: () => x.read('A', `/v1/edges/${x.w.edges.A.id}`),
      },
      {
        what: "O's edge",
        path: `/v1/edges/${x.w.edges.O.id}`,
        deny: ['foreign'],
        allow: ['A@O', 'M', 'M@O'],
        snapshot: () => x.read('A@O', `/v1/edges/${x.w.edges.O.id}`),
      },
      {
        what: "M's edge",
        path: `/v1/edges/${x.w.m.edge}`,
        deny: NOT_M,
        allow: ['M'],
        snapshot: () => x.read('M', `/v1/edges/${x.w.m.edge}`),
      },
      {
        what: "O's edge made by X",
        path: `/v1/edges/${x.w.xMadeForO.edge}`,
        deny: ['foreign'],
        allow: ['A@O', 'M@O'],
        snapshot: () => x.read('A@O', `/v1/edges/${x.w.xMadeForO.edge}`),
      },
    ],
  },
  'DELETE /v1/edges/{id}': {
    probes: (x) => [
      {
        what: "A's edge",
        path: `/v1/edges/${x.w.edges.A.id}`,
        deny: EVERYONE,
        snapshot: () => x.read('A', `/v1/edges/${x.w.edges.A.id}`),
      },
      {
        what: "O's edge",
        path: `/v1/edges/${x.w.edges.O.id}`,
        deny: EVERYONE,
        snapshot: () => x.read('A@O', `/v1/edges/${x.w.edges.O.id}`),
      },
      {
        what: "M's edge",
        path: `/v1/edges/${x.w.m.edge}`,
        deny: NOT_M,
        snapshot: () => x.read('M', `/v1/edges/${x.w.m.edge}`),
      },
      {
        what: "O's edge made by X",
        path: `/v1/edges/${x.w.xMadeForO.edge}`,
        deny: EVERYONE,
        snapshot: () => x.read('A@O', `/v1/edges/${x.w.xMadeForO.edge}`),
      },
    ],
  },
  'POST /v1/edge/register-cloud': {
    exempt: 'self-scoped',
    reason:
      'fleet token only (a user token is 401); replicas belong to the fleet pseudo-user (cloud/src/edges/isolation.test.ts)',
  },
  'POST /v1/edge/heartbeat': {
    exempt: 'self-scoped',
    reason: 'edge token only: the token names the one edge it marks (cloud/src/edges/isolation.test.ts)',
  },

  'GET /v1/billing/usage': { lists: () => [{ path: '/v1/billing/usage' }] },
  'GET /v1/billing/subscriptions': {
    lists: (x) => [{ path: '/v1/billing/subscriptions', sees: ['A', x.w.a.subscription] }],
  },
  'GET /v1/billing/plans': { lists: () => [{ path: '/v1/billing/plans' }] },
  'GET /v2/smarthomes': {
    // a cursor is only a position: before every edge, it still pages through the caller's own
    lists: () => [
      { path: '/v2/smarthomes', sees: ['A', 'mx A home'] },
      { path: `/v2/smarthomes?limit=200&cursor=${Buffer.from('e:0').toString('base64url')}` },
    ],
  },
};
