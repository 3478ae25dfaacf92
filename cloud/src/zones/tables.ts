import { integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';
import { OWNED_COLUMNS_SQL, ownedColumns } from '../authz/owner-columns.ts';

/** A geographic circle: centre in decimal degrees, radius in metres. */
export const zones = sqliteTable('zones', {
  ...ownedColumns(),
  name: text('name').notNull(),
  icon: text('icon').notNull(),
  latitude: real('latitude').notNull(),
  longitude: real('longitude').notNull(),
  radius: real('radius').notNull(),
  passive: integer('passive', { mode: 'boolean' }).notNull(),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});

export type ZoneRow = typeof zones.$inferSelect;

export const zoneMigrations: Migration[] = [
  {
    id: 'zones-001-init',
    sql: `
      CREATE TABLE zones (
        ${OWNED_COLUMNS_SQL},
        name TEXT NOT NULL,
        icon TEXT NOT NULL,
        latitude REAL NOT NULL CHECK (latitude BETWEEN -90 AND 90),
        longitude REAL NOT NULL CHECK (longitude BETWEEN -180 AND 180),
        radius REAL NOT NULL CHECK (radius > 0),
        passive INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX zones_org ON zones(org_id);
      CREATE INDEX zones_user ON zones(user_id);
    `,
  },
];
