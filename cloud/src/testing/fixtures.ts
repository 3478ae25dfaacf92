import { randomUUID } from 'node:crypto';
import type { EntityState, tunnel } from '@smarthome/protocol';
import { orgMembers, organizations } from '../orgs/tables.ts';
import { shares } from '../authz/shares-table.ts';
import type { TestCloud } from './harness.ts';

/**
 * Test fixtures written straight into the database (so a test does not depend on the routes
 * that would otherwise create them): organizations, memberships, shares, subscriptions, and
 * edge snapshots.
 */

/** An organization with an admin and members, written straight into the database. */
export async function makeOrg(
  t: TestCloud,
  admin: { id: string },
  members: { id: string }[] = [],
  name = 'Org',
): Promise<string> {
  const id = randomUUID();
  const at = new Date().toISOString();
  const db = t.cloud.database.db;
  await db.insert(organizations).values({ id, name, createdAt: at, updatedAt: at });
  await db.insert(orgMembers).values({ orgId: id, userId: admin.id, role: 'admin', joinedAt: at });
  for (const m of members)
    await db.insert(orgMembers).values({ orgId: id, userId: m.id, role: 'member', joinedAt: at });
  return id;
}

export async function share(
  t: TestCloud,
  orgId: string,
  resourceType: string,
  resourceId: string | number,
  flags: { view?: boolean; control?: boolean; edit?: boolean; userId?: string | null },
  createdBy: string,
): Promise<void> {
  await t.cloud.database.db.insert(shares).values({
    orgId,
    resourceType,
    resourceId: String(resourceId),
    canView: flags.view ?? false,
    canControl: flags.control ?? false,
    canEdit: flags.edit ?? false,
    userId: flags.userId ?? null,
    createdBy,
    createdAt: new Date().toISOString(),
  });
}

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

/** A subscription of `userId` to a plan, as the billing gateway would write it. */
export async function subscribe(t: TestCloud, userId: string, planId: number, status = 'active'): Promise<string> {
  const id = randomUUID();
  const at = new Date().toISOString();
  await t.cloud.database.execute(
    `INSERT INTO subscriptions (id, user_id, plan_id, status, gateway_provider, auto_renew, created_at, updated_at)
    VALUES (?, ?, ?, ?, 'app_store', 1, ?, ?)`,
    [id, userId, planId, status, at, at],
  );
  return id;
}

/** The state of sampleSnapshot's first lamp (`light.lamp_1`), as a state delta carries it. */
export const lampState = (state: string, attributes: Record<string, unknown> = {}): EntityState => ({
  entity_id: 'light.lamp_1',
  name: 'Lamp 1',
  domain: 'light',
  platform: 'demo',
  state,
  attributes,
});

/** A snapshot with n devices (one entity each), the given config entries and automations. */
export function sampleSnapshot(n: { devices?: number; entries?: number; automations?: number } = {}): tunnel.Snapshot {
  const devices = Array.from({ length: n.devices ?? 0 }, (_, i) => ({
    id: i + 1,
    name: `Lamp ${i + 1}`,
    manufacturer: 'Acme',
    model: 'L1',
    config_entry_id: 1,
    user_id: null,
  }));
  const entities = devices.map((d) => ({
    id: d.id,
    entity_id: `light.lamp_${d.id}`,
    name: d.name,
    domain: 'light',
    platform: 'demo',
    unique_id: `u${d.id}`,
    config_entry_id: 1,
    device_registry_id: d.id,
  }));
  return {
    devices,
    entities,
    states: entities.map((e) => ({
      entity_id: e.entity_id,
      name: e.name,
      domain: 'light',
      platform: 'demo',
      state: 'off',
      attributes: { brightness: 0 },
    })),
    config_entries: Array.from({ length: n.entries ?? 0 }, (_, i) => ({
      id: i + 1,
      domain: 'demo',
      title: `Demo ${i + 1}`,
      source: 'user',
      state: 'loaded',
      created_at: new Date().toISOString(),
    })),
    automations: Array.from({ length: n.automations ?? 0 }, (_, i) => ({
      id: `a${i + 1}`,
      edge_id: null,
      alias: `Auto ${i + 1}`,
      enabled: true,
      mode: 'single' as const,
      webhook_id: null,
    })),
  };
}

/** Two edges ("A", "B") of one new user, for tests of per-edge storage. */
export async function twoEdges(t: TestCloud): Promise<{ edgeA: number; edgeB: number }> {
  const u = await t.user();
  const scope = { kind: 'personal' as const, userId: u.id, orgId: null };
  const edgeA = (await t.cloud.services.edges.create(scope, { name: 'A' })).edge.id;
  const edgeB = (await t.cloud.services.edges.create(scope, { name: 'B' })).edge.id;
  return { edgeA, edgeB };
}
