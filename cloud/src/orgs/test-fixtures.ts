import type { TestCloud } from '../testing/harness.ts';

export const UNKNOWN_ORG = '00000000-0000-4000-8000-000000000000';

/** Puts a user into an organization directly (tests that are not about invitations). */
export async function addMember(
  t: TestCloud,
  orgId: string,
  userId: string,
  role: 'admin' | 'member' = 'member',
): Promise<void> {
  await t.cloud.database.execute('INSERT INTO org_members (org_id, user_id, role, joined_at) VALUES (?, ?, ?, ?)', [
    orgId,
    userId,
    role,
    new Date().toISOString(),
  ]);
}

/** An organization with an admin, one member and an outsider (a user of another organization). */
export async function orgFixture(t: TestCloud, name = 'Acme') {
  const admin = await t.user();
  const member = await t.user();
  const outsider = await t.user();
  const res = await t.post('/v1/organizations', { token: admin.token, body: { name } });
  if (res.status !== 201) throw new Error(`create org failed: ${res.status} ${res.text}`);
  const org = res.body as { id: string; name: string };
  await addMember(t, org.id, member.id);
  return { admin, member, outsider, org };
}
