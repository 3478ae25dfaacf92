import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';
import { ROW_ID_SQL, userRefSql } from '../authz/owner-columns.ts';

/** An offer to hand a resource to the user with the e-mail to_email. */
export const transfers = sqliteTable('transfers', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  fromUserId: text('from_user_id').notNull(),
  /** normalizeEmail form (NFKC, lower-case) */
  toEmail: text('to_email').notNull(),
  resourceType: text('resource_type').notNull(),
  resourceId: text('resource_id').notNull(),
  status: text('status', { enum: ['pending', 'accepted', 'declined', 'cancelled', 'expired'] }).notNull(),
  /** JSON object or null */
  metadata: text('metadata'),
  createdAt: text('created_at').notNull(),
  expiresAt: text('expires_at').notNull(),
  respondedAt: text('responded_at'),
});

export type TransferRow = typeof transfers.$inferSelect;

export const transferMigrations: Migration[] = [
  {
    id: 'transfers-001-init',
    sql: `
      CREATE TABLE transfers (
        ${ROW_ID_SQL},
        ${userRefSql('from_user_id')},
        to_email TEXT NOT NULL,
        resource_type TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'cancelled', 'expired')),
        metadata TEXT,
        created_at TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        responded_at TEXT
      );
      CREATE INDEX transfers_from ON transfers(from_user_id);
      CREATE INDEX transfers_to ON transfers(to_email);
      CREATE INDEX transfers_resource ON transfers(resource_type, resource_id, status);
    `,
  },
];
