import { eq } from 'drizzle-orm';
import type { ShareResourceType } from '@smarthome/protocol';
import type { Db } from '../db/database.ts';
import { can } from '../authz/can.ts';
import { dashboards } from '../dashboards/tables.ts';
import { dashboardResource } from '../dashboards/service.ts';
import type { ShareTargetCheck } from './shares.ts';

/**
 * A dashboard can be shared by whoever may 'manage' it (its owner, or an admin of its
 * organization). A dashboard the caller cannot even see answers like a missing one (404),
 * so share creation cannot be used to probe other users' dashboard ids.
 */
export function dashboardShareCheck(db: () => Db): ShareTargetCheck {
  return async (callerId, resourceId) => {
    if (!/^[0-9]{1,15}$/.test(resourceId)) return 'missing';
    const row = await db()
      .select({ id: dashboards.id, userId: dashboards.userId, orgId: dashboards.orgId })
      .from(dashboards)
      .where(eq(dashboards.id, Number(resourceId)))
      .get();
    if (!row) return 'missing';
    const resource = dashboardResource(row);
    if (!(await can(db(), callerId, 'view', resource))) return 'missing';
    return (await can(db(), callerId, 'manage', resource)) ? 'ok' : 'forbidden';
  };
}

/** The share targets the cloud can verify; other types are accepted as opaque ids (see ShareService). */
export function shareTargetChecks(db: () => Db): Partial<Record<ShareResourceType, ShareTargetCheck>> {
  return { dashboard: dashboardShareCheck(db) };
}
