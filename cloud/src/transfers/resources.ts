import type { TransferResourceType } from '@smarthome/protocol';
import type { Db } from '../db/database.ts';
import type { Resource } from '../authz/can.ts';

/** Who owns a transferable resource, as can() needs it. */
export interface TransferOwnership {
  ownerId: string;
  orgId: string | null;
}

/**
 * How the transfer service reads and moves one kind of resource. Handlers are stateless:
 * they get the database handle on every call, and both calls run inside the accept
 * transaction, so they must only await database calls (no network, no timers).
 */
export interface TransferResourceHandler {
  /** the resource type can() checks ('manage' is required to offer and, again, at accept) */
  authzType: Resource['type'];
  /** the resource's owner and organization, or null when the id names nothing */
  load(db: Db, id: string): Promise<TransferOwnership | null>;
  /**
   * Gives the resource to newOwnerUserId as a personal resource (org_id null, owner = recipient).
   * May throw an HttpError (e.g. 409 when the recipient already has a resource of that name);
   * the accept transaction then rolls back and the transfer stays pending.
   */
  moveTo(db: Db, id: string, newOwnerUserId: string): Promise<void>;
}

/**
 * resource_type → handler. The map is built at the composition root (modules.ts), so this
 * capability imports none of the resources it moves. Types without a handler (physical_device,
 * user_product, config_entry, automation, script, tag, organization until their owners register
 * one) answer 400 "resource not found or not owned" on POST /v1/transfers, exactly like a
 * resource the caller does not own, so nothing about them can be probed.
 */
export type TransferResourceHandlers = Partial<Record<TransferResourceType, TransferResourceHandler>>;
