import { and, eq, isNotNull, or, type Placeholder } from 'drizzle-orm';
import type { OrgRole } from '@smarthome/protocol';
import { forbidden } from '@smarthome/protocol/server';
import type { Db } from '../db/database.ts';
import { users } from '../auth/tables.ts';
import { orgMembers, organizations } from './tables.ts';

/**
 * An organization may require multi-factor sign-in of its members (organizations.require_mfa).
 * It is checked on every request, not at sign-in: turning it on applies at once to open
 * sessions and sockets, and enrolling (or disabling) TOTP takes effect on the next request.
 */
export const MFA_ENROLLMENT_REQUIRED = 'mfa_enrollment_required';

/** 403 {"error":"mfa_enrollment_required"}: the organization requires TOTP and the caller has none. */
export const mfaEnrollmentRequired = () => forbidden(MFA_ENROLLMENT_REQUIRED);

/** The auth_invalid message of the Home Assistant socket, where a code alone would say nothing. */
export const MFA_ENROLLMENT_MESSAGE = `${MFA_ENROLLMENT_REQUIRED}: this organization requires multi-factor sign-in; enable TOTP for your account (POST /v1/account/mfa/totp) and connect again`;

/** The caller's role in the organization and whether its MFA requirement shuts them out; null when not a member. */
export async function memberAccess(
  db: Db,
  orgId: string,
  userId: string,
): Promise<{ role: OrgRole; mfaMissing: boolean } | null> {
  const row = await db
    .select({ role: orgMembers.role, requireMfa: organizations.requireMfa, totp: users.totpSecret })
    .from(orgMembers)
    .innerJoin(organizations, eq(organizations.id, orgMembers.orgId))
    .innerJoin(users, eq(users.id, orgMembers.userId))
    .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId)))
    .get();
  if (!row) return null;
  return { role: row.role, mfaMissing: row.requireMfa && !row.totp };
}

/**
 * Subquery: the organizations the user may act in without naming one (no X-Organization-Id):
 * a member, and the organization does not require MFA or the user has it. `userId` may be a
 * placeholder of a prepared statement.
 */
export function usableOrgIds(db: Db, userId: string | Placeholder) {
  return db
    .select({ orgId: orgMembers.orgId })
    .from(orgMembers)
    .innerJoin(organizations, eq(organizations.id, orgMembers.orgId))
    .innerJoin(users, eq(users.id, orgMembers.userId))
    .where(and(eq(orgMembers.userId, userId), or(eq(organizations.requireMfa, false), isNotNull(users.totpSecret))));
}
