import { and, asc, eq, isNull, ne, or } from 'drizzle-orm';
import type { Share, ShareResourceType } from '@smarthome/protocol';
import { badRequest, conflict, forbidden, notFound } from '@smarthome/protocol/server';
import type { CloudDatabase } from '../db/database.ts';
import { shares } from '../authz/shares-table.ts';
import { membership, requireOrgRole } from './scope.ts';

type ShareRow = typeof shares.$inferSelect;

/**
 * How a resource type's owning module vouches for a share target: 'ok' when the resource
 * exists and the caller may 'manage' it (see authz/can.ts), 'missing' when it does not exist
 * (→ 404), 'forbidden' when the caller may not share it (→ 403).
 */
export type ShareTargetCheck = (callerId: string, resourceId: string) => Promise<'ok' | 'missing' | 'forbidden'>;

export interface CreateShareInput {
  resource_type: ShareResourceType;
  resource_id: string;
  can_view: boolean;
  can_control: boolean;
  can_edit: boolean;
  user_id: string | null;
}

/** What PATCH may change: the flags and the member; absent fields stay. */
export type ShareChanges = Partial<Pick<CreateShareInput, 'can_view' | 'can_control' | 'can_edit' | 'user_id'>>;

const toShare = (r: ShareRow): Share => ({
  id: r.id,
  org_id: r.orgId,
  resource_type: r.resourceType as ShareResourceType,
  resource_id: r.resourceId,
  can_view: r.canView,
  can_control: r.canControl,
  can_edit: r.canEdit,
  user_id: r.userId,
  created_at: r.createdAt,
});

/**
 * Shares of resources into an organization.
 *
 * What an admin may share: any of the eight resource types. Types whose records live in
 * the cloud register a ShareTargetCheck (`targets`, see share-targets.ts: dashboards), and
 * then the resource must exist and the admin must be allowed to 'manage' it — so an admin
 * cannot pull someone else's resource into their organization. Types without a backing store in the cloud (entity and
 * device ids live on edges; lock_* have no store at all) cannot be verified and are
 * accepted as opaque ids: a share only ever widens access for this organization's members,
 * and the route that serves such a resource still asks can() with the real owner.
 *
 * Visibility: admins list every share of the organization; other members list only the
 * shares that apply to them (user_id null or their own id), so a member cannot enumerate
 * what was shared with other individual members.
 *
 * Updates (PATCH) keep the share's id and creator. Any admin may narrow a share (turn flags
 * off), as any admin may delete it. Widening it (a flag on, or another member) is checked as
 * creating it would be: a dashboard's target check with the caller; for the other types the
 * caller must be the admin who made it, since an entity or device share also covers its
 * creator's personal edges, which another admin has no say over.
 */
export class ShareService {
  private readonly database: CloudDatabase;
  private readonly targets: Partial<Record<ShareResourceType, ShareTargetCheck>>;
  private readonly now: () => Date;
  constructor(deps: {
    database: CloudDatabase;
    targets?: Partial<Record<ShareResourceType, ShareTargetCheck>>;
    now?: () => Date;
  }) {
    this.database = deps.database;
    this.targets = deps.targets ?? {};
    this.now = deps.now ?? (() => new Date());
  }
  private get db() {
    return this.database.db;
  }

  private async validate(orgId: string, input: CreateShareInput): Promise<void> {
    if (!input.can_view && !input.can_control && !input.can_edit) {
      throw badRequest('a share must grant at least one of can_view, can_control, can_edit');
    }
    if (input.user_id !== null && !(await membership(this.db, orgId, input.user_id))) {
      throw badRequest('user_id: not a member of this organization');
    }
  }

  private async checkTarget(callerId: string, type: ShareResourceType, resourceId: string): Promise<boolean> {
    const check = this.targets[type];
    if (!check) return false;
    const verdict = await check(callerId, resourceId);
    if (verdict === 'missing') throw notFound(`${type} not found`);
    if (verdict === 'forbidden') throw forbidden();
    return true;
  }

