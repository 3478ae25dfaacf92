import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';

/**
 * The store receiver's view of billing's `subscriptions` table (cloud/src/billing/tables.ts):
 * billing's columns plus the store-only ones added by `store-iap-001`. Same SQL table; billing
 * reads it through its own definition, which simply does not select the extra columns.
 */
export const storeSubscriptions = sqliteTable('subscriptions', {
  id: text('id').primaryKey(),
  userId: text('user_id'),
  planId: integer('plan_id').notNull(),
  status: text('status', { enum: ['active', 'grace_period', 'billing_retry', 'expired', 'revoked'] }).notNull(),
  gatewayProvider: text('gateway_provider').notNull(),
  autoRenew: integer('auto_renew', { mode: 'boolean' }).notNull().default(true),
  expiresAt: text('expires_at'),
  pendingPlanId: integer('pending_plan_id'),
  originalTransactionId: text('original_transaction_id').unique(),
  lastSignedDate: integer('last_signed_date'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
  // added by store-iap-001
  appAccountToken: text('app_account_token'),
  productId: text('product_id'),
  environment: text('environment', { enum: ['Production', 'Sandbox'] }),
  gracePeriodExpiresAt: text('grace_period_expires_at'),
  lastNotificationType: text('last_notification_type'),
});

/**
 * One row per received store notification (audit + idempotency). notification_uuid is set
 * only for verified notifications (unique: each is applied once); rejected ones have null,
 * since their uuid is unverified and must not block the genuine notification.
 */
export const storeNotifications = sqliteTable('store_notifications', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  notificationUuid: text('notification_uuid').unique(),
  type: text('type'),
  subtype: text('subtype'),
  outcome: text('outcome').notNull(),
  reason: text('reason'),
  originalTransactionId: text('original_transaction_id'),
  signedDate: integer('signed_date'),
  receivedAt: text('received_at').notNull(),
});

export const storeIapMigrations: Migration[] = [
  {
    id: 'store-iap-001-subscription-fields-and-notifications',
    sql: `
      ALTER TABLE subscriptions ADD COLUMN app_account_token TEXT;
      ALTER TABLE subscriptions ADD COLUMN product_id TEXT;
      ALTER TABLE subscriptions ADD COLUMN environment TEXT;
      ALTER TABLE subscriptions ADD COLUMN grace_period_expires_at TEXT;
      ALTER TABLE subscriptions ADD COLUMN last_notification_type TEXT;
      CREATE TABLE store_notifications (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        notification_uuid TEXT UNIQUE,
        type TEXT,
        subtype TEXT,
        outcome TEXT NOT NULL,
        reason TEXT,
        original_transaction_id TEXT,
        signed_date INTEGER,
        received_at TEXT NOT NULL
      );
      CREATE INDEX store_notifications_received ON store_notifications(received_at);
    `,
  },
];
