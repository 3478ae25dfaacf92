import { ATTIC, type ActorName } from './world.ts';
import { EVERYONE, NOT_M, NOT_X, type Ctx, type Entry, type Probe } from './types.ts';

/** Matrix entries of the cloud's own resources: account, organizations, zones, dashboards, transfers, VoIP, edges, billing. */

const org = (x: Ctx) => async () =>
  Promise.all(['', '/members', '/shares', '/invitations'].map((p) => x.read('A', `/v1/organizations/${x.w.O}${p}`)));
const zoneBody = { name: 'mx pwned', icon: 'mdi:skull', latitude: 1, longitude: 1, radius: 1 };

export const CLOUD_ENTRIES: Record<string, Entry> = {
  'GET /healthz': { exempt: 'public', reason: 'health check: no data, no resource' },
  'POST /v1/auth/register': { exempt: 'public', reason: 'creates a new account; names nothing that exists' },
  'POST /v1/auth/token': {
    exempt: 'public',
    reason: 'the credentials in the body are the authorization (throttling and refresh-token reuse: cloud/src/auth)',
  },
  'GET /v1/account': { lists: () => [{ path: '/v1/account', sees: ['A', 'mx O org'] }] },
  'POST /v1/account/tokens': {
    exempt: 'self-scoped',
    reason: "creates a token of the caller's own; the body names nothing else",
  },
  'GET /v1/account/tokens': { lists: () => [{ path: '/v1/account/tokens', sees: ['A', 'mx A pat'] }] },
  'DELETE /v1/account/tokens/{id}': {
    probes: (x) => [
      {
        what: "A's PAT",
        path: `/v1/account/tokens/${x.w.a.pat}`,
        deny: EVERYONE,
        snapshot: () => x.read('A', '/v1/account/tokens'),
      },
      {
        what: "M's PAT",
        path: `/v1/account/tokens/${x.w.m.pat}`,
        deny: NOT_M,
        snapshot: () => x.read('M', '/v1/account/tokens'),
      },
    ],
  },
  'POST /v1/account/mfa/backup-codes': {
    exempt: 'self-scoped',
    reason: "replaces the caller's own codes, verified with the caller's own password",
  },
  'POST /v1/account/password': {
    exempt: 'self-scoped',
    reason: "changes the caller's own password, verified with the current one",
  },
  'POST /v1/auth/verify-email': {
    exempt: 'public',
    reason:
      'the single-use 256-bit token from the mail is the authorization; it names the address it was sent to, nothing else',
  },
  'POST /v1/auth/password-reset': {
    exempt: 'public',
    reason:
      'names only an e-mail address; the answer is the same whether it has an account (mail goes only to that address)',
  },
  'POST /v1/auth/password-reset/confirm': {
    exempt: 'public',
    reason: 'the single-use 256-bit token from the mail is the authorization',
  },
  'POST /v1/account/email/verification': {
    exempt: 'self-scoped',
    reason: "sends a verification mail to the caller's own address",
  },
  'POST /v1/account/mfa/totp': {
    exempt: 'self-scoped',
    reason: "enrols the caller's own TOTP, verified with the caller's own password",
  },
  'POST /v1/account/mfa/totp/confirm': {
    exempt: 'self-scoped',
    reason: "confirms the caller's own pending enrolment with a code of its secret",
  },
  'POST /v1/account/mfa/totp/disable': {
    exempt: 'self-scoped',
    reason: "disables the caller's own TOTP, verified with the password and a code",
  },
  'PUT /v1/account/notifications': { exempt: 'self-scoped', reason: "sets the caller's own mail preferences" },
  'GET /v1/account/sessions': {
    exempt: 'self-scoped',
    reason: "lists the caller's own sessions (sessions.test.ts: another user's are not listed)",
  },
  'DELETE /v1/account/sessions/{id}': {
    exempt: 'self-scoped',
    reason: "looks the id up among the caller's own live sessions; another user's answers 404 (sessions.test.ts)",
  },
  'DELETE /v1/account/sessions': { exempt: 'self-scoped', reason: "ends the caller's own other sessions" },
  'POST /v1/account/email': {
    exempt: 'self-scoped',
    reason: "changes the caller's own address, verified with the current password",
  },

  'POST /v1/organizations': {
    exempt: 'self-scoped',
    reason: 'creates a new organization whose only member is the caller',
  },
  'GET /v1/organizations': { lists: () => [{ path: '/v1/organizations', sees: ['A', 'mx O org'] }] },
  'GET /v1/organizations/{id}': {
    probes: (x) => [
      {
        what: 'O',
        path: `/v1/organizations/${x.w.O}`,
        deny: ['foreign'],
        allow: ['A', 'M', 'V', 'C'],
        snapshot: org(x),
      },
    ],
  },
  'PATCH /v1/organizations/{id}': {
    probes: (x) => [
      {
        what: 'O',
        path: `/v1/organizations/${x.w.O}`,
        body: { name: 'mx pwned', description: 'pwned' },
        deny: EVERYONE,
        snapshot: org(x),
      },
    ],
  },
  'PATCH /v1/organizations/{id}/branding': {
    probes: (x) => [
      {
        what: 'O',
        path: `/v1/organizations/${x.w.O}/branding`,
        body: { description: 'pwned', branding: { color: '#000000' } },
        deny: EVERYONE,
        snapshot: org(x),
      },
    ],
  },
  'GET /v1/organizations/{id}/members': {
    probes: (x) => [
      {
        what: "O's members",
        path: `/v1/organizations/${x.w.O}/members`,
        deny: ['foreign'],
        allow: ['A', 'M', 'V', 'C'],
        snapshot: org(x),
      },
    ],
  },
  'PATCH /v1/organizations/{id}/members/{user_id}': {
    probes: (x) => [
      {
        what: 'M in O (promote)',
        path: `/v1/organizations/${x.w.O}/members/${x.w.users.M.id}`,
        body: { role: 'admin' },
        deny: EVERYONE,
        snapshot: org(x),
      },
      {
        what: 'A in O (demote)',
        path: `/v1/organizations/${x.w.O}/members/${x.w.users.A.id}`,
        body: { role: 'member' },
        deny: EVERYONE,
        snapshot: org(x),
      },
      {
        what: "M through B's own organization",
        path: `/v1/organizations/${x.w.OB}/members/${x.w.users.M.id}`,
        body: { role: 'admin' },
        deny: ['B'],
        snapshot: org(x),
      },
    ],
  },
  'DELETE /v1/organizations/{id}/members/{user_id}': {
    probes: (x) => [
      {
        what: 'A in O',
        path: `/v1/organizations/${x.w.O}/members/${x.w.users.A.id}`,
        deny: EVERYONE,
        snapshot: org(x),
      },
      // V may leave (remove itself): everyone else is refused
      {
        what: 'V in O',
        path: `/v1/organizations/${x.w.O}/members/${x.w.users.V.id}`,
        deny: ['foreign', 'member', 'controller'],
        snapshot: org(x),
      },
      {
        what: "M through B's own organization",
        path: `/v1/organizations/${x.w.OB}/members/${x.w.users.M.id}`,
        deny: ['B'],
        snapshot: org(x),
      },
    ],
  },
  'POST /v1/organizations/{id}/invitations': {
    probes: (x) => [
      {
        what: 'O',
        path: `/v1/organizations/${x.w.O}/invitations`,
        body: { email: 'mx-spy@example.test', role: 'admin' },
        deny: EVERYONE,
        snapshot: org(x),
      },
    ],
  },
  'GET /v1/organizations/{id}/invitations': {
    probes: (x) => [
      {
        what: "O's invitations",
        path: `/v1/organizations/${x.w.O}/invitations`,
        deny: EVERYONE,
        allow: ['A'],
        snapshot: org(x),
      },
    ],
  },
  'DELETE /v1/organizations/{id}/invitations/{invitation_id}': {
    probes: (x) => [
      {
        what: "O's invitation",
        path: `/v1/organizations/${x.w.O}/invitations/${x.w.o.invitation.id}`,
        deny: EVERYONE,
        snapshot: org(x),
      },
      {
        what: "O's invitation through B's own organization",
        path: `/v1/organizations/${x.w.OB}/invitations/${x.w.o.invitation.id}`,
        deny: ['B'],
        snapshot: org(x),
      },
    ],
  },
  'GET /v1/invitations/{token}': {
    exempt: 'public',
    reason: 'the invitation page: the token (256 random bits) is the authorization',
  },
  'POST /v1/invitations/{token}/accept': {
    // addressed to another e-mail address: nobody here may use it
    probes: (x) => [
      {
        what: "O's invitation of mx-invitee",
        path: `/v1/invitations/${x.w.o.invitation.token}/accept`,
        deny: EVERYONE,
        refusals: [409],
        snapshot: org(x),
      },
    ],
  },
  'POST /v1/organizations/{id}/shares': {
    probes: (x) => [
      {
        what: 'O (entity)',
        path: `/v1/organizations/${x.w.O}/shares`,
        body: { resource_type: 'entity', resource_id: ATTIC, can_control: true, can_edit: true },
        deny: EVERYONE,
        snapshot: org(x),
      },
      {
        what: "O (A's private board)",
        path: `/v1/organizations/${x.w.O}/shares`,
        body: { resource_type: 'dashboard', resource_id: String(x.w.a.privateBoard), can_edit: true },
        deny: EVERYONE,
        snapshot: org(x),
      },
      {
        what: "A's private board into B's own organization",
        path: `/v1/organizations/${x.w.OB}/shares`,
        body: { resource_type: 'dashboard', resource_id: String(x.w.a.privateBoard), can_edit: true },
        deny: ['B'],
        snapshot: async () => [
          await x.read('B', `/v1/organizations/${x.w.OB}/shares`),
          await x.read('A', `/v1/ui-dashboard/${x.w.a.privateBoard}`),
        ],
      },
      // X made this board for O while its admin: out of O, X cannot pull it into X's own organization
      {
        what: "O's board made by X, into X's own organization",
        path: `/v1/organizations/${x.w.OX}/shares`,
        body: { resource_type: 'dashboard', resource_id: String(x.w.xMadeForO.board) },
        deny: ['X'],
        snapshot: async () => [
          await x.read('X', `/v1/organizations/${x.w.OX}/shares`),
          await x.read('A@O', `/v1/ui-dashboard/${x.w.xMadeForO.board}`),
        ],
      },
      // O's admin cannot pull a member's own board into O
      {
        what: "O (M's board)",
        path: `/v1/organizations/${x.w.O}/shares`,
        body: { resource_type: 'dashboard', resource_id: String(x.w.m.board) },
        deny: NOT_M,
        snapshot: async () => [await org(x)(), await x.read('M', `/v1/ui-dashboard/${x.w.m.board}`)],
      },
    ],
  },
  'GET /v1/organizations/{id}/shares': {
    probes: (x) => [
      {
        what: "O's shares",
        path: `/v1/organizations/${x.w.O}/shares`,
        deny: ['foreign'],
        allow: ['A', 'M', 'V'],
        snapshot: org(x),
      },
    ],
  },
  'DELETE /v1/organizations/{id}/shares/{share_id}': {
    probes: (x) => [
      {
        what: "O's share to V",
        path: `/v1/organizations/${x.w.O}/shares/${x.w.o.shareToV}`,
        deny: EVERYONE,
        snapshot: org(x),
      },
      {
        what: "O's share to V through B's own organization",
        path: `/v1/organizations/${x.w.OB}/shares/${x.w.o.shareToV}`,
        deny: ['B'],
        snapshot: org(x),
      },
    ],
  },

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
