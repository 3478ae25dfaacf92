import { integer, real, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';

/** A geographic circle: centre in decimal degrees, radius in metres. */
export const zones = sqliteTable('zones', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: text('user_id').notNull(),
  orgId: text('org_id'),
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
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        org_id TEXT REFERENCES organizations(id) ON DELETE CASCADE,
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
