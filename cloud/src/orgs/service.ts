import { randomUUID } from 'node:crypto';
import { and, asc, count, eq, inArray, not } from 'drizzle-orm';
import type { Branding, InviteBranding, OrgRole, Organization } from '@smarthome/protocol';
import { conflict, forbidden, notFound } from '@smarthome/protocol/server';
import type { CloudDatabase } from '../db/database.ts';
import { users } from '../auth/tables.ts';
import { shares } from '../authz/shares-table.ts';
import { dashboards } from '../dashboards/tables.ts';
import { orgMembers, organizations } from './tables.ts';
import { requireOrgRole } from './scope.ts';

type OrgRow = typeof organizations.$inferSelect;

export interface MemberOut {
  user_id: string;
  email: string;
  name: string | null;
  role: OrgRole;
  joined_at: string;
}

function parseObject(text: string): Record<string, string> {
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, string>) : {};
  } catch {
    return {};
  }
}

export function toOrganization(row: OrgRow): Organization {
  return {
    id: row.id,
    name: row.name,
    description: row.description ?? null,
    branding: parseObject(row.branding) as Branding,
    inviteBranding: parseObject(row.inviteBranding) as InviteBranding,
    require_mfa: row.requireMfa,
    created_at: row.createdAt,
  };
}

/**
 * Merge semantics for the branding objects: a field present in the patch replaces the
 * stored one, a null field clears it (the key is dropped), absent fields stay.
 */
