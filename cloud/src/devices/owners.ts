import type { Device } from '@smarthome/protocol';
import type { Db } from '../db/database.ts';
import { orgOwners } from '../orgs/owner.ts';
import type { EdgeGrant } from './access.ts';

/**
 * Who owns each edge, as a device's user_id: the edge's user for a personal edge, the
 * organization's owner (orgOwners) for an organization's edge. Edges know nothing of cloud
 * users, so what they report in user_id (null for discovered devices) is replaced.
 */
export async function edgeOwners(db: Db, grants: EdgeGrant[]): Promise<Map<number, string>> {
  const orgs = await orgOwners(
    db,
    grants.flatMap((g) => (g.orgId ? [g.orgId] : [])),
  );
  return new Map(grants.map((g) => [g.edgeId, (g.orgId && orgs.get(g.orgId)) || g.ownerId]));
}

export function withOwner(device: Device, owners: Map<number, string>): Device {
  const owner = device.edge_id == null ? undefined : owners.get(device.edge_id);
  return owner === undefined ? device : { ...device, user_id: owner };
}
