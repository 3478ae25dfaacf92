import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';

/**
 * The outbound mail queue. A row is written in the transaction of what caused the mail, so a
 * mail exists exactly when its cause committed; a worker on any replica claims a due row
 * (claimed_until, a lease: a replica that dies mid-send lets another retry after it) and marks
 * it sent, or schedules the next attempt (next_attempt_at) until it gives up (failed).
 * ref names what the mail is about ("invitation:<id>"), so its sender can see the outcome.
 */
export const mailOutbox = sqliteTable('mail_outbox', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  kind: text('kind').notNull(),
  ref: text('ref'),
  toAddress: text('to_address').notNull(),
  subject: text('subject').notNull(),
  textBody: text('text_body').notNull(),
  htmlBody: text('html_body').notNull(),
  status: text('status', { enum: ['queued', 'sent', 'failed'] }).notNull(),
  attempts: integer('attempts').notNull(),
  nextAttemptAt: text('next_attempt_at').notNull(),
  claimedUntil: text('claimed_until'),
  lastError: text('last_error'),
  createdAt: text('created_at').notNull(),
  sentAt: text('sent_at'),
});

export const mailMigrations: Migration[] = [
  {
    id: 'mail-001-outbox',
    sql: `
      CREATE TABLE mail_outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL,
        ref TEXT,
        to_address TEXT NOT NULL,
        subject TEXT NOT NULL,
        text_body TEXT NOT NULL,
        html_body TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed')),
        attempts INTEGER NOT NULL,
        next_attempt_at TEXT NOT NULL,
        claimed_until TEXT,
        last_error TEXT,
        created_at TEXT NOT NULL,
        sent_at TEXT
      );
      CREATE INDEX mail_outbox_due ON mail_outbox(status, next_attempt_at);
      CREATE INDEX mail_outbox_ref ON mail_outbox(ref);
    `,
  },
];
