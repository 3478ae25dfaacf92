import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';
import { ROW_ID_SQL, orgRefSql, userRefSql } from './owner-columns.ts';

/** A resource shared into an organization, optionally for one member only (user_id). */
export const shares = sqliteTable('shares', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  orgId: text('org_id').notNull(),
  resourceType: text('resource_type').notNull(),
  resourceId: text('resource_id').notNull(),
  canView: integer('can_view', { mode: 'boolean' }).notNull(),
  canControl: integer('can_control', { mode: 'boolean' }).notNull(),
  canEdit: integer('can_edit', { mode: 'boolean' }).notNull(),
  userId: text('user_id'),
  createdBy: text('created_by').notNull(),
  createdAt: text('created_at').notNull(),
});

export const shareMigrations: Migration[] = [
  {
    id: 'shares-001-init',
    sql: `
      CREATE TABLE shares (
        ${ROW_ID_SQL},
        ${orgRefSql('org_id')},
        resource_type TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        can_view INTEGER NOT NULL,
        can_control INTEGER NOT NULL,
        can_edit INTEGER NOT NULL,
        ${userRefSql('user_id', true)},
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX shares_resource ON shares(resource_type, resource_id);
      CREATE INDEX shares_org ON shares(org_id);
    `,
  },
];
