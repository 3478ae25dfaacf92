import type { TestCloud } from '@smarthome/cloud/testing/harness';
import { ok, type Actor, type ActorName, type User } from './world-model.ts';

/** The world's users, organizations O (admin A; members M, V, C and X) and OB (B's), an open invitation, and the actors. */
export async function usersAndOrganizations(cloud: TestCloud) {
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
  return { users, O, OB, invitation, actors };
}
