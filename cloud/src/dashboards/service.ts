import { and, asc, eq, inArray, isNull, ne, or } from 'drizzle-orm';
import type { z } from 'zod';
import type { Dashboard, PutDashboardBody } from '@smarthome/protocol';
import { conflict, forbidden, notFound } from '@smarthome/protocol/server';
import type { CloudDatabase, Db } from '../db/database.ts';
import type { Scope } from '../orgs/scope.ts';
import { can, sharesFor, type Action } from '../authz/can.ts';
import { shares } from '../authz/shares-table.ts';
import { inScope } from '../authz/scope.ts';
import { dashboards, type DashboardRow } from './tables.ts';

export const DEFAULT_TYPE = 'dashboard';
export const DEFAULT_ICON = 'mdi:view-dashboard';

const now = () => new Date().toISOString();
type PutInput = z.output<typeof PutDashboardBody>;

export function toDashboard(r: DashboardRow): Dashboard {
  return {
    id: r.id,
    name: r.name,
    type: r.type,
    title: r.title,
    icon: r.icon,
    url: r.url,
    config: JSON.parse(r.config),
    user_id: r.userId,
    org_id: r.orgId,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

export const dashboardResource = (r: { id: number; userId: string; orgId: string | null }) => ({
  type: 'dashboard' as const,
  id: String(r.id),
  ownerId: r.userId,
  orgId: r.orgId,
});

export function isUniqueViolation(err: unknown): boolean {
  return String((err as Error)?.message ?? '').includes('UNIQUE');
}

/** Removes the shares of a dashboard that was deleted or changed hands. */
export async function dropDashboardShares(db: Db, id: number): Promise<void> {
  await db.delete(shares).where(and(eq(shares.resourceType, 'dashboard'), eq(shares.resourceId, String(id))));
}

/**
 * Dashboards: owned by a user, personal or in one organization; name unique per scope.
 * Besides the scope's own dashboards, a caller sees those shared with them: into the
 * X-Organization-Id organization in org scope, into any of their organizations without it.
 */
export class DashboardService {
  private readonly database: CloudDatabase;
  constructor(database: CloudDatabase) {
    this.database = database;
  }
  private get db(): Db {
    return this.database.db;
  }

  /** Ids (of the given candidates) shared with the caller, as seen from this scope. */
  private async sharedIds(scope: Scope, ids?: string[]): Promise<Set<string>> {
    const grants = await sharesFor(this.db, scope.userId, 'dashboard', ids);
    const visible = [...grants].filter(([, f]) => f.canView || f.canControl || f.canEdit).map(([id]) => id);
    if (!scope.orgId || visible.length === 0) return new Set(visible);
    const intoOrg = await this.db
      .select({ id: shares.resourceId })
      .from(shares)
      .where(
        and(
          eq(shares.resourceType, 'dashboard'),
          eq(shares.orgId, scope.orgId),
          or(isNull(shares.userId), eq(shares.userId, scope.userId)),
          inArray(shares.resourceId, visible),
        ),
      )
      .all();
    return new Set(intoOrg.map((r) => r.id));
  }

  async list(scope: Scope): Promise<Dashboard[]> {
    const own = scope.orgId
      ? eq(dashboards.orgId, scope.orgId)
      : and(isNull(dashboards.orgId), eq(dashboards.userId, scope.userId));
    const shared = [...(await this.sharedIds(scope))].map(Number).filter(Number.isSafeInteger);
    const where = shared.length ? or(own, inArray(dashboards.id, shared)) : own;
    const rows = await this.db.select().from(dashboards).where(where).orderBy(asc(dashboards.id)).all();
    return rows.map(toDashboard);
  }

  /** The dashboard when visible from the scope and can() allows `action`: 404 invisible or unknown, 403 not permitted. */
  async load(scope: Scope, id: number | null, action: Action): Promise<DashboardRow> {
    const row = id === null ? undefined : await this.db.select().from(dashboards).where(eq(dashboards.id, id)).get();
    if (!row) throw notFound('dashboard not found');
    if (!inScope(row, scope) && !(await this.sharedIds(scope, [String(row.id)])).has(String(row.id))) {
      throw notFound('dashboard not found');
    }
    if (!(await can(this.db, scope.userId, action, dashboardResource(row)))) throw forbidden();
    return row;
  }

  /**
   * PUT /v1/ui-dashboard. With id: updates that dashboard. Without: replaces the scope's
   * dashboard of that name, or creates it. Optional fields left out keep their current
   * value on an update and take their defaults on creation (type "dashboard",
   * title = name, icon "mdi:view-dashboard", url null).
   */
  async put(scope: Scope, input: PutInput): Promise<Dashboard> {
    return this.database.transaction(async () => {
      const existing =
        input.id !== undefined ? await this.load(scope, input.id, 'edit') : await this.findByName(scope, input.name);
      if (existing) {
        if (input.id === undefined && !(await can(this.db, scope.userId, 'edit', dashboardResource(existing))))
          throw forbidden();
        return this.update(existing, input);
      }
      return this.create(scope, input);
    });
  }

  private async findByName(scope: Scope, name: string): Promise<DashboardRow | undefined> {
    const where = scope.orgId
      ? and(eq(dashboards.orgId, scope.orgId), eq(dashboards.name, name))
      : and(isNull(dashboards.orgId), eq(dashboards.userId, scope.userId), eq(dashboards.name, name));
    return this.db.select().from(dashboards).where(where).get();
  }

  private async create(scope: Scope, input: PutInput): Promise<Dashboard> {
    const at = now();
    const insert = this.db.insert(dashboards).values({
      userId: scope.userId,
      orgId: scope.orgId,
      name: input.name,
      type: input.type ?? DEFAULT_TYPE,
      title: input.title ?? input.name,
      icon: input.icon ?? DEFAULT_ICON,
      url: input.url ?? null,
      config: JSON.stringify(input.config),
      createdAt: at,
      updatedAt: at,
    });
    try {
      return toDashboard(await insert.returning().get());
    } catch (err) {
      // the partial unique indexes on (scope, name) settle a race between two creations
      if (isUniqueViolation(err)) throw conflict(`a dashboard named "${input.name}" already exists`);
      throw err;
    }
  }

  private async update(existing: DashboardRow, input: PutInput): Promise<Dashboard> {
    if (input.name !== existing.name) {
      const sameScope = existing.orgId
        ? eq(dashboards.orgId, existing.orgId)
        : and(isNull(dashboards.orgId), eq(dashboards.userId, existing.userId));
      const clash = await this.db
        .select({ id: dashboards.id })
        .from(dashboards)
        .where(and(sameScope, eq(dashboards.name, input.name), ne(dashboards.id, existing.id)))
        .get();
      if (clash) throw conflict(`a dashboard named "${input.name}" already exists`);
    }
    const row = await this.db
      .update(dashboards)
      .set({
        name: input.name,
        config: JSON.stringify(input.config),
        type: input.type ?? existing.type,
        title: input.title ?? existing.title,
        icon: input.icon ?? existing.icon,
        url: input.url === undefined ? existing.url : input.url,
        updatedAt: now(),
      })
      .where(eq(dashboards.id, existing.id))
      .returning()
      .get();
    return toDashboard(row);
  }

  async remove(scope: Scope, id: number | null): Promise<void> {
    const row = await this.load(scope, id, 'manage');
    await this.database.transaction(async () => {
      await this.db.delete(dashboards).where(eq(dashboards.id, row.id));
      await dropDashboardShares(this.db, row.id);
    });
  }
}