export function mergeBranding(
  stored: Record<string, string>,
  patch: Record<string, string | null | undefined>,
): Record<string, string> {
  const out = { ...stored };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** Organizations, their branding and their members. Authorization is checked here, per operation. */
export class OrgService {
  private readonly database: CloudDatabase;
  private readonly now: () => Date;
  constructor(deps: { database: CloudDatabase; now?: () => Date }) {
    this.database = deps.database;
    this.now = deps.now ?? (() => new Date());
  }
  private get db() {
    return this.database.db;
  }

  async create(userId: string, input: { name: string; description?: string | null }): Promise<Organization> {
    const at = this.now().toISOString();
    const row: OrgRow = {
      id: randomUUID(),
      name: input.name,
      description: input.description ?? null,
      branding: '{}',
      inviteBranding: '{}',
      requireMfa: false,
      createdAt: at,
      updatedAt: at,
    };
    await this.database.transaction(async () => {
      await this.db.insert(organizations).values(row);
      await this.db.insert(orgMembers).values({ orgId: row.id, userId, role: 'admin', joinedAt: at });
    });
    return toOrganization(row);
  }

  async listForUser(userId: string): Promise<Array<Organization & { role: OrgRole }>> {
    const rows = await this.db
      .select({ org: organizations, role: orgMembers.role })
      .from(orgMembers)
      .innerJoin(organizations, eq(organizations.id, orgMembers.orgId))
      .where(eq(orgMembers.userId, userId))
      .orderBy(asc(organizations.createdAt), asc(organizations.id))
      .all();
    return rows.map((r) => ({ ...toOrganization(r.org), role: r.role }));
  }

  private async load(orgId: string): Promise<OrgRow> {
    const row = await this.db.select().from(organizations).where(eq(organizations.id, orgId)).get();
    if (!row) throw notFound('organization not found');
    return row;
  }

  async get(userId: string, orgId: string): Promise<Organization> {
    await requireOrgRole(this.db, orgId, userId, 'member');
    return toOrganization(await this.load(orgId));
  }

  async patch(
    userId: string,
    orgId: string,
    input: { name?: string; description?: string | null; require_mfa?: boolean },
  ): Promise<Organization> {
    await requireOrgRole(this.db, orgId, userId, 'admin');
    const set: Partial<OrgRow> = { updatedAt: this.now().toISOString() };
    if (input.name !== undefined) set.name = input.name;
    if (input.description !== undefined) set.description = input.description;
    if (input.require_mfa !== undefined) {
      // An admin without MFA would shut themselves out of the organization's scope at once.
      if (input.require_mfa && !(await this.hasMfa(userId))) {
        throw conflict('enable multi-factor sign-in for your own account before requiring it of the members');
      }
      set.requireMfa = input.require_mfa;
    }
    await this.db.update(organizations).set(set).where(eq(organizations.id, orgId));
    return toOrganization(await this.load(orgId));
  }

  private async hasMfa(userId: string): Promise<boolean> {
    const row = await this.db.select({ totp: users.totpSecret }).from(users).where(eq(users.id, userId)).get();
    return Boolean(row?.totp);
  }

  async patchBranding(
    userId: string,
    orgId: string,
    input: { description?: string | null; branding?: Branding | null; inviteBranding?: InviteBranding | null },
  ): Promise<void> {
    await requireOrgRole(this.db, orgId, userId, 'admin');
    await this.database.transaction(async () => {
      const row = await this.load(orgId);
      const set: Partial<OrgRow> = { updatedAt: this.now().toISOString() };
      if (input.description !== undefined) set.description = input.description;
      // null for a whole object clears it; an object merges field by field.
      if (input.branding === null) set.branding = '{}';
      else if (input.branding) set.branding = JSON.stringify(mergeBranding(parseObject(row.branding), input.branding));
      if (input.inviteBranding === null) set.inviteBranding = '{}';
      else if (input.inviteBranding)
        set.inviteBranding = JSON.stringify(mergeBranding(parseObject(row.inviteBranding), input.inviteBranding));
      await this.db.update(organizations).set(set).where(eq(organizations.id, orgId));
    });
  }

  // ---- members ----

  private memberQuery() {
    return this.db
      .select({
        user_id: orgMembers.userId,
        email: users.email,
        name: users.name,
        role: orgMembers.role,
        joined_at: orgMembers.joinedAt,
      })
      .from(orgMembers)
      .innerJoin(users, eq(users.id, orgMembers.userId));
  }

  /** Admins first, then by join time. */
  async listMembers(userId: string, orgId: string): Promise<MemberOut[]> {
    await requireOrgRole(this.db, orgId, userId, 'member');
    return this.memberQuery()
      .where(eq(orgMembers.orgId, orgId))
      .orderBy(asc(orgMembers.role), asc(orgMembers.joinedAt), asc(users.email))
      .all();
  }

  private async member(orgId: string, userId: string): Promise<MemberOut> {
    const m = await this.memberQuery()
      .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, userId)))
      .get();
    if (!m) throw notFound('member not found');
    return m;
  }

  private async adminCount(orgId: string): Promise<number> {
    const row = await this.db
      .select({ n: count() })
      .from(orgMembers)
      .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.role, 'admin')))
      .get();
    return row?.n ?? 0;
  }

  /** Admin only. Demoting the last admin answers 409: an organization always keeps one. */
  async setRole(callerId: string, orgId: string, targetId: string, role: OrgRole): Promise<MemberOut> {
    await requireOrgRole(this.db, orgId, callerId, 'admin');
    return this.database.transaction(async () => {
      const target = await this.member(orgId, targetId);
      if (target.role === role) return target;
      if (target.role === 'admin' && (await this.adminCount(orgId)) <= 1) {
        throw conflict('the last admin of an organization cannot be demoted');
      }
      await this.db
        .update(orgMembers)
        .set({ role })
        .where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, targetId)));
      return { ...target, role };
    });
  }

  /**
   * Admins remove anyone; a member may remove only themselves (leave). The last admin
   * cannot be removed (409). The member's user-scoped shares in this organization go too,
   * and so do the shares they made here of things that are not the organization's: an entity
   * share reaches the sharing admin's own edges, a board share their own board, and once out
   * they could neither see nor revoke these, yet the members would keep their home. Shares of
   * the organization's own boards stay (an organization decision, not theirs alone).
   */
  async removeMember(callerId: string, orgId: string, targetId: string): Promise<void> {
    const callerRole = await requireOrgRole(this.db, orgId, callerId, 'member');
    if (targetId !== callerId && callerRole !== 'admin') throw forbidden();
    await this.database.transaction(async () => {
      const target = await this.member(orgId, targetId);
      if (target.role === 'admin' && (await this.adminCount(orgId)) <= 1) {
        throw conflict('the last admin of an organization cannot be removed');
      }
      await this.db.delete(orgMembers).where(and(eq(orgMembers.orgId, orgId), eq(orgMembers.userId, targetId)));
      await this.db.delete(shares).where(and(eq(shares.orgId, orgId), eq(shares.userId, targetId)));
      const orgBoards = (
        await this.db.select({ id: dashboards.id }).from(dashboards).where(eq(dashboards.orgId, orgId)).all()
      ).map((d) => String(d.id));
      await this.db
        .delete(shares)
        .where(
          and(
            eq(shares.orgId, orgId),
            eq(shares.createdBy, targetId),
            orgBoards.length
              ? not(and(eq(shares.resourceType, 'dashboard'), inArray(shares.resourceId, orgBoards))!)
              : undefined,
          ),
        );
    });
  }
}
