import { eq } from 'drizzle-orm';
import type { TransferResourceHandler } from '../transfers/resources.ts';
import { rowId } from '../http/route-inputs.ts';
import { zones } from './tables.ts';

/** Transfer of a zone: the recipient becomes its owner and it becomes personal. */
export const zoneTransferHandler: TransferResourceHandler = {
  authzType: 'zone',
  async load(db, id) {
    const n = /^[0-9]+$/.test(id) ? rowId(id) : null;
    if (n === null) return null;
    const row = await db.select({ userId: zones.userId, orgId: zones.orgId }).from(zones).where(eq(zones.id, n)).get();
    return row ? { ownerId: row.userId, orgId: row.orgId } : null;
  },
  async moveTo(db, id, newOwnerUserId) {
    await db
      .update(zones)
      .set({ userId: newOwnerUserId, orgId: null, updatedAt: new Date().toISOString() })
      .where(eq(zones.id, Number(id)));
  },
};
