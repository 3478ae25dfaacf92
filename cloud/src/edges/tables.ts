import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';

/**
 * Edge runtimes. A home edge belongs to its creator (user_id) and, when created in an
 * organization context, to that organization (org_id). Cloud replicas belong to the
 * pseudo-owner FLEET_OWNER ('fleet'), which is no user: user_id carries no foreign key.
 */
export const edges = sqliteTable('edges', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
  orgId: text('org_id'),
  userId: text('user_id').notNull(),
  location: text('location', { enum: ['home', 'cloud'] }).notNull(),
  status: text('status', { enum: ['pending', 'online', 'offline', 'revoked'] }).notNull(),
  /** JSON object */
  capabilities: text('capabilities').notNull().default('{}'),
  /** cloud replicas only: the registration key */
  hostname: text('hostname'),
  /** sha256 of the edge token (null once revoked) */
  tokenHash: text('token_hash'),
  mqttUsername: text('mqtt_username'),
  /** sha256 of the MQTT password issued by register-cloud */
  mqttPasswordHash: text('mqtt_password_hash'),
  lastSeenAt: text('last_seen_at'),
  pairedAt: text('paired_at'),
  revokedAt: text('revoked_at'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});

export const edgeMigrations: Migration[] = [
  {
    id: 'edges-001-init',
    sql: `
      CREATE TABLE edges (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        org_id TEXT REFERENCES organizations(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL,
        location TEXT NOT NULL CHECK (location IN ('home', 'cloud')),
        status TEXT NOT NULL CHECK (status IN ('pending', 'online', 'offline', 'revoked')),
        capabilities TEXT NOT NULL DEFAULT '{}',
        hostname TEXT,
        token_hash TEXT UNIQUE,
        mqtt_username TEXT,
        mqtt_password_hash TEXT,
        last_seen_at TEXT,
        paired_at TEXT,
        revoked_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX edges_org ON edges(org_id);
      CREATE INDEX edges_user ON edges(user_id, org_id);
      CREATE UNIQUE INDEX edges_cloud_hostname ON edges(hostname) WHERE location = 'cloud';
      CREATE INDEX edges_fleet_seen ON edges(location, last_seen_at);
    `,
  },
];