  /** 409 when another share (not `except`) of the resource has this scope. */
  private async requireFreeScope(orgId: string, input: CreateShareInput, except?: number): Promise<void> {
    const same = await this.db
      .select({ id: shares.id })
      .from(shares)
      .where(
        and(
          eq(shares.orgId, orgId),
          eq(shares.resourceType, input.resource_type),
          eq(shares.resourceId, input.resource_id),
          input.user_id === null ? isNull(shares.userId) : eq(shares.userId, input.user_id),
          except === undefined ? undefined : ne(shares.id, except),
        ),
      )
      .get();
    if (same)
      throw conflict(`this resource is already shared with the same scope (share ${same.id}); change that one instead`);
  }

  async create(callerId: string, orgId: string, input: CreateShareInput): Promise<Share> {
    await requireOrgRole(this.db, orgId, callerId, 'admin');
    await this.validate(orgId, input);
    await this.checkTarget(callerId, input.resource_type, input.resource_id);
    return this.database.transaction(async () => {
      await this.requireFreeScope(orgId, input);
      const row = await this.db
        .insert(shares)
        .values({
          orgId,
          resourceType: input.resource_type,
          resourceId: input.resource_id,
          canView: input.can_view,
          canControl: input.can_control,
          canEdit: input.can_edit,
          userId: input.user_id,
          createdBy: callerId,
          createdAt: this.now().toISOString(),
        })
        .returning()
        .get();
      return toShare(row);
    });
  }

  async update(callerId: string, orgId: string, shareId: number, changes: ShareChanges): Promise<Share> {
    await requireOrgRole(this.db, orgId, callerId, 'admin');
    return this.database.transaction(async () => {
      const row = await this.db
        .select()
        .from(shares)
        .where(and(eq(shares.id, shareId), eq(shares.orgId, orgId)))
        .get();
      if (!row) throw notFound('share not found');
      const before = toShare(row);
      const next: CreateShareInput = { ...before, ...changes };
      await this.validate(orgId, next);
      const widens =
        (next.can_view && !before.can_view) ||
        (next.can_control && !before.can_control) ||
        (next.can_edit && !before.can_edit) ||
        next.user_id !== before.user_id;
      if (widens && !(await this.checkTarget(callerId, next.resource_type, next.resource_id))) {
        if (row.createdBy !== callerId) throw forbidden();
      }
      if (next.user_id !== before.user_id) await this.requireFreeScope(orgId, next, shareId);
      const same =
        next.can_view === before.can_view &&
        next.can_control === before.can_control &&
        next.can_edit === before.can_edit &&
        next.user_id === before.user_id;
      // Nothing to write: no write, so no access-cache notice to every session and replica.
      if (same) return before;
      const updated = await this.db
        .update(shares)
        .set({ canView: next.can_view, canControl: next.can_control, canEdit: next.can_edit, userId: next.user_id })
        .where(eq(shares.id, shareId))
        .returning()
        .get();
      return toShare(updated);
    });
  }

  async list(callerId: string, orgId: string): Promise<Share[]> {
    const role = await requireOrgRole(this.db, orgId, callerId, 'member');
    const rows = await this.db
      .select()
      .from(shares)
      .where(
        and(
          eq(shares.orgId, orgId),
          role === 'admin' ? undefined : or(isNull(shares.userId), eq(shares.userId, callerId)),
        ),
      )
      .orderBy(asc(shares.id))
      .all();
    return rows.map(toShare);
  }

  async remove(callerId: string, orgId: string, shareId: number): Promise<void> {
    await requireOrgRole(this.db, orgId, callerId, 'admin');
    const deleted = await this.db
      .delete(shares)
      .where(and(eq(shares.id, shareId), eq(shares.orgId, orgId)))
      .returning({ id: shares.id })
      .all();
    if (deleted.length === 0) throw notFound('share not found');
  }
}
