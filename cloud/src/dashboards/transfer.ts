import { and, eq, isNull } from 'drizzle-orm';
import { conflict } from '@smarthome/protocol/server';
import type { TransferResourceHandler } from '../transfers/resources.ts';
import { rowId } from '../http/route-inputs.ts';
import { dropDashboardShares } from './service.ts';
import { dashboards } from './tables.ts';

/**
 * Transfer of a dashboard: the recipient becomes its owner and it becomes personal. The
 * previous owner's shares of it are dropped (they granted access in the sender's name).
 */
export const dashboardTransferHandler: TransferResourceHandler = {
  authzType: 'dashboard',
  async load(db, id) {
    const n = /^[0-9]+$/.test(id) ? rowId(id) : null;
    if (n === null) return null;
    const row = await db
      .select({ userId: dashboards.userId, orgId: dashboards.orgId })
      .from(dashboards)
      .where(eq(dashboards.id, n))
      .get();
    return row ? { ownerId: row.userId, orgId: row.orgId } : null;
  },
  async moveTo(db, id, newOwnerUserId) {
    const n = Number(id);
    const row = await db.select({ name: dashboards.name }).from(dashboards).where(eq(dashboards.id, n)).get();
    if (!row) return;
    const clash = await db
      .select({ id: dashboards.id })
      .from(dashboards)
      .where(and(isNull(dashboards.orgId), eq(dashboards.userId, newOwnerUserId), eq(dashboards.name, row.name)))
      .get();
    if (clash) throw conflict(`you already have a dashboard named "${row.name}"; rename it first`);
    await db
      .update(dashboards)
      .set({ userId: newOwnerUserId, orgId: null, updatedAt: new Date().toISOString() })
      .where(eq(dashboards.id, n));
    await dropDashboardShares(db, n);
  },
};
