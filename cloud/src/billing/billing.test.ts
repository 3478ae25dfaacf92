import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { addMember, makeOrg, sampleSnapshot, subscribe } from '../testing/fixtures.ts';
import type { Scope } from '../orgs/scope.ts';
import { assertWithinLimit, effectivePlan } from './plans.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(async () => {
  await t.stop();
});

const personal = (userId: string): Scope => ({ kind: 'personal', userId, orgId: null });
const orgScope = (userId: string, orgId: string): Scope => ({ kind: 'org', userId, orgId, role: 'member' });

async function edgeWith(scope: Scope, n: Parameters<typeof sampleSnapshot>[0]) {
  const { edge } = await t.cloud.services.edges.create(scope, { name: 'E' });
  await t.cloud.services.mirror.replaceSnapshot(edge.id, sampleSnapshot(n));
  return edge;
}

describe('GET /v1/billing/usage', () => {
  it('counts the personal scope from the mirror against the free plan', async () => {
    const u = await t.user();
    await edgeWith(personal(u.id), { devices: 4, entries: 2, automations: 1 });
    await edgeWith(personal(u.id), { devices: 1 });
    const res = await t.get('/v1/billing/usage', { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      plan: { id: 1, name: 'free' },
      usage: {
        config_entries: { current: 2, limit: 3 },
        devices: { current: 5, limit: 10 },
        automations: { current: 1, limit: 5 },
      },
    });
  });

  it("counts only the organization's edges with the header, and not revoked edges", async () => {
    const u = await t.user();
    const org = await makeOrg(t, u);
    await edgeWith(personal(u.id), { devices: 9 });
    await edgeWith(orgScope(u.id, org), { devices: 2, automations: 3 });
    const revoked = await edgeWith(orgScope(u.id, org), { devices: 7 });
    await t.cloud.services.edges.revoke(revoked.id);
    const res = await t.get('/v1/billing/usage', { token: u.token, org });
    expect(res.body.usage).toEqual({
      config_entries: { current: 0, limit: 3 },
      devices: { current: 2, limit: 10 },
      automations: { current: 3, limit: 5 },
    });
  });

  it('shows unlimited (null) limits under a paid plan', async () => {
    const u = await t.user();
    await subscribe(t, u.id, 2);
    const res = await t.get('/v1/billing/usage', { token: u.token });
    expect(res.body.plan).toEqual({ id: 2, name: 'pro' });
    expect(res.body.usage.devices).toEqual({ current: 0, limit: null });
  });

  it('401 without auth, 403 for a foreign organization', async () => {
    expect((await t.get('/v1/billing/usage')).body).toEqual({ error: 'unauthorized' });
    const owner = await t.user();
    const other = await t.user();
    const org = await makeOrg(t, owner);
    const res = await t.get('/v1/billing/usage', { token: other.token, org });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden' });
  });
});

describe('effective plan', () => {
  it('personal: best entitled subscription (active or grace_period), else free', async () => {
    const db = t.cloud.database.db;
    const u = await t.user();
    expect((await effectivePlan(db, personal(u.id))).name).toBe('free');
    await subscribe(t, u.id, 3, 'expired');
    await subscribe(t, u.id, 2, 'billing_retry');
    expect((await effectivePlan(db, personal(u.id))).name).toBe('free');
    await subscribe(t, u.id, 2, 'grace_period');
    expect((await effectivePlan(db, personal(u.id))).name).toBe('pro');
    await subscribe(t, u.id, 3, 'active');
    expect(await effectivePlan(db, personal(u.id))).toEqual({
      id: 3,
      name: 'business',
      limits: { config_entries: null, devices: null, automations: null },
    });
    await subscribe(t, u.id, 99, 'active'); // a plan this cloud does not know grants nothing
    expect((await effectivePlan(db, personal(u.id))).name).toBe('business');
  });

  it("organization: the best plan among its admins; members' plans do not count", async () => {
    const db = t.cloud.database.db;
    const admin = await t.user();
    const member = await t.user();
    const org = await makeOrg(t, admin);
    await addMember(t, org, member.id, 'member');
    await subscribe(t, member.id, 3);
    expect((await effectivePlan(db, orgScope(member.id, org))).name).toBe('free');
    await subscribe(t, admin.id, 2);
    expect((await effectivePlan(db, orgScope(member.id, org))).name).toBe('pro');
    // the admin's personal scope has the plan too; the member's personal scope has business
    expect((await effectivePlan(db, personal(member.id))).name).toBe('business');
  });
});

