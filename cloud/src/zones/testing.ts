import { randomUUID } from 'node:crypto';
import { orgMembers, organizations } from '../orgs/tables.ts';
import { shares } from '../authz/shares-table.ts';
import type { TestCloud } from '../testing/harness.ts';

/**
 * Test fixtures written straight into the database, so these tests do not depend on the
 * organization routes: an organization with an admin and members, and a share.
 */
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
