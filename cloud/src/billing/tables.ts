import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';

/** Plans and their limits; a null limit means unlimited. `rank` orders plans (higher is better). */
export const plans = sqliteTable('plans', {
  id: integer('id').primaryKey(),
  name: text('name').notNull().unique(),
  rank: integer('rank').notNull(),
  configEntriesLimit: integer('config_entries_limit'),
  devicesLimit: integer('devices_limit'),
  automationsLimit: integer('automations_limit'),
});

/**
 * Subscriptions of users. Written by the app-store notification receiver (store-iap), keyed
 * there by original_transaction_id; user_id is null until the purchase is matched to a user.
 * No foreign keys on user_id / plan_id: a notification may name a plan id this cloud does
 * not know yet, which then counts as the free plan.
 */
export const subscriptions = sqliteTable('subscriptions', {
  id: text('id').primaryKey(),
  userId: text('user_id'),
  planId: integer('plan_id').notNull(),
  status: text('status', { enum: ['active', 'grace_period', 'billing_retry', 'expired', 'revoked'] }).notNull(),
  gatewayProvider: text('gateway_provider').notNull(),
  autoRenew: integer('auto_renew', { mode: 'boolean' }).notNull().default(true),
  expiresAt: text('expires_at'),
  pendingPlanId: integer('pending_plan_id'),
  originalTransactionId: text('original_transaction_id').unique(),
  /** ms since epoch of the last applied store notification */
  lastSignedDate: integer('last_signed_date'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
  // added by store-iap-001 (cloud/src/store-iap/tables.ts): what the store receiver keeps
  appAccountToken: text('app_account_token'),
  productId: text('product_id'),
  environment: text('environment', { enum: ['Production', 'Sandbox'] }),
  gracePeriodExpiresAt: text('grace_period_expires_at'),
  lastNotificationType: text('last_notification_type'),
});

export const FREE_PLAN_ID = 1;

export const billingMigrations: Migration[] = [
  {
    id: 'billing-001-init',
    sql: `
      CREATE TABLE plans (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        rank INTEGER NOT NULL,
        config_entries_limit INTEGER,
        devices_limit INTEGER,
        automations_limit INTEGER
      );
      INSERT INTO plans (id, name, rank, config_entries_limit, devices_limit, automations_limit) VALUES
        (1, 'free', 0, 3, 10, 5),
        (2, 'pro', 10, NULL, NULL, NULL),
        (3, 'business', 20, NULL, NULL, NULL);
      CREATE TABLE subscriptions (
        id TEXT PRIMARY KEY,
        user_id TEXT,
        plan_id INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('active', 'grace_period', 'billing_retry', 'expired', 'revoked')),
        gateway_provider TEXT NOT NULL,
        auto_renew INTEGER NOT NULL DEFAULT 1,
        expires_at TEXT,
        pending_plan_id INTEGER,
        original_transaction_id TEXT UNIQUE,
        last_signed_date INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX subscriptions_user ON subscriptions(user_id, status);
    `,
  },
];
