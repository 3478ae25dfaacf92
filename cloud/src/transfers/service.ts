import { and, desc, eq, lte, or } from 'drizzle-orm';
import type { z } from 'zod';
import { normalizeEmail, type CreateTransferBody, type Transfer, type TransferResourceType } from '@smarthome/protocol';
import { HttpError, badRequest, conflict, forbidden, notFound } from '@smarthome/protocol/server';
import type { CloudDatabase, Db } from '../db/database.ts';
import type { AuthService } from '../auth/service.ts';
import { users } from '../auth/tables.ts';
import { can } from '../authz/can.ts';
import { mayClaim, type Claimant } from '../auth/claim.ts';
import type { TransferResourceHandlers } from './resources.ts';
import { transfers, type TransferRow } from './tables.ts';
import type { MailQueue } from '../mail/queue.ts';
import { renderMail } from '../mail/templates.ts';

export const TRANSFER_TTL_MS = 7 * 24 * 3600 * 1000;
const NOT_OWNED = 'resource not found or not owned';

export interface TransferServiceDeps {
  database: CloudDatabase;
  auth: AuthService;
  handlers: TransferResourceHandlers;
  /** clock, for tests */
  now?: () => Date;
  /** the transfer request to the recipient and the outcome to the sender (none: no mail) */
  mail?: MailQueue;
  publicUrl?: () => string;
}

type Action = 'accept' | 'decline' | 'cancel';

const isRecipient = (account: Claimant, row: TransferRow) => mayClaim(account, { email: row.toEmail });

/**
 * Transfers: pending → accepted | declined | cancelled | expired. Expiry is applied on
 * every read and action (pending rows past expires_at are marked expired first), so no
 * sweeper is needed. Accept moves ownership through the resource's registered handler,
 * re-checking in the same transaction that the sender may still manage the resource.
 */
export class TransferService {
  private readonly deps: TransferServiceDeps;
  constructor(deps: TransferServiceDeps) {
    this.deps = deps;
  }
  private get db(): Db {
    return this.deps.database.db;
  }
  private now(): Date {
    return this.deps.now ? this.deps.now() : new Date();
  }

  private toTransfer(r: TransferRow, callerId: string): Transfer {
    return {
      id: r.id,
      from_user_id: r.fromUserId,
      to_email: r.toEmail,
      resource_type: r.resourceType as TransferResourceType,
      resource_id: r.resourceId,
      status: r.status,
      metadata: r.metadata === null ? null : JSON.parse(r.metadata),
      created_at: r.createdAt,
      expires_at: r.expiresAt,
      responded_at: r.respondedAt,
      direction: r.fromUserId === callerId ? 'sent' : 'received',
    };
  }

  /** Marks every pending transfer past its expiry as expired. */
  private async expireDue(): Promise<void> {
    await this.db
      .update(transfers)
      .set({ status: 'expired' })
      .where(and(eq(transfers.status, 'pending'), lte(transfers.expiresAt, this.now().toISOString())));
  }

  /** Whether `userId` may hand the resource over (can(..., 'manage') on the loaded resource). */
  private async owns(userId: string, type: string, id: string): Promise<boolean> {
    const handler = this.deps.handlers[type as TransferResourceType];
    if (!handler) return false;
    const owner = await handler.load(this.db, id);
    if (!owner) return false;
    return can(this.db, userId, 'manage', { type: handler.authzType, id, ownerId: owner.ownerId, orgId: owner.orgId });
  }

  async create(userId: string, input: z.output<typeof CreateTransferBody>): Promise<Transfer> {
    const me = await this.deps.auth.getUser(userId);
    if (input.to_email === normalizeEmail(me.email))
      throw badRequest('to_email: cannot transfer a resource to yourself');
    if (!(await this.owns(userId, input.resource_type, input.resource_id))) throw badRequest(NOT_OWNED);
    await this.expireDue();
    const pending = await this.db
      .select({ id: transfers.id })
      .from(transfers)
      .where(
        and(
          eq(transfers.resourceType, input.resource_type),
          eq(transfers.resourceId, input.resource_id),
          eq(transfers.status, 'pending'),
        ),
      )
      .get();
    if (pending) throw conflict(`transfer ${pending.id} of this resource is already pending; cancel it first`);
    const at = this.now();
    const row = await this.deps.database.transaction(async () => {
      const inserted = await this.db
        .insert(transfers)
        .values({
          fromUserId: userId,
          toEmail: input.to_email,
          resourceType: input.resource_type,
          resourceId: input.resource_id,
          status: 'pending',
          metadata: input.metadata == null ? null : JSON.stringify(input.metadata),
          createdAt: at.toISOString(),
          expiresAt: new Date(at.getTime() + TRANSFER_TTL_MS).toISOString(),
          respondedAt: null,
        })
        .returning()
        .get();
      // In the same transaction: the mail exists exactly when the transfer does.
      await this.queueRequestMail(inserted, me);
      return inserted;
    });
    return this.toTransfer(row, userId);
  }

