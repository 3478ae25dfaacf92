import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { orgFixture } from '../testing/fixtures.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

async function invite(token: string, orgId: string, email: string) {
  const res = await t.post(`/v1/organizations/${orgId}/invitations`, { token, body: { email } });
  expect(res.status).toBe(201);
  return res.body as { id: string; token: string };
}

const statusOf = async (adminToken: string, orgId: string, id: string) =>
  (
    (await t.get(`/v1/organizations/${orgId}/invitations`, { token: adminToken })).body as Array<{
      id: string;
      status: string;
    }>
  ).find((i) => i.id === id)?.status;

describe('POST /v1/invitations/{token}/decline', () => {
  it('the invitee declines: the link stops working, the admins see it declined, no membership', async () => {
    const { admin, org } = await orgFixture(t);
    const guest = await t.user();
    const inv = await invite(admin.token, org.id, guest.email);
    const res = await t.post(`/v1/invitations/${inv.token}/decline`, { token: guest.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: 'invitation declined' });
    expect(await statusOf(admin.token, org.id, inv.id)).toBe('declined');
    expect((await t.get(`/v1/invitations/${inv.token}`)).status).toBe(404);
    const accept = await t.post(`/v1/invitations/${inv.token}/accept`, { token: guest.token });
    expect(accept.status).toBe(404);
    expect(accept.body).toEqual({ message: 'invitation not found or no longer valid' });
    expect((await t.get('/v1/organizations', { token: guest.token })).body).toEqual([]);
    // a declined invitation is not pending: nothing to revoke, and the same address can be invited again
    expect((await t.delete(`/v1/organizations/${org.id}/invitations/${inv.id}`, { token: admin.token })).status).toBe(
      404,
    );
    const again = await invite(admin.token, org.id, guest.email);
    expect((await t.get(`/v1/invitations/${again.token}`)).status).toBe(200);
    expect(await statusOf(admin.token, org.id, inv.id)).toBe('declined');
  });

  it("another user's token is refused 403 and the invitation stays usable by the invitee", async () => {
    const { admin, member, org } = await orgFixture(t);
    const guest = await t.user();
    const other = await t.user();
    const inv = await invite(admin.token, org.id, guest.email);
    for (const who of [other, member, admin]) {
      const res = await t.post(`/v1/invitations/${inv.token}/decline`, { token: who.token });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'invitation_email_mismatch' });
    }
    expect(await statusOf(admin.token, org.id, inv.id)).toBe('pending');
    expect((await t.post(`/v1/invitations/${inv.token}/accept`, { token: guest.token })).status).toBe(200);
  });

  it('an unconfirmed address is refused 403 email_not_verified', async () => {
    const { admin, org } = await orgFixture(t);
    const address = `unconfirmed-${Math.random().toString(36).slice(2)}@example.test`;
    const inv = await invite(admin.token, org.id, address);
    const late = await t.user(address, undefined, { verified: false });
    const res = await t.post(`/v1/invitations/${inv.token}/decline`, { token: late.token });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'email_not_verified' });
    expect(await statusOf(admin.token, org.id, inv.id)).toBe('pending');
  });

  it('answers 404 for an expired, already accepted, revoked, declined or unknown token; 401 without auth', async () => {
    const { admin, org } = await orgFixture(t);
    const guest = await t.user();
    const gone = { message: 'invitation not found or no longer valid' };

    const expired = await invite(admin.token, org.id, guest.email);
    await t.sql('UPDATE org_invitations SET expires_at = ? WHERE id = ?', [
      new Date(Date.now() - 1000).toISOString(),
      expired.id,
    ]);
    const late = await t.post(`/v1/invitations/${expired.token}/decline`, { token: guest.token });
    expect(late.status).toBe(404);
    expect(late.body).toEqual(gone);
    expect(await statusOf(admin.token, org.id, expired.id)).toBe('expired');

    const revoked = await invite(admin.token, org.id, guest.email);
    await t.delete(`/v1/organizations/${org.id}/invitations/${revoked.id}`, { token: admin.token });
    expect((await t.post(`/v1/invitations/${revoked.token}/decline`, { token: guest.token })).status).toBe(404);

    const declined = await invite(admin.token, org.id, guest.email);
    expect((await t.post(`/v1/invitations/${declined.token}/decline`, { token: guest.token })).status).toBe(200);
    const twice = await t.post(`/v1/invitations/${declined.token}/decline`, { token: guest.token });
    expect(twice.status).toBe(404);
    expect(twice.body).toEqual(gone);

    const accepted = await invite(admin.token, org.id, guest.email);
    expect((await t.post(`/v1/invitations/${accepted.token}/accept`, { token: guest.token })).status).toBe(200);
    const after = await t.post(`/v1/invitations/${accepted.token}/decline`, { token: guest.token });
    expect(after.status).toBe(404);
    expect(after.body).toEqual(gone);
    expect(await statusOf(admin.token, org.id, accepted.id)).toBe('accepted');

    expect((await t.post('/v1/invitations/shp_inv_unknown/decline', { token: guest.token })).status).toBe(404);
    const anon = await t.post(`/v1/invitations/${accepted.token}/decline`);
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ error: 'unauthorized' });
  });
});
