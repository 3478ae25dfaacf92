import { EVERYONE, NOT_M, type Ctx, type Entry } from './types.ts';

/** Matrix entries of automations on edges: CRUD, traces, triggering, webhooks and the cloud bootstrap. */

const automations = (x: Ctx, edgeId: number) => async () => {
  const list = (await x.read('A', `/v1/automations?edge_id=${edgeId}`)) as { id: string }[];
  return [list, ...(await Promise.all(list.map((a) => x.read('A', `/v1/automations/${a.id}`))))];
};
const automationBody = (edgeId?: number) => ({
  edge_id: edgeId,
  alias: 'mx pwned',
  trigger: [{ platform: 'webhook' }],
  action: [{ event: 'pwned' }],
});

export const EDGE_AUTOMATION_ENTRIES: Record<string, Entry> = {
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