  private async queueRequestMail(row: TransferRow, sender: { name: string | null; email: string }): Promise<void> {
    if (!this.deps.mail) return;
    const base = this.deps.publicUrl?.() ?? 'http://localhost';
    const name = metadataName(row.metadata) ?? row.resourceId;
    const rendered = renderMail(
      'transfer_request',
      'en',
      {
        sender: sender.name || sender.email,
        resource: row.resourceType,
        name,
        email: row.toEmail,
        expires: row.expiresAt.slice(0, 10),
      },
      { link: `${base}/transfers/${row.id}` },
    );
    await this.deps.mail.enqueue({ kind: 'transfer_request', ref: `transfer:${row.id}`, to: row.toEmail, ...rendered });
  }

  /** The outcome (accepted / declined) to the sender. */
  private async queueOutcomeMail(row: TransferRow): Promise<void> {
    if (!this.deps.mail) return;
    const sender = await this.db.select({ email: users.email }).from(users).where(eq(users.id, row.fromUserId)).get();
    if (!sender) return;
    const rendered = renderMail('transfer_outcome', 'en', {
      recipient: row.toEmail,
      resource: row.resourceType,
      name: metadataName(row.metadata) ?? row.resourceId,
      outcome: row.status,
    });
    await this.deps.mail.enqueue({
      kind: 'transfer_outcome',
      ref: `transfer-outcome:${row.id}`,
      to: sender.email,
      ...rendered,
    });
  }

  async list(userId: string): Promise<Transfer[]> {
    const me = await this.deps.auth.getUser(userId);
    await this.expireDue();
    const rows = await this.db
      .select()
      .from(transfers)
      .where(or(eq(transfers.fromUserId, userId), eq(transfers.toEmail, normalizeEmail(me.email))))
      .orderBy(desc(transfers.id))
      .all();
    return rows.filter((r) => r.fromUserId === userId || isRecipient(me, r)).map((r) => this.toTransfer(r, userId));
  }

  /**
   * accept / decline (recipient) and cancel (sender). 404 when the caller is neither
   * party (or the id is unknown), 403 when the caller is the other party, 409 when the
   * transfer is no longer pending.
   */
  async act(userId: string, id: number | null, action: Action): Promise<Transfer> {
    const me = await this.deps.auth.getUser(userId);
    await this.expireDue();
    const row = id === null ? undefined : await this.db.select().from(transfers).where(eq(transfers.id, id)).get();
    const isSender = row?.fromUserId === userId;
    const recipient = row !== undefined && isRecipient(me, row);
    // An account that may not claim it is a third party: 404, as if the transfer did not exist.
    if (!row || (!isSender && !recipient)) throw notFound('transfer not found');
    if (action === 'cancel' ? !isSender : !recipient) {
      throw forbidden(
        action === 'cancel'
          ? 'only the sender can cancel a transfer'
          : 'only the recipient can accept or decline a transfer',
      );
    }
    if (row.status !== 'pending') throw conflict(`transfer is ${row.status}`);
    if (action !== 'accept') {
      const updated = await this.deps.database.transaction(async () => {
        const done = await this.db
          .update(transfers)
          .set({ status: action === 'decline' ? 'declined' : 'cancelled', respondedAt: this.now().toISOString() })
          .where(and(eq(transfers.id, row.id), eq(transfers.status, 'pending')))
          .returning()
          .get();
        if (done && action === 'decline') await this.queueOutcomeMail(done);
        return done;
      });
      if (!updated) throw conflict('transfer is no longer pending');
      return this.toTransfer(updated, userId);
    }
    return this.accept(row, userId);
  }

  private async accept(row: TransferRow, recipientId: string): Promise<Transfer> {
    const outcome = await this.deps.database.transaction(
      async (): Promise<{ updated?: TransferRow; conflict?: string }> => {
        const at = this.now().toISOString();
        const current = await this.db.select().from(transfers).where(eq(transfers.id, row.id)).get();
        if (!current || current.status !== 'pending') return { conflict: `transfer is ${current?.status ?? 'gone'}` };
        if (current.expiresAt <= at) {
          await this.db.update(transfers).set({ status: 'expired' }).where(eq(transfers.id, row.id));
          return { conflict: 'transfer is expired' };
        }
        if (!(await this.owns(current.fromUserId, current.resourceType, current.resourceId))) {
          await this.db.update(transfers).set({ status: 'cancelled', respondedAt: at }).where(eq(transfers.id, row.id));
          return { conflict: 'the sender no longer owns this resource; the transfer was cancelled' };
        }
        // A handler may refuse with an HttpError (e.g. a name clash): that rolls everything back.
        await this.deps.handlers[current.resourceType as TransferResourceType]!.moveTo(
          this.db,
          current.resourceId,
          recipientId,
        );
        const updated = await this.db
          .update(transfers)
          .set({ status: 'accepted', respondedAt: at })
          .where(eq(transfers.id, row.id))
          .returning()
          .get();
        if (updated) await this.queueOutcomeMail(updated);
        return { updated };
      },
    );
    if (outcome.updated === undefined) throw new HttpError(409, outcome.conflict ?? 'transfer is no longer pending');
    return this.toTransfer(outcome.updated, recipientId);
  }
}

/** A display name the sender put in the transfer's metadata ({"name": …}), if any. */
function metadataName(metadata: string | null): string | null {
  if (metadata === null) return null;
  try {
    const value = JSON.parse(metadata) as unknown;
    const name = value && typeof value === 'object' ? (value as Record<string, unknown>).name : undefined;
    return typeof name === 'string' ? name.slice(0, 200) : null;
  } catch {
    return null;
  }
}
