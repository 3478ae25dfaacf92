import { and, asc, eq, isNull } from 'drizzle-orm';
import type { z } from 'zod';
import type { CreateZoneBody, PatchZoneBody, Zone } from '@smarthome/protocol';
import { forbidden, notFound } from '@smarthome/protocol/server';
import type { Db } from '../db/database.ts';
import type { Scope } from '../orgs/scope.ts';
import { can, type Action } from '../authz/can.ts';
import { inScope } from '../authz/scope.ts';
import { zones, type ZoneRow } from './tables.ts';

const now = () => new Date().toISOString();

export function toZone(r: ZoneRow): Zone {
  return {
    id: r.id,
    name: r.name,
    icon: r.icon,
    latitude: r.latitude,
    longitude: r.longitude,
    radius: r.radius,
    passive: r.passive,
    user_id: r.userId,
    org_id: r.orgId,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

export const zoneResource = (r: ZoneRow) => ({
  type: 'zone' as const,
  id: String(r.id),
  ownerId: r.userId,
  orgId: r.orgId,
});

/** Zones: circles owned by a user, personal (org_id null) or in one organization. */
export class ZoneService {
  private readonly db: () => Db;
  constructor(db: () => Db) {
    this.db = db;
  }

  async create(scope: Scope, input: z.output<typeof CreateZoneBody>): Promise<Zone> {
    const at = now();
    const row = await this.db()
      .insert(zones)
      .values({
        userId: scope.userId,
        orgId: scope.orgId,
        name: input.name,
        icon: input.icon,
        latitude: input.latitude,
        longitude: input.longitude,
        radius: input.radius,
        passive: input.passive,
        createdAt: at,
        updatedAt: at,
      })
      .returning()
      .get();
    return toZone(row);
  }

  async list(scope: Scope): Promise<Zone[]> {
    const where = scope.orgId ? eq(zones.orgId, scope.orgId) : and(isNull(zones.orgId), eq(zones.userId, scope.userId));
    const rows = await this.db().select().from(zones).where(where).orderBy(asc(zones.id)).all();
    return rows.map(toZone);
  }

  /** The zone when it is in scope and can() allows `action`: 404 out of scope or unknown, 403 not permitted. */
  async load(scope: Scope, id: number | null, action: Action): Promise<ZoneRow> {
    const row = id === null ? undefined : await this.db().select().from(zones).where(eq(zones.id, id)).get();
    if (!row || !inScope(row, scope)) throw notFound('zone not found');
    if (!(await can(this.db(), scope.userId, action, zoneResource(row)))) throw forbidden();
    return row;
  }

  async patch(scope: Scope, id: number | null, input: z.output<typeof PatchZoneBody>): Promise<Zone> {
    await this.load(scope, id, 'edit');
    const changes: Partial<typeof zones.$inferInsert> = { updatedAt: now() };
    if (input.name !== undefined) changes.name = input.name;
    if (input.icon !== undefined) changes.icon = input.icon;
    if (input.latitude !== undefined) changes.latitude = input.latitude;
    if (input.longitude !== undefined) changes.longitude = input.longitude;
    if (input.radius !== undefined) changes.radius = input.radius;
    if (input.passive !== undefined) changes.passive = input.passive;
    const row = await this.db()
      .update(zones)
      .set(changes)
      .where(eq(zones.id, id as number))
      .returning()
      .get();
    return toZone(row);
  }

  async remove(scope: Scope, id: number | null): Promise<void> {
    const row = await this.load(scope, id, 'manage');
    await this.db().delete(zones).where(eq(zones.id, row.id));
  }
}
