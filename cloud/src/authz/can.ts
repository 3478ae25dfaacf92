import { and, eq, inArray, isNull, or } from 'drizzle-orm';
import type { ShareResourceType } from '@smarthome/protocol';
import type { Db } from '../db/database.ts';
import { memberAccess, usableOrgIds } from '../orgs/mfa-policy.ts';
import { shares } from './shares-table.ts';

/**
 * view: read it · control: operate it (call services) · edit: change it · manage: delete,
 * transfer or share it.
 */
export type Action = 'view' | 'control' | 'edit' | 'manage';

/** What authorization needs to know about a loaded resource. */
export interface Resource {
  /** share resource type when the resource can be shared (entity, device, dashboard, lock_*) */
  type: ShareResourceType | 'zone' | 'edge' | 'voip_account' | 'automation' | 'config_entry' | 'organization';
  id: string;
  /** the owning user */
  ownerId: string;
  /** the organization the resource belongs to, or null for a personal resource */
  orgId: string | null;
}

const SHAREABLE = new Set<string>([
  'entity',
  'device',
  'dashboard',
  'lock_access_group',
  'lock_schedule',
  'lock_appointment',
  'lock_credential',
  'lock_visitor',
]);

/**
 * The one authorization rule, used by every route where it loads a resource (a member of an
 * organization that requires MFA they lack counts as no member):
 * - the owner may do everything; an organization's resource stays the organization's, so its
 *   owner has these rights only while a member (one who left or was removed keeps nothing);
 * - in the resource's organization, admins may do everything and members may view and control;
 * - a share into an organization grants that organization's members (or the one member it
 *   names) what its flags say: can_view → view, can_control → view + control, can_edit → view + edit.
 */
export async function can(db: Db, userId: string, action: Action, resource: Resource): Promise<boolean> {
  if (resource.ownerId === userId && !resource.orgId) return true;
  if (resource.orgId) {
    const access = await memberAccess(db, resource.orgId, userId);
    // a member shut out by the organization's MFA requirement counts as none (mfa-policy.ts)
    const m = access && !access.mfaMissing ? access : null;
    if (m && (m.role === 'admin' || resource.ownerId === userId)) return true;
    if (m && (action === 'view' || action === 'control')) return true;
  }
  if (action === 'manage' || !SHAREABLE.has(resource.type)) return false;
  const grants = await sharesFor(db, userId, resource.type as ShareResourceType, [resource.id]);
  const flags = grants.get(resource.id);
  if (!flags) return false;
  if (action === 'view') return flags.canView || flags.canControl || flags.canEdit;
  if (action === 'control') return flags.canControl;
  return flags.canEdit;
}

export interface ShareFlags {
  canView: boolean;
  canControl: boolean;
  canEdit: boolean;
}

/**
 * The combined share flags the user holds on each of the given resources (through every
 * organization the user belongs to and may act in). Used by list endpoints to add shared rows.
 */
export async function sharesFor(
  db: Db,
  userId: string,
  type: ShareResourceType,
  ids?: string[],
): Promise<Map<string, ShareFlags>> {
  const memberOrgs = usableOrgIds(db, userId);
  const rows = await db
    .select()
    .from(shares)
    .where(
      and(
        eq(shares.resourceType, type),
        inArray(shares.orgId, memberOrgs),
        or(isNull(shares.userId), eq(shares.userId, userId)),
        ids ? inArray(shares.resourceId, ids) : undefined,
      ),
    )
    .all();
  const out = new Map<string, ShareFlags>();
  for (const r of rows) {
    const prev = out.get(r.resourceId) ?? { canView: false, canControl: false, canEdit: false };
    out.set(r.resourceId, {
      canView: prev.canView || r.canView,
      canControl: prev.canControl || r.canControl,
      canEdit: prev.canEdit || r.canEdit,
    });
  }
  return out;
}
