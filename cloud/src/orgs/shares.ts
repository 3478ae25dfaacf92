import { and, asc, eq, isNull, or } from 'drizzle-orm';
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

  async create(callerId: string, orgId: string, input: CreateShareInput): Promise<Share> {
    await requireOrgRole(this.db, orgId, callerId, 'admin');
    if (!input.can_view && !input.can_control && !input.can_edit) {
      throw badRequest('a share must grant at least one of can_view, can_control, can_edit');
    }
    if (input.user_id !== null && !(await membership(this.db, orgId, input.user_id))) {
      throw badRequest('user_id: not a member of this organization');
    }
    const check = this.targets[input.resource_type];
    if (check) {
      const verdict = await check(callerId, input.resource_id);
      if (verdict === 'missing') throw notFound(`${input.resource_type} not found`);
      if (verdict === 'forbidden') throw forbidden();
    }
    return this.database.transaction(async () => {
      const same = await this.db
        .select({ id: shares.id })
        .from(shares)
        .where(
          and(
            eq(shares.orgId, orgId),
            eq(shares.resourceType, input.resource_type),
            eq(shares.resourceId, input.resource_id),
            input.user_id === null ? isNull(shares.userId) : eq(shares.userId, input.user_id),
          ),
        )
        .get();
      if (same)
        throw conflict(`this resource is already shared with the same scope (share ${same.id}); delete it first`);
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
