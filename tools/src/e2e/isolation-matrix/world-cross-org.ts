import type { TestCloud } from '@smarthome/cloud/testing/harness';
import { ATTIC, DESK, HALL, PORCH, ok, type World } from './world-model.ts';
import { board, zone } from './world-resources.ts';

/**
 * X, an admin of O, shares a lamp of X's own edge and X's own board with every member, creates
 * a zone, a board and an edge for O, then leaves O and makes an organization of its own (OX).
 */
export async function formerAdminOfO(cloud: TestCloud, users: World['users'], O: string) {
  const { V, X } = users;
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
  return { xBoard, xMadeForO, OX };
}

/**
 * B, admin of its own organization, shares A's entity and device ids into it: entity and
 * device shares are opaque ids (they live on edges), so this is accepted, and must grant
 * B nothing on A's edges (a share applies to the sharing admin's and the organization's edges).
 */
export async function foreignAdminShares(cloud: TestCloud, B: World['users']['B'], OB: string, deskDevice: number) {
  for (const [type, id] of [
    ['entity', DESK],
    ['entity', ATTIC],
    ['entity', HALL],
    ['device', String(deskDevice)],
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
}
