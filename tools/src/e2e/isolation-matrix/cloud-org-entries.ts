import { ATTIC } from './world.ts';
import { EVERYONE, NOT_M, type Ctx, type Entry } from './types.ts';

/** Matrix entries of organizations: the organization, its members, invitations and shares. */

const org = (x: Ctx) => async () =>
  Promise.all(['', '/members', '/shares', '/invitations'].map((p) => x.read('A', `/v1/organizations/${x.w.O}${p}`)));

export const ORG_ENTRIES: Record<string, Entry> = {
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
  'POST /v1/invitations/{token}/decline': {
    // addressed to another e-mail address: nobody here may spoil it
    probes: (x) => [
      {
        what: "O's invitation of mx-invitee",
        path: `/v1/invitations/${x.w.o.invitation.token}/decline`,
        deny: EVERYONE,
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
  'PATCH /v1/organizations/{id}/shares/{share_id}': {
    probes: (x) => [
      {
        what: "O's view share to V, widened",
        path: `/v1/organizations/${x.w.O}/shares/${x.w.o.shareToV}`,
        body: { can_control: true, can_edit: true },
        deny: EVERYONE,
        snapshot: org(x),
      },
      {
        what: "O's share to V, moved to every member",
        path: `/v1/organizations/${x.w.O}/shares/${x.w.o.shareToV}`,
        body: { user_id: null },
        deny: EVERYONE,
        snapshot: org(x),
      },
      {
        what: "O's share to V through B's own organization",
        path: `/v1/organizations/${x.w.OB}/shares/${x.w.o.shareToV}`,
        body: { can_edit: true },
        deny: ['B'],
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
};
