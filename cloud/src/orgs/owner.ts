import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Db } from '../db/database.ts';
import { orgMembers } from './tables.ts';

/**
 * The owner of each organization, for answers that name one user (a device's user_id on an
 * organization's edge). Organizations have no owner column: the owner is the admin who has
 * been one longest (earliest joined_at, then lowest user id), which is the creator for as
 * long as the creator stays an admin. An organization always keeps an admin (the last one
 * can be neither demoted nor removed).
 */
export async function orgOwners(db: Db, orgIds: string[]): Promise<Map<string, string>> {
  const owners = new Map<string, string>();
  if (orgIds.length === 0) return owners;
  const admins = await db
    .select({ orgId: orgMembers.orgId, userId: orgMembers.userId })
    .from(orgMembers)
    .where(and(inArray(orgMembers.orgId, [...new Set(orgIds)]), eq(orgMembers.role, 'admin')))
    .orderBy(asc(orgMembers.joinedAt), asc(orgMembers.userId))
    .all();
  for (const a of admins) if (!owners.has(a.orgId)) owners.set(a.orgId, a.userId);
  return owners;
}
