import { expect } from 'vitest';
import type { MqttClient } from 'mqtt';
import { startTestCloud, type ApiResponse, type TestCloud } from '@smarthome/cloud/testing/harness';
import { subscribe } from '@smarthome/cloud/testing/fixtures';
import type { Edge } from '@smarthome/edge/edge';
import { mqttLamp, pairEdge, until } from '../support.ts';

/**
 * The isolation matrix's world: one real cloud and two real edges paired over the tunnel, and
 * one of every kind of resource, owned by A personally and by organization O (admin A).
 *
 * Actors (the name after @ is the X-Organization-Id sent):
 * - B: a foreign user with an organization of its own (OB); B, B@O (O's header, not a member), B@OB;
 * - M: a member of O without the admin role; M, M@O;
 * - V: a member of O holding view-only shares of A's "shared board" and entity light.desk_lamp_desk; V, V@O;
 * - C: a member of O holding control shares of the same; C, C@O;
 * - A, A@O: the owner, who reads resources back (snapshots) and proves the probes name real things;
 *   as O's admin, A must reach nothing of M's personal things (M's zone, board, VoIP account, token, edge);
 * - X: a former admin of O, with an organization of its own (OX). While in O, X shared a lamp of X's
 *   own edge and X's own board into O, and created a zone, a board and an edge for O; then X left.
 *   What X shared is X's alone again; what X made for O is O's, and X is a foreigner to it (X, X@O).
 */
export const ACTOR_NAMES = ['A', 'A@O', 'X', 'X@O', 'B', 'B@O', 'B@OB', 'M', 'M@O', 'V', 'V@O', 'C', 'C@O'] as const;
export type ActorName = (typeof ACTOR_NAMES)[number];
export interface Actor {
  name: ActorName;
  token: string;
  org?: string;
  memberOfO: boolean;
}

export const DESK = 'light.desk_lamp_desk'; // A's personal edge, shared into O with V (view) and C (control)
export const ATTIC = 'light.attic_lamp_attic'; // A's personal edge, not shared
export const HALL = 'light.hall_lamp_hall'; // O's edge
export const PORCH = 'light.porch_lamp_porch'; // X's personal edge, shared into O while X was an admin of O
export const MEDIA_URI = 'media-source://demo/tones/a4-440hz.wav';
export const BOARD_CONFIG = { views: [{ title: 'main', cards: [{ type: 'entities' }] }] };

type User = Awaited<ReturnType<TestCloud['user']>>;

/** A light discovered over MQTT on an edge, with the commands its device receives. */
export interface Lamp {
  entityId: string;
  client: MqttClient;
  commands: string[];
}

export interface World {
  cloud: TestCloud;
  users: Record<'A' | 'B' | 'M' | 'V' | 'C' | 'R' | 'X', User>;
  O: string;
  OB: string;
  OX: string;
  actors: Record<ActorName, Actor>;
  edges: { A: { id: number; edge: Edge }; O: { id: number; edge: Edge }; X: { id: number; edge: Edge } };
  lamps: { desk: Lamp; attic: Lamp; hall: Lamp; porch: Lamp };
  /** X's board, shared into O while X was an admin of O */
  xBoard: number;
  /** what X created in O while an admin of O (the edge is registered, never connected) */
  xMadeForO: { zone: number; board: number; edge: number };
  /** A's personal resources */
  a: {
    zone: number;
    transferZone: number;
    privateBoard: number;
    sharedBoard: number;
    voip: number;
    pat: string;
    transfer: number;
    subscription: string;
    entry: number;
    flow: string;
    automation: { id: string; webhook_id: string };
    deskDevice: number;
  };
  /** M's personal resources (the edge is registered, never connected) */
  m: { zone: number; board: number; voip: number; pat: string; edge: number };
  /** organization O's resources */
  o: {
    zone: number;
    board: number;
    voip: number;
    entry: number;
    flow: string;
    automation: { id: string; webhook_id: string };
    hallDevice: number;
    invitation: { id: string; token: string };
    shareToV: number;
    shareToC: number;
    /** a signed media path of O's edge (its signature is not valid for A's edge) */
    media: { token: string; file: string };
  };
  /**
   * Strings that only the owner's views of a resource contain, by who may see them: personal
   * (A only), shared (A, V, C), org (A and O's members), adminOnly (A), memberPersonal (M only),
   * formerAdmin (X only, once X has left O).
   */
  markers: {
    personal: string[];
    shared: string[];
    org: string[];
    adminOnly: string[];
    memberPersonal: string[];
    formerAdmin: string[];
  };
  cleanups: Array<() => Promise<unknown> | unknown>;
}

