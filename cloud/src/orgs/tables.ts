import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';

export const organizations = sqliteTable('organizations', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  description: text('description'),
  /** JSON: Branding */
  branding: text('branding').notNull().default('{}'),
  /** JSON: InviteBranding */
  inviteBranding: text('invite_branding').notNull().default('{}'),
  /** members act in the organization only with multi-factor sign-in enabled (orgs/mfa-policy.ts) */
  requireMfa: integer('require_mfa', { mode: 'boolean' }).notNull().default(false),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
});

export const orgMembers = sqliteTable(
  'org_members',
  {
    orgId: text('org_id').notNull(),
    userId: text('user_id').notNull(),
    role: text('role', { enum: ['admin', 'member'] }).notNull(),
    joinedAt: text('joined_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.orgId, t.userId] })],
);

export const orgMigrations: Migration[] = [
  {
    id: 'orgs-001-init',
    sql: `
      CREATE TABLE organizations (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT,
        branding TEXT NOT NULL DEFAULT '{}',
        invite_branding TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE org_members (
        org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('admin', 'member')),
        joined_at TEXT NOT NULL,
        PRIMARY KEY (org_id, user_id)
      );
      CREATE INDEX org_members_user ON org_members(user_id);
    `,
  },
];

/** After the sign-in notices' (migrations apply in list order). */
export const orgRequireMfaMigrations: Migration[] = [
  { id: 'orgs-002-require-mfa', sql: 'ALTER TABLE organizations ADD COLUMN require_mfa INTEGER NOT NULL DEFAULT 0;' },
];
