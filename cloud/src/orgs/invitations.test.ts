import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { UNKNOWN_ORG, orgFixture } from '../testing/fixtures.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

const DAY = 24 * 3600 * 1000;

async function invite(token: string, orgId: string, email: string, role = 'member') {
  const res = await t.post(`/v1/organizations/${orgId}/invitations`, { token, body: { email, role } });
  expect(res.status).toBe(201);
  return res.body as { id: string; email: string; role: string; status: string; token: string; expires_at: string };
}

describe('POST /v1/organizations/{id}/invitations', () => {
  it('creates a pending invitation with a high-entropy token, valid for 7 days, stored hashed', async () => {
    const { admin, org } = await orgFixture(t);
    const before = Date.now();
    const res = await t.post(`/v1/organizations/${org.id}/invitations`, {
      token: admin.token,
      body: { email: 'New.Person@Example.test', role: 'admin' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      email: 'new.person@example.test',
      role: 'admin',
      status: 'pending',
      token: expect.stringMatching(/^shp_inv_[A-Za-z0-9_-]{43}$/),
      expires_at: expect.any(String),
    });
    const ttl = Date.parse(res.body.expires_at) - before;
    expect(ttl).toBeGreaterThan(7 * DAY - 60_000);
    expect(ttl).toBeLessThanOrEqual(7 * DAY + 60_000);
    const stored = await t.sqlOne<{ token_hash: string }>('SELECT token_hash FROM org_invitations WHERE id = ?', [
      res.body.id,
    ]);
    expect(stored?.token_hash).toBe(createHash('sha256').update(res.body.token).digest('hex'));
    expect(JSON.stringify(await t.sql('SELECT * FROM org_invitations'))).not.toContain(res.body.token);
  });
  it('defaults the role to member', async () => {
    const { admin, org } = await orgFixture(t);
    const res = await t.post(`/v1/organizations/${org.id}/invitations`, {
      token: admin.token,
      body: { email: 'd@example.test' },
    });
    expect(res.status).toBe(201);
    expect(res.body.role).toBe('member');
  });
  it('answers 409 when the invited e-mail already belongs to a member', async () => {
    const { admin, member, org } = await orgFixture(t);
    const res = await t.post(`/v1/organizations/${org.id}/invitations`, {
      token: admin.token,
      body: { email: member.email },
    });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: 'already a member of this organization' });
  });
  it('replaces an earlier pending invitation for the same e-mail', async () => {
    const { admin, org } = await orgFixture(t);
    const first = await invite(admin.token, org.id, 'twice@example.test');
    const second = await invite(admin.token, org.id, 'twice@example.test');
    expect((await t.get(`/v1/invitations/${first.token}`)).status).toBe(404);
    expect((await t.get(`/v1/invitations/${second.token}`)).status).toBe(200);
  });
  it('answers 400 for a bad e-mail or role, 403 to a member or outsider, 404 for an unknown organization, 401 without auth', async () => {
    const { admin, member, outsider, org } = await orgFixture(t);
    const badEmail = await t.post(`/v1/organizations/${org.id}/invitations`, {
      token: admin.token,
      body: { email: 'nope' },
    });
    expect(badEmail.status).toBe(400);
    expect(badEmail.body.message).toMatch(/^email: /);
    const badRole = await t.post(`/v1/organizations/${org.id}/invitations`, {
      token: admin.token,
      body: { email: 'a@example.test', role: 'owner' },
    });
    expect(badRole.status).toBe(400);
    expect(badRole.body.message).toMatch(/^role: /);
    const byMember = await t.post(`/v1/organizations/${org.id}/invitations`, {
      token: member.token,
      body: { email: 'a@example.test' },
    });
    expect(byMember.status).toBe(403);
    expect(byMember.body).toEqual({ error: 'forbidden' });
    expect(
      (
        await t.post(`/v1/organizations/${org.id}/invitations`, {
          token: outsider.token,
          body: { email: 'a@example.test' },
        })
      ).status,
    ).toBe(403);
    const unknown = await t.post(`/v1/organizations/${UNKNOWN_ORG}/invitations`, {
      token: admin.token,
      body: { email: 'a@example.test' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'organization not found' });
    expect(
      (await t.post(`/v1/organizations/${org.id}/invitations`, { body: { email: 'a@example.test' } })).status,
    ).toBe(401);
    expect((await t.get(`/v1/organizations/${org.id}/invitations`, { token: admin.token })).body).toEqual([]);
  });
});