function ok(res: ApiResponse, status: number, what: string): ApiResponse {
  expect(res.status, `${what}: ${res.text}`).toBe(status);
  return res;
}

async function lamp(
  cleanups: World['cleanups'],
  edge: Edge,
  key: string,
  device: string,
  manufacturer: string,
): Promise<Lamp> {
  const { client, commands } = await mqttLamp(edge, cleanups, key, device, { manufacturer });
  return { entityId: `light.${device.toLowerCase().replace(/ /g, '_')}_${key}`, client, commands };
}

/** The demo integration on an edge (a config entry), and a second demo flow left open (started first: the demo allows one entry). */
async function demoEntryAndOpenFlow(
  cloud: TestCloud,
  token: string,
  edgeId: number,
  title: string,
  org?: string,
): Promise<{ entry: number; flow: string }> {
  const open = ok(
    await cloud.post('/v1/config_flow', { token, org, body: { handler: 'demo', edge_id: edgeId } }),
    200,
    'open flow',
  );
  expect(open.body.type).toBe('form');
  const start = ok(
    await cloud.post('/v1/config_flow', { token, org, body: { handler: 'demo', edge_id: edgeId } }),
    200,
    'demo flow',
  );
  const done = ok(
    await cloud.post(`/v1/config_flow/${start.body.flowId}/advance`, { token, body: { name: title } }),
    200,
    'demo entry',
  );
  expect(done.body).toMatchObject({ type: 'create_entry' });
  return { entry: done.body.result.config_entry_id as number, flow: open.body.flowId as string };
}

const automation = (alias: string, edgeId: number, secret: string) => ({
  edge_id: edgeId,
  alias,
  trigger: [{ platform: 'webhook' }],
  action: [
    { call_url: { method: 'POST', url: 'http://127.0.0.1:9/hook', headers: { Authorization: `Bearer ${secret}` } } },
  ],
});

