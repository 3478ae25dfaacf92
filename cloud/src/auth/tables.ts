import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';

export const users = sqliteTable('users', {
  id: text('id').primaryKey(),
  email: text('email').notNull().unique(),
  name: text('name'),
  passwordHash: text('password_hash').notNull(),
  appAccountToken: text('app_account_token').notNull().unique(),
  totpSecret: text('totp_secret'),
  createdAt: text('created_at').notNull(),
  /** the owner followed a verification (or password reset) link sent to `email` */
  emailVerified: integer('email_verified', { mode: 'boolean' }).notNull().default(false),
  /** a TOTP secret enrolled but not yet confirmed with a first code (totp_secret: the confirmed one) */
  totpPendingSecret: text('totp_pending_secret'),
  /** the time step of the last TOTP code accepted: a code is never accepted twice */
  totpLastStep: integer('totp_last_step'),
  /** mail the owner when a sign-in comes from a User-Agent none of the account's sessions had */
  notifyNewSignIn: integer('notify_new_sign_in', { mode: 'boolean' }).notNull().default(false),
});

/**
 * Single-use links sent by mail: address verification and password reset. The token (256
 * random bits) is only in the mail; the row keeps its SHA-256. `email` is the address the
 * link was sent to: verifying it verifies that address only (not one changed to since).
 */
export const emailTokens = sqliteTable('email_tokens', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: text('user_id').notNull(),
  purpose: text('purpose', { enum: ['verify_email', 'password_reset'] }).notNull(),
  email: text('email').notNull(),
  tokenHash: text('token_hash').notNull().unique(),
  expiresAt: text('expires_at').notNull(),
  usedAt: text('used_at'),
  createdAt: text('created_at').notNull(),
});

export const refreshTokens = sqliteTable('refresh_tokens', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull(),
  tokenHash: text('token_hash').notNull().unique(),
  familyId: text('family_id').notNull(),
  expiresAt: text('expires_at').notNull(),
  usedAt: text('used_at'),
  revokedAt: text('revoked_at'),
  createdAt: text('created_at').notNull(),
  /** the User-Agent and client address of the request that got this token (the session list shows the newest) */
  userAgent: text('user_agent'),
  clientAddress: text('client_address'),
});

export const personalAccessTokens = sqliteTable('personal_access_tokens', {
  id: text('id').primaryKey(),
  userId: text('user_id').notNull(),
  name: text('name').notNull(),
  tokenHash: text('token_hash').notNull().unique(),
  createdAt: text('created_at').notNull(),
  lastUsedAt: text('last_used_at'),
  revokedAt: text('revoked_at'),
});

/**
 * Sign-in sessions (refresh-token families) ended before their time. Their refresh tokens are
 * revoked in refresh_tokens; a row here is what stops their access tokens, until those expire.
 */
export const sessionRevocations = sqliteTable('session_revocations', {
  sessionId: text('session_id').primaryKey(),
  userId: text('user_id').notNull(),
  revokedAt: text('revoked_at').notNull(),
});

export const mfaBackupCodes = sqliteTable('mfa_backup_codes', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  userId: text('user_id').notNull(),
  codeHash: text('code_hash').notNull(),
  usedAt: text('used_at'),
  createdAt: text('created_at').notNull(),
});

export const authMigrations: Migration[] = [
  {
    id: 'auth-001-init',
    sql: `
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        name TEXT,
        password_hash TEXT NOT NULL,
        app_account_token TEXT NOT NULL UNIQUE,
        totp_secret TEXT,
        created_at TEXT NOT NULL
      );
      CREATE TABLE refresh_tokens (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_hash TEXT NOT NULL UNIQUE,
        family_id TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        used_at TEXT,
        revoked_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
      CREATE TABLE personal_access_tokens (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        last_used_at TEXT,
        revoked_at TEXT
      );
      CREATE INDEX pat_user ON personal_access_tokens(user_id);
      CREATE TABLE mfa_backup_codes (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        code_hash TEXT NOT NULL,
        used_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX mfa_backup_codes_user ON mfa_backup_codes(user_id);
    `,
  },
];

/** After every other capability's (migrations apply in list order). */
export const sessionRevocationMigrations: Migration[] = [
  {
    id: 'auth-002-session-revocations',
    sql: `
      CREATE TABLE session_revocations (
        session_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        revoked_at TEXT NOT NULL
      );
      CREATE INDEX session_revocations_revoked_at ON session_revocations(revoked_at);
    `,
  },
];

/** After the mail queue's. */
export const emailVerificationMigrations: Migration[] = [
  {
    id: 'auth-003-email-verification',
    sql: `
      ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0;
      CREATE TABLE email_tokens (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        purpose TEXT NOT NULL CHECK (purpose IN ('verify_email', 'password_reset')),
        email TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        expires_at TEXT NOT NULL,
        used_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX email_tokens_user ON email_tokens(user_id, purpose, created_at);
    `,
  },
];

/** After the e-mail verification's. */
export const totpMigrations: Migration[] = [
  {
    id: 'auth-004-totp',
    sql: `
      ALTER TABLE users ADD COLUMN totp_pending_secret TEXT;
      ALTER TABLE users ADD COLUMN totp_last_step INTEGER;
    `,
  },
];

/** After TOTP's. */
export const sessionClientMigrations: Migration[] = [
  {
    id: 'auth-005-session-clients',
    sql: `
      ALTER TABLE refresh_tokens ADD COLUMN user_agent TEXT;
      ALTER TABLE refresh_tokens ADD COLUMN client_address TEXT;
      CREATE INDEX refresh_tokens_user ON refresh_tokens(user_id, created_at);
    `,
  },
];

/** After the session clients'. */
export const signInNoticeMigrations: Migration[] = [
  { id: 'auth-006-sign-in-notice', sql: 'ALTER TABLE users ADD COLUMN notify_new_sign_in INTEGER NOT NULL DEFAULT 0;' },
];