describe('GET /v1/invitations/{token} (public page)', () => {
  it('shows organization, branding, inviteBranding, e-mail and role without auth', async () => {
    const { admin, org } = await orgFixture(t, 'Branded Org');
    await t.patch(`/v1/organizations/${org.id}/branding`, {
      token: admin.token,
      body: {
        description: 'We make homes smart',
        branding: { logoUrl: 'https://example.test/l.png' },
        inviteBranding: { headline: 'Come in' },
      },
    });
    const inv = await invite(admin.token, org.id, 'guest@example.test');
    const res = await t.get(`/v1/invitations/${inv.token}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      organization: { id: org.id, name: 'Branded Org', description: 'We make homes smart' },
      branding: { logoUrl: 'https://example.test/l.png' },
      inviteBranding: { headline: 'Come in' },
      email: 'guest@example.test',
      role: 'member',
    });
  });
  it('answers 404 {message} for an unknown, expired, revoked or accepted token', async () => {
    const { admin, org } = await orgFixture(t);
    const unknown = await t.get('/v1/invitations/shp_inv_doesnotexist');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'invitation not found or no longer valid' });

    const expired = await invite(admin.token, org.id, 'late@example.test');
    await t.sql('UPDATE org_invitations SET expires_at = ? WHERE id = ?', [
      new Date(Date.now() - 1000).toISOString(),
      expired.id,
    ]);
    expect((await t.get(`/v1/invitations/${expired.token}`)).status).toBe(404);

    const revoked = await invite(admin.token, org.id, 'revoked@example.test');
    expect(
      (await t.delete(`/v1/organizations/${org.id}/invitations/${revoked.id}`, { token: admin.token })).status,
    ).toBe(200);
    expect((await t.get(`/v1/invitations/${revoked.token}`)).status).toBe(404);

    const guest = await t.user('accepted-guest@example.test');
    const accepted = await invite(admin.token, org.id, guest.email);
    expect((await t.post(`/v1/invitations/${accepted.token}/accept`, { token: guest.token })).status).toBe(200);
    expect((await t.get(`/v1/invitations/${accepted.token}`)).status).toBe(404);
  });
});

describe('POST /v1/invitations/{token}/accept', () => {
  it('makes the invited user a member with the invited role, once', async () => {
    const { admin, org } = await orgFixture(t, 'Joinable');
    const guest = await t.user('Joiner@example.test');
    const inv = await invite(admin.token, org.id, 'JOINER@example.test', 'admin');
    const res = await t.post(`/v1/invitations/${inv.token}/accept`, { token: guest.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ organization: { id: org.id, name: 'Joinable' }, role: 'admin' });
    const orgs = (await t.get('/v1/organizations', { token: guest.token })).body;
    expect(orgs.map((o: { id: string; role: string }) => [o.id, o.role])).toEqual([[org.id, 'admin']]);
    const again = await t.post(`/v1/invitations/${inv.token}/accept`, { token: guest.token });
    expect(again.status).toBe(404);
    const listed = (await t.get(`/v1/organizations/${org.id}/invitations`, { token: admin.token })).body;
    expect(listed).toEqual([
      {
        id: inv.id,
        email: 'joiner@example.test',
        role: 'admin',
        status: 'accepted',
        expires_at: inv.expires_at,
        created_at: expect.any(String),
        mail_status: expect.stringMatching(/^(queued|sent)$/),
      },
    ]);
  });
  it('answers 403 when the caller e-mail does not match, and the invitation stays usable', async () => {
    const { admin, org } = await orgFixture(t);
    const intended = await t.user();
    const other = await t.user();
    const inv = await invite(admin.token, org.id, intended.email);
    const wrong = await t.post(`/v1/invitations/${inv.token}/accept`, { token: other.token });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toEqual({ error: 'invitation_email_mismatch' });
    expect((await t.get(`/v1/organizations/${org.id}`, { token: other.token })).status).toBe(403);
    expect((await t.post(`/v1/invitations/${inv.token}/accept`, { token: intended.token })).status).toBe(200);
  });
  it('answers 403 email_not_verified to an account whose matching address is not verified; once verified, the same invitation works', async () => {
    const { admin, org } = await orgFixture(t);
    const address = `late-${Math.random().toString(36).slice(2)}@example.test`;
    const inv = await invite(admin.token, org.id, address);
    const late = await t.user(address.toUpperCase(), undefined, { verified: false });
    const refused = await t.post(`/v1/invitations/${inv.token}/accept`, { token: late.token });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'email_not_verified' });
    expect((await t.get('/v1/organizations', { token: late.token })).body).toEqual([]);
    expect((await t.get(`/v1/organizations/${org.id}/invitations`, { token: admin.token })).body[0].status).toBe(
      'pending',
    );

    await t.sql('UPDATE users SET email_verified = 1 WHERE id = ?', [late.id]);
    expect((await t.post(`/v1/invitations/${inv.token}/accept`, { token: late.token })).status).toBe(200);
    expect((await t.get('/v1/organizations', { token: late.token })).body.map((o: { id: string }) => o.id)).toEqual([
      org.id,
    ]);
  });
  it('answers 404 for an expired invitation', async () => {
    const { admin, org } = await orgFixture(t);
    const guest = await t.user();
    const inv = await invite(admin.token, org.id, guest.email);
    await t.sql('UPDATE org_invitations SET expires_at = ? WHERE id = ?', [
      new Date(Date.now() - 1).toISOString(),
      inv.id,
    ]);
    const res = await t.post(`/v1/invitations/${inv.token}/accept`, { token: guest.token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'invitation not found or no longer valid' });
    expect((await t.get('/v1/organizations', { token: guest.token })).body).toEqual([]);
    const listed = (await t.get(`/v1/organizations/${org.id}/invitations`, { token: admin.token })).body;
    expect(listed[0].status).toBe('expired');
  });
  it('answers 409 when the caller is already a member', async () => {
    const { admin, org } = await orgFixture(t);
    const guest = await t.user();
    const inv = await invite(admin.token, org.id, guest.email);
    await t.sql("INSERT INTO org_members (org_id, user_id, role, joined_at) VALUES (?, ?, 'member', ?)", [
      org.id,
      guest.id,
      new Date().toISOString(),
    ]);
    const res = await t.post(`/v1/invitations/${inv.token}/accept`, { token: guest.token });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: 'already a member of this organization' });
  });
  it('answers 401 without auth and 404 for an unknown token', async () => {
    const { admin, org } = await orgFixture(t);
    const inv = await invite(admin.token, org.id, 'x@example.test');
    const anon = await t.post(`/v1/invitations/${inv.token}/accept`);
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ error: 'unauthorized' });
    expect((await t.post('/v1/invitations/shp_inv_unknown/accept', { token: admin.token })).status).toBe(404);
  });
});

describe('GET and DELETE /v1/organizations/{id}/invitations', () => {
  it('lists invitations without tokens and revokes pending ones (admin only)', async () => {
    const { admin, member, outsider, org } = await orgFixture(t);
    const inv = await invite(admin.token, org.id, 'listed@example.test');
    const list = await t.get(`/v1/organizations/${org.id}/invitations`, { token: admin.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      {
        id: inv.id,
        email: 'listed@example.test',
        role: 'member',
        status: 'pending',
        expires_at: inv.expires_at,
        created_at: expect.any(String),
        mail_status: expect.stringMatching(/^(queued|sent)$/),
      },
    ]);
    expect(list.text).not.toContain(inv.token);
    expect((await t.get(`/v1/organizations/${org.id}/invitations`, { token: member.token })).status).toBe(403);
    expect((await t.get(`/v1/organizations/${org.id}/invitations`, { token: outsider.token })).status).toBe(403);
    expect((await t.get(`/v1/organizations/${UNKNOWN_ORG}/invitations`, { token: admin.token })).status).toBe(404);
    expect((await t.get(`/v1/organizations/${org.id}/invitations`)).status).toBe(401);

    const byMember = await t.delete(`/v1/organizations/${org.id}/invitations/${inv.id}`, { token: member.token });
    expect(byMember.status).toBe(403);
    expect((await t.delete(`/v1/organizations/${org.id}/invitations/${inv.id}`)).status).toBe(401);
    const revoked = await t.delete(`/v1/organizations/${org.id}/invitations/${inv.id}`, { token: admin.token });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ message: 'invitation revoked' });
    const twice = await t.delete(`/v1/organizations/${org.id}/invitations/${inv.id}`, { token: admin.token });
    expect(twice.status).toBe(404);
    expect(twice.body).toEqual({ message: 'invitation not found' });
    expect((await t.get(`/v1/organizations/${org.id}/invitations`, { token: admin.token })).body[0].status).toBe(
      'revoked',
    );
  });
});
