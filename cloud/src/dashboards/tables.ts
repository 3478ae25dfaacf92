import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';
import { OWNED_COLUMNS_SQL, ownedColumns } from '../authz/owner-columns.ts';

/** A UI dashboard: views holding cards. Its name is unique within its scope. */
export const dashboards = sqliteTable('ui_dashboards', {
  ...ownedColumns(),
  name: text('name').notNull(),
  type: text('type').notNull(),
  title: text('title').notNull(),
  icon: text('icon').notNull(),
  url: text('url'),
  /** JSON: DashboardConfig */
  config: text('config').notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});

export type DashboardRow = typeof dashboards.$inferSelect;

export const dashboardMigrations: Migration[] = [
  {
    id: 'dashboards-001-init',
    sql: `
      CREATE TABLE ui_dashboards (
        ${OWNED_COLUMNS_SQL},
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        title TEXT NOT NULL,
        icon TEXT NOT NULL,
        url TEXT,
        config TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX ui_dashboards_personal_name ON ui_dashboards(user_id, name) WHERE org_id IS NULL;
      CREATE UNIQUE INDEX ui_dashboards_org_name ON ui_dashboards(org_id, name) WHERE org_id IS NOT NULL;
    `,
  },
];