describe('assertWithinLimit', () => {
  it('throws 403 plan_limit_reached when one more would exceed the limit', async () => {
    const u = await t.user();
    const scope = personal(u.id);
    const edge = await edgeWith(scope, { devices: 9, entries: 3, automations: 4 });
    await expect(assertWithinLimit(t.cloud.services, scope, 'devices')).resolves.toBeUndefined();
    await expect(assertWithinLimit(t.cloud.services, scope, 'automations')).resolves.toBeUndefined();
    await expect(assertWithinLimit(t.cloud.services, scope, 'config_entries')).rejects.toMatchObject({
      status: 403,
      expose: 'plan_limit_reached',
    });
    await expect(assertWithinLimit(t.cloud.services, scope, 'devices', 2)).rejects.toMatchObject({ status: 403 });
    await t.cloud.services.mirror.applyDelta(edge.id, {
      kind: 'device_upsert',
      device: { id: 100, name: 'D', manufacturer: null, model: null, config_entry_id: null, user_id: null },
    });
    const err = (await assertWithinLimit(t.cloud.services, scope, 'devices').catch((e: unknown) => e)) as {
      status: number;
      body(): unknown;
    };
    expect(err.status).toBe(403);
    expect(err.body()).toEqual({ error: 'plan_limit_reached' });
    await subscribe(t, u.id, 2);
    await expect(assertWithinLimit(t.cloud.services, scope, 'devices', 1000)).resolves.toBeUndefined();
  });

  it('counts per scope: a full personal scope does not block an organization', async () => {
    const u = await t.user();
    await edgeWith(personal(u.id), { entries: 3 });
    const org = await makeOrg(t, u);
    await expect(assertWithinLimit(t.cloud.services, personal(u.id), 'config_entries')).rejects.toMatchObject({
      status: 403,
    });
    await expect(assertWithinLimit(t.cloud.services, orgScope(u.id, org), 'config_entries')).resolves.toBeUndefined();
  });
});

describe('GET /v1/billing/subscriptions and /v1/billing/plans', () => {
  it("lists only the caller's subscriptions", async () => {
    const u = await t.user();
    const other = await t.user();
    const id = await subscribe(t, u.id, 2);
    await subscribe(t, other.id, 3);
    const res = await t.get('/v1/billing/subscriptions', { token: u.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        id,
        plan_id: 2,
        status: 'active',
        gateway_provider: 'app_store',
        auto_renew: true,
        expires_at: null,
        pending_plan_id: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ]);
    expect((await t.get('/v1/billing/subscriptions', { token: (await t.user()).token })).body).toEqual([]);
  });

  it('lists plans with limits; 401 without auth', async () => {
    const u = await t.user();
    const res = await t.get('/v1/billing/plans', { token: u.token });
    expect(res.body).toEqual([
      { id: 1, name: 'free', limits: { config_entries: 3, devices: 10, automations: 5 } },
      { id: 2, name: 'pro', limits: { config_entries: null, devices: null, automations: null } },
      { id: 3, name: 'business', limits: { config_entries: null, devices: null, automations: null } },
    ]);
    expect((await t.get('/v1/billing/plans')).status).toBe(401);
    expect((await t.get('/v1/billing/subscriptions')).status).toBe(401);
  });
});
