import { and, eq } from 'drizzle-orm';
import type { Context } from 'hono';
import { ORG_HEADER, type OrgRole } from '@smarthome/protocol';
import { forbidden, notFound } from '@smarthome/protocol/server';
import type { Db } from '../db/database.ts';
import { orgMembers, organizations } from './tables.ts';
import { memberAccess, mfaEnrollmentRequired } from './mfa-policy.ts';

export type Role = OrgRole;

/** Where a request reads and writes: the caller's personal scope, or one organization. */
export type Scope =
  { kind: 'personal'; userId: string; orgId: null } | { kind: 'org'; userId: string; orgId: string; role: Role };

export async function membership(db: Db, orgId: string, userId: string): Promise<Role | null> {
  const row = await db
    .select({ role: orgMembers.role })
    .from(orgMembers)
    .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId)))
    .get();
  return row?.role ?? null;
}

/**
 * Resolves X-Organization-Id. Without it: personal scope (org_id null). With it the
 * caller must be a member, else 403 (an unknown organization is also 403, so ids
 * cannot be probed through this header), and have MFA when the organization requires
 * it, else 403 mfa_enrollment_required (checked per request: mfa-policy.ts).
 */
export async function resolveScope(db: Db, c: Context, userId: string): Promise<Scope> {
  const orgId = c.req.header(ORG_HEADER)?.trim();
  if (!orgId) return { kind: 'personal', userId, orgId: null };
  const access = await memberAccess(db, orgId, userId);
  if (!access) throw forbidden();
  if (access.mfaMissing) throw mfaEnrollmentRequired();
  return { kind: 'org', userId, orgId, role: access.role };
}

/**
 * For /v1/organizations/{id}/… routes: 404 when the organization does not exist,
 * 403 when the caller is not a member (or not an admin when `admin` is required).
 */
export async function requireOrgRole(db: Db, orgId: string, userId: string, need: 'member' | 'admin'): Promise<Role> {
  const org = await db.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, orgId)).get();
  if (!org) throw notFound('organization not found');
  const role = await membership(db, orgId, userId);
  if (!role) throw forbidden();
  if (need === 'admin' && role !== 'admin') throw forbidden();
  return role;
}
