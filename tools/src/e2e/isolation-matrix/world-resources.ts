import type { TestCloud } from '@smarthome/cloud/testing/harness';
import { subscribe } from '@smarthome/cloud/testing/fixtures';
import { ATTIC, BOARD_CONFIG, DESK, MEDIA_URI, ok, type World } from './world-model.ts';
import type { edgesAndLamps } from './world-edges.ts';

/** Request bodies of a zone and a board with this name (A, M, O and X each make theirs). */
export const zone = (name: string) => ({ name, icon: 'mdi:home', latitude: 48.1, longitude: 11.5, radius: 100 });
export const board = (name: string) => ({ name, config: BOARD_CONFIG });

/**
 * The cloud's own resources of A (personal), M (personal) and O: zones, boards, VoIP accounts,
 * tokens, a transfer, a subscription, shares to V and C, and a signed media path of O's edge.
 */
export async function cloudResources(
  cloud: TestCloud,
  users: World['users'],
  O: string,
  invitation: { id: string; token: string },
  edges: Awaited<ReturnType<typeof edgesAndLamps>>,
) {
  const { A, M, V, C, R } = users;
  const { edgeA, edgeO, demoA, demoO, autoA, autoO, deviceOf } = edges;
  const sip = (name: string) => ({
    name,
    server: 'sip.example.test',
    username: name.replace(/ /g, '-'),
    password: 'mx-sip-password',
  });
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
    invitation: { id: invitation.id, token: invitation.token },
    shareToV: await shareTo('dashboard', String(a.sharedBoard), { can_view: true }, V.id),
    shareToC: await shareTo('dashboard', String(a.sharedBoard), { can_view: false, can_control: true }, C.id),
    media: { token: media[1], file: media[2] },
  };
  await shareTo('entity', DESK, { can_view: true }, V.id);
  await shareTo('entity', DESK, { can_view: false, can_control: true }, C.id);
  return { a, m, o };
}
