import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';

/** The store receiver writes billing's `subscriptions` table (its extra columns come from the migration below). */
export { subscriptions as storeSubscriptions } from '../billing/tables.ts';

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