export async function buildWorld(): Promise<World> {
  const cleanups: World['cleanups'] = [];
  const cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  const [A, B, M, V, C, R, X] = await Promise.all([1, 2, 3, 4, 5, 6, 7].map(() => cloud.user()));
  const users = { A, B, M, V, C, R, X };

  const O = ok(await cloud.post('/v1/organizations', { token: A.token, body: { name: 'mx O org' } }), 201, 'org O').body
    .id as string;
  const OB = ok(await cloud.post('/v1/organizations', { token: B.token, body: { name: 'B org' } }), 201, 'org OB').body
    .id as string;
  for (const u of [M, V, C, X]) {
    const inv = ok(
      await cloud.post(`/v1/organizations/${O}/invitations`, {
        token: A.token,
        body: { email: u.email, role: u === X ? 'admin' : 'member' },
      }),
      201,
      'invite',
    );
    ok(await cloud.post(`/v1/invitations/${inv.body.token}/accept`, { token: u.token }), 200, 'accept');
  }
  const invitation = ok(
    await cloud.post(`/v1/organizations/${O}/invitations`, {
      token: A.token,
      body: { email: 'mx-invitee@example.test', role: 'admin' },
    }),
    201,
    'invitation',
  ).body;

  const actor = (name: ActorName, user: User, org: string | undefined, memberOfO: boolean): Actor => ({
    name,
    token: user.token,
    org,
    memberOfO,
  });
  const actors: Record<ActorName, Actor> = {
    A: actor('A', A, undefined, true),
    'A@O': actor('A@O', A, O, true),
    X: actor('X', X, undefined, false),
    'X@O': actor('X@O', X, O, false),
    B: actor('B', B, undefined, false),
    'B@O': actor('B@O', B, O, false),
    'B@OB': actor('B@OB', B, OB, false),
    M: actor('M', M, undefined, true),
    'M@O': actor('M@O', M, O, true),
    V: actor('V', V, undefined, true),
    'V@O': actor('V@O', V, O, true),
    C: actor('C', C, undefined, true),
    'C@O': actor('C@O', C, O, true),
  };

  // Edges, with MQTT-discovered lamps (distinct entity ids) and the demo integration.
  const [edgeA, edgeO, edgeX] = await Promise.all([
    pairEdge(cloud, cleanups, A.token, 'mx A home'),
    pairEdge(cloud, cleanups, A.token, 'mx O home', O),
    pairEdge(cloud, cleanups, X.token, 'mx X home'),
  ]);
  await until(
    async () =>
      edgeA.edge.link?.connected &&
      edgeO.edge.link?.connected &&
      edgeX.edge.link?.connected &&
      (await cloud.get(`/v1/edges/${edgeA.id}`, { token: A.token })).body?.status === 'online' &&
      (await cloud.get(`/v1/edges/${edgeO.id}`, { token: A.token, org: O })).body?.status === 'online' &&
      (await cloud.get(`/v1/edges/${edgeX.id}`, { token: X.token })).body?.status === 'online',
    10_000,
    'edges online',
  );
  const [desk, attic, hall, porch] = await Promise.all([
    lamp(cleanups, edgeA.edge, 'desk', 'Desk lamp', 'MxDeskCo'),
    lamp(cleanups, edgeA.edge, 'attic', 'Attic lamp', 'MxAtticCo'),
    lamp(cleanups, edgeO.edge, 'hall', 'Hall lamp', 'MxHallCo'),
    lamp(cleanups, edgeX.edge, 'porch', 'Porch lamp', 'MxPorchCo'),
  ]);
  expect([desk.entityId, attic.entityId, hall.entityId, porch.entityId]).toEqual([DESK, ATTIC, HALL, PORCH]);
  await until(
    async () => {
      for (const id of [DESK, ATTIC, HALL])
        if ((await cloud.get(`/v1/entities/states/${id}`, { token: A.token })).body?.state !== 'off') return false;
      return (await cloud.get(`/v1/entities/states/${PORCH}`, { token: X.token })).body?.state === 'off';
    },
    10_000,
    'lamps mirrored',
  );
  const demoA = await demoEntryAndOpenFlow(cloud, A.token, edgeA.id, 'mx A demo');
  const demoO = await demoEntryAndOpenFlow(cloud, A.token, edgeO.id, 'mx O demo', O);
  const autoA = ok(
    await cloud.post('/v1/automations', {
      token: A.token,
      body: automation('mx A automation', edgeA.id, 'mx-secret-A'),
    }),
    201,
    'automation A',
  ).body;
  const autoO = ok(
    await cloud.post('/v1/automations', {
      token: A.token,
      org: O,
      body: automation('mx O automation', edgeO.id, 'mx-secret-O'),
    }),
    201,
    'automation O',
  ).body;
  const deviceOf = async (edgeId: number, manufacturer: string, org?: string) =>
    (
      ok(await cloud.get(`/v1/devices?edge_id=${edgeId}`, { token: A.token, org }), 200, 'devices').body as {
        id: number;
        manufacturer: string;
      }[]
    ).find((d) => d.manufacturer === manufacturer)!.id;

  // Cloud resources.
  const zone = (name: string) => ({ name, icon: 'mdi:home', latitude: 48.1, longitude: 11.5, radius: 100 });
  const sip = (name: string) => ({
    name,
    server: 'sip.example.test',
    username: name.replace(/ /g, '-'),
    password: 'mx-sip-password',
  });
  const board = (name: string) => ({ name, config: BOARD_CONFIG });
  const post = async (path: string, body: unknown, org?: string, status = 201) =>
    ok(await cloud.post(path, { token: A.token, org, body }), status, path).body;
  const put = async (body: unknown, org?: string) =>
    ok(await cloud.put('/v1/ui-dashboard', { token: A.token, org, body }), 200, 'dashboard').body;

  const a = {
    zone: (await post('/v1/zones', zone('mx A zone'))).id as number,
    transferZone: (await post('/v1/zones', zone('mx A transfer zone'))).id as number,
    privateBoard: (await put(board('mx A private board'))).id as number,
    sharedBoard: (await put(board('mx A shared board'))).id as number,
    voip: (await post('/v1/voip-accounts', sip('mx A sip'))).id as number,
    pat: (await post('/v1/account/tokens', { name: 'mx A pat' })).id as string,
    transfer: 0,
    subscription: await subscribe(cloud, A.id, 2),
    entry: demoA.entry,
    flow: demoA.flow,
    automation: autoA,
    deskDevice: await deviceOf(edgeA.id, 'MxDeskCo'),
  };
  a.transfer = (
    await post('/v1/transfers', {
      to_email: R.email,
      resource_type: 'zone',
      resource_id: String(a.transferZone),
      metadata: { note: 'mx A transfer' },
    })
  ).id;
  // A hides the attic lamp from voice assistants, so A's exposure list has a choice of A's own.
  ok(
    await cloud.put(`/v1/voice-assistant/endpoints/${ATTIC}`, { token: A.token, body: { exposed: false } }),
    200,
    'voice',
  );

  const asM = async (path: string, body: unknown) =>
    ok(await cloud.post(path, { token: M.token, body }), 201, path).body;
  const m = {
    zone: (await asM('/v1/zones', zone('mx M zone'))).id as number,
    board: ok(await cloud.put('/v1/ui-dashboard', { token: M.token, body: board('mx M board') }), 200, 'M board').body
      .id as number,
    voip: (await asM('/v1/voip-accounts', sip('mx M sip'))).id as number,
    pat: (await asM('/v1/account/tokens', { name: 'mx M pat' })).id as string,
    edge: (await asM('/v1/edges', { name: 'mx M home' })).edge.id as number,
  };

  const shareTo = async (type: string, id: string, flags: Record<string, boolean>, userId: string) =>
    (await post(`/v1/organizations/${O}/shares`, { resource_type: type, resource_id: id, ...flags, user_id: userId }))
      .id as number;
  const resolved = ok(
    await cloud.post('/v1/media-source/resolve', {
      token: A.token,
      org: O,
      body: { uri: MEDIA_URI, edge_id: edgeO.id },
    }),
    200,
    'media',
  ).body;
  const media = new RegExp(`/v1/edges/${edgeO.id}/media/([^/]+)/([^/]+)$`).exec(new URL(resolved.url).pathname)!;
  const o = {
    zone: (await post('/v1/zones', zone('mx O zone'), O)).id as number,
    board: (await put(board('mx O board'), O)).id as number,
    voip: (await post('/v1/voip-accounts', sip('mx O sip'), O)).id as number,
    entry: demoO.entry,
    flow: demoO.flow,
    automation: autoO,
    hallDevice: await deviceOf(edgeO.id, 'MxHallCo', O),
    invitation: { id: invitation.id as string, token: invitation.token as string },
    shareToV: await shareTo('dashboard', String(a.sharedBoard), { can_view: true }, V.id),
    shareToC: await shareTo('dashboard', String(a.sharedBoard), { can_view: false, can_control: true }, C.id),
    media: { token: media[1], file: media[2] },
  };
  await shareTo('entity', DESK, { can_view: true }, V.id);
  await shareTo('entity', DESK, { can_view: false, can_control: true }, C.id);

  // X, an admin of O, shares a lamp of X's own edge and X's own board with every member, then leaves O.
  const xBoard = ok(await cloud.put('/v1/ui-dashboard', { token: X.token, body: board('mx X board') }), 200, 'X board')
    .body.id as number;
  for (const [type, id] of [
    ['entity', PORCH],
    ['dashboard', String(xBoard)],
  ]) {
    ok(
      await cloud.post(`/v1/organizations/${O}/shares`, {
        token: X.token,
        body: { resource_type: type, resource_id: id, can_view: true, can_control: true, can_edit: true },
      }),
      201,
      'X share',
    );
  }
  ok(await cloud.get(`/v1/entities/states/${PORCH}`, { token: V.token }), 200, 'shared while X is in O');
  const xMadeForO = {
    zone: ok(
      await cloud.post('/v1/zones', { token: X.token, org: O, body: zone('mx X-made O zone') }),
      201,
      'X zone in O',
    ).body.id as number,
    board: ok(
      await cloud.put('/v1/ui-dashboard', { token: X.token, org: O, body: board('mx X-made O board') }),
      200,
      'X board in O',
    ).body.id as number,
    edge: ok(
      await cloud.post('/v1/edges', { token: X.token, org: O, body: { name: 'mx X-made O edge' } }),
      201,
      'X edge in O',
    ).body.edge.id as number,
  };
  ok(await cloud.delete(`/v1/organizations/${O}/members/${X.id}`, { token: X.token }), 200, 'X leaves O');
  const OX = ok(await cloud.post('/v1/organizations', { token: X.token, body: { name: 'X org' } }), 201, 'org OX').body
    .id as string;

  // B, admin of its own organization, shares A's entity and device ids into it: entity and
  // device shares are opaque ids (they live on edges), so this is accepted, and must grant
  // B nothing on A's edges (a share applies to the sharing admin's and the organization's edges).
  for (const [type, id] of [
    ['entity', DESK],
    ['entity', ATTIC],
    ['entity', HALL],
    ['device', String(a.deskDevice)],
  ]) {
    ok(
      await cloud.post(`/v1/organizations/${OB}/shares`, {
        token: B.token,
        body: { resource_type: type, resource_id: id, can_view: true, can_control: true, can_edit: true },
      }),
      201,
      'B share',
    );
  }

  return {
    cloud,
    users,
    O,
    OB,
    OX,
    actors,
    cleanups,
    xBoard,
    xMadeForO,
    edges: { A: edgeA, O: edgeO, X: edgeX },
    lamps: { desk, attic, hall, porch },
    a,
    o,
    m,
    markers: {
      personal: [
        'mx A zone',
        'mx A transfer zone',
        'mx A private board',
        'mx A sip',
        'mx A home',
        'mx A pat',
        'mx A transfer',
        'mx A demo',
        'mx A automation',
        'mx-secret-A',
        autoA.webhook_id,
        a.subscription,
        ATTIC,
        'MxAtticCo',
        'MxDeskCo',
      ],
      formerAdmin: ['mx X home', 'mx X board', PORCH, 'MxPorchCo'],
      shared: ['mx A shared board', DESK],
      org: [
        'mx O org',
        'mx O zone',
        'mx O board',
        'mx O sip',
        'mx O home',
        'mx O demo',
        'mx O automation',
        autoO.webhook_id,
        HALL,
        'MxHallCo',
        A.email,
        A.id,
        'mx X-made O zone',
        'mx X-made O board',
        'mx X-made O edge',
      ],
      // what O's members never see: a secret in an automation (shown to them redacted), the admins' invitations
      adminOnly: ['mx-secret-O', 'mx-invitee@example.test'],
      memberPersonal: ['mx M zone', 'mx M board', 'mx M sip', 'mx M pat', 'mx M home'],
    },
  };
}
