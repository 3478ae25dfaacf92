/**
 * `IapRepository` over the cloud database: billing's `subscriptions` table (plus the store
 * columns of store-iap-001) and the `store_notifications` audit table.
 */
import { eq } from 'drizzle-orm';
import type { CloudDatabase } from '../db/database.ts';
import { users } from '../auth/tables.ts';
import type { StoreSubscriptionState } from './lifecycle.ts';
import type { IapRepository, NotificationRecord } from './store.ts';
import { storeNotifications, storeSubscriptions } from './tables.ts';

type SubscriptionRow = typeof storeSubscriptions.$inferSelect;

function toState(r: SubscriptionRow): StoreSubscriptionState {
  return {
    id: r.id,
    plan_id: r.planId,
    status: r.status,
    gateway_provider: 'app_store',
    auto_renew: r.autoRenew,
    expires_at: r.expiresAt,
    pending_plan_id: r.pendingPlanId,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    // original_transaction_id is the lookup key, so never null here
    original_transaction_id: r.originalTransactionId ?? '',
    user_id: r.userId,
    app_account_token: r.appAccountToken,
    product_id: r.productId ?? '',
    environment: r.environment ?? 'Production',
    grace_period_expires_at: r.gracePeriodExpiresAt,
    last_signed_date: r.lastSignedDate ?? 0,
    last_notification_type: r.lastNotificationType ?? '',
  };
}

function toRow(s: StoreSubscriptionState): typeof storeSubscriptions.$inferInsert {
  return {
    id: s.id,
    userId: s.user_id,
    planId: s.plan_id,
    status: s.status,
    gatewayProvider: s.gateway_provider,
    autoRenew: s.auto_renew,
    expiresAt: s.expires_at,
    pendingPlanId: s.pending_plan_id,
    originalTransactionId: s.original_transaction_id,
    lastSignedDate: s.last_signed_date,
    createdAt: s.created_at,
    updatedAt: s.updated_at,
    appAccountToken: s.app_account_token,
    productId: s.product_id,
    environment: s.environment,
    gracePeriodExpiresAt: s.grace_period_expires_at,
    lastNotificationType: s.last_notification_type,
  };
}

export class DbIapRepository implements IapRepository {
  private readonly database: CloudDatabase;

  constructor(database: CloudDatabase) {
    this.database = database;
  }

  async findByOriginalTransactionId(originalTransactionId: string): Promise<StoreSubscriptionState | null> {
    const row = await this.database.db
      .select()
      .from(storeSubscriptions)
      .where(eq(storeSubscriptions.originalTransactionId, originalTransactionId))
      .get();
    return row ? toState(row) : null;
  }

  async upsertSubscription(state: StoreSubscriptionState): Promise<void> {
    const row = toRow(state);
    const { id: _id, createdAt: _createdAt, originalTransactionId: _key, ...changes } = row;
    await this.database.db
      .insert(storeSubscriptions)
      .values(row)
      .onConflictDoUpdate({ target: storeSubscriptions.originalTransactionId, set: changes })
      .run();
  }

  async recordNotification(record: NotificationRecord): Promise<boolean> {
    const inserted = await this.database.db
      .insert(storeNotifications)
      .values({
        notificationUuid: record.uuid,
        type: record.type,
        subtype: record.subtype,
        outcome: record.outcome,
        reason: record.reason,
        originalTransactionId: record.original_transaction_id,
        signedDate: record.signed_date,
        receivedAt: record.received_at,
      })
      .onConflictDoNothing({ target: storeNotifications.notificationUuid })
      .returning({ id: storeNotifications.id })
      .all();
    return record.uuid !== null && inserted.length === 0;
  }

  async findUserIdByAppAccountToken(appAccountToken: string): Promise<string | null> {
    // Tokens are issued as lowercase UUIDs; StoreKit clients may send them uppercase.
    const row = await this.database.db
      .select({ id: users.id })
      .from(users)
      .where(eq(users.appAccountToken, appAccountToken.toLowerCase()))
      .get();
    return row?.id ?? null;
  }

  /**
   * One SQLite transaction (CloudDatabase.transaction): the uuid record and the subscription
   * change commit together or not at all. `fn` only awaits this repository's calls.
   * CloudDatabase runs transactions one at a time.
   */
  transaction<T>(fn: (repo: IapRepository) => Promise<T>): Promise<T> {
    return this.database.transaction(() => fn(this));
  }
}
