import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';

/**
 * An invitation into an organization. The token is a bearer secret shown once at creation;
 * only its SHA-256 is stored. status: pending → accepted | declined | revoked; "expired" is derived
 * from expires_at when a pending invitation is read.
 */
export const invitations = sqliteTable('org_invitations', {
  id: text('id').primaryKey(),
  orgId: text('org_id').notNull(),
  email: text('email').notNull(),
  role: text('role', { enum: ['admin', 'member'] }).notNull(),
  status: text('status', { enum: ['pending', 'accepted', 'declined', 'revoked'] }).notNull(),
  tokenHash: text('token_hash').notNull().unique(),
  invitedBy: text('invited_by').notNull(),
  expiresAt: text('expires_at').notNull(),
  acceptedBy: text('accepted_by'),
  acceptedAt: text('accepted_at'),
  createdAt: text('created_at').notNull(),
});

export const invitationMigrations: Migration[] = [
  {
    id: 'orgs-002-invitations',
    sql: `
      CREATE TABLE org_invitations (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        email TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('admin', 'member')),
        status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'revoked')),
        token_hash TEXT NOT NULL UNIQUE,
        invited_by TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        accepted_by TEXT,
        accepted_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX org_invitations_org ON org_invitations(org_id, status);
    `,
  },
];

/** Appended to the module list (migrations apply in list order; this one came later). */
export const invitationDeclinedMigrations: Migration[] = [
  {
    // 'declined' joins the status CHECK: a rebuild, the one way both SQLite and PostgreSQL change a CHECK in shared DDL
    id: 'orgs-003-invitation-declined',
    sql: `
      CREATE TABLE org_invitations_next (
        id TEXT PRIMARY KEY,
        org_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        email TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('admin', 'member')),
        status TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'revoked')),
        token_hash TEXT NOT NULL UNIQUE,
        invited_by TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        accepted_by TEXT,
        accepted_at TEXT,
        created_at TEXT NOT NULL
      );
      INSERT INTO org_invitations_next
        SELECT id, org_id, email, role, status, token_hash, invited_by, expires_at, accepted_by, accepted_at, created_at
        FROM org_invitations;
      DROP TABLE org_invitations;
      ALTER TABLE org_invitations_next RENAME TO org_invitations;
      CREATE INDEX org_invitations_org ON org_invitations(org_id, status);
    `,
  },
];
