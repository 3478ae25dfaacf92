import { drizzle } from 'drizzle-orm/sqlite-proxy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../testing/database.ts';
import { makeOrg } from '../testing/fixtures.ts';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { grantQueries } from './grant-queries.ts';

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud();
});
afterAll(() => t.stop());

const personal = (userId: string) => ({ kind: 'personal' as const, userId, orgId: null });
const inOrg = (userId: string, orgId: string) => ({ kind: 'org' as const, userId, orgId, role: 'admin' as const });

async function edge(scope: ReturnType<typeof personal> | ReturnType<typeof inOrg>, name: string): Promise<number> {
  return (await t.cloud.services.edges.create(scope, { name })).edge.id;
}

const sorted = <T extends { edgeId: number }>(grants: readonly T[]) =>
  [...grants].sort((a, b) => a.edgeId - b.edgeId).map((g) => ({ ...g }));

describe('EntityAccess.edgeGrants: the edges a user reaches whole', () => {
  it('gives personal edges as owner and every organization edge with the role in it; never revoked edges, other users’ personal edges or the edges of an organization requiring MFA of a user without it', async () => {
    const admin = await t.user();
    const member = await t.user();
    const stranger = await t.user();
    const org = await makeOrg(t, admin, [member]);
    const strict = await makeOrg(t, admin, [member], 'Strict');
    await t.cloud.database.execute('UPDATE organizations SET require_mfa = 1 WHERE id = ?', [strict]);

    const adminHome = await edge(personal(admin.id), 'admin home');
    const memberHome = await edge(personal(member.id), 'member home');
    const revokedHome = await edge(personal(member.id), 'revoked home');
    await t.cloud.services.edges.revoke(revokedHome);
    const office = await edge(inOrg(admin.id, org), 'office');
    const shop = await edge(inOrg(member.id, org), 'shop');
    const vault = await edge(inOrg(admin.id, strict), 'vault');
    const strangerHome = await edge(personal(stranger.id), 'stranger home');

    const access = t.cloud.services.access;
    expect(sorted(await access.edgeGrants(member.id))).toEqual(
      sorted([
        { edgeId: memberHome, orgId: null, ownerId: member.id, role: 'owner' },
        { edgeId: office, orgId: org, ownerId: admin.id, role: 'member' },
        { edgeId: shop, orgId: org, ownerId: member.id, role: 'owner' },
      ]),
    );
    // the admin has no TOTP either, so the strict organization's vault stays out of reach
    expect(sorted(await access.edgeGrants(admin.id))).toEqual(
      sorted([
        { edgeId: adminHome, orgId: null, ownerId: admin.id, role: 'owner' },
        { edgeId: office, orgId: org, ownerId: admin.id, role: 'owner' },
        { edgeId: shop, orgId: org, ownerId: member.id, role: 'admin' },
      ]),
    );
    expect(await access.edgeGrants(stranger.id)).toEqual([
      { edgeId: strangerHome, orgId: null, ownerId: stranger.id, role: 'owner' },
    ]);
    expect(vault).toBeGreaterThan(0);

    await t.cloud.database.execute('UPDATE users SET totp_secret = ? WHERE id = ?', ['JBSWY3DPEHPK3PXP', admin.id]);
    const vaultGrant = (await access.edgeGrants(admin.id)).find((g) => g.edgeId === vault);
    expect(vaultGrant).toEqual({ edgeId: vault, orgId: strict, ownerId: admin.id, role: 'owner' });
    expect((await access.visibility(member.id)).edges).toEqual(new Set([memberHome, office, shop]));
  });
});

// PostgreSQL plans by table size (a test's few rows are scanned whole); SQLite's plan shows the indexes
it.skipIf(onPostgres())(
  'finds the reachable edges through indexes: every app socket reloads them every few seconds',
  async () => {
    const statements: { sql: string; params: unknown[] }[] = [];
    const capture = drizzle(async (sql, params) => {
      statements.push({ sql, params });
      return { rows: [] };
    });
    await grantQueries(capture).reachableEdges.all({ userId: 'someone' });
    const [{ sql, params }] = statements as [{ sql: string; params: unknown[] }];
    const plan = (await t.cloud.database.query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params)).map(
      (r) => r.detail,
    );
    // the user's personal edges by edges_user, the organizations' by edges_org; never the whole table
    expect(plan.filter((d) => /\bedges\b/.test(d))).toEqual([
      expect.stringMatching(/^SEARCH edges USING INDEX edges_user/),
      expect.stringMatching(/^SEARCH edges USING INDEX edges_org/),
    ]);
  },
);
