import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';
import { OWNED_COLUMNS_SQL, ownedColumns } from '../authz/owner-columns.ts';

/** A SIP account; the password is sealed with the data dir's VoIP key (SecretBox). */
export const voipAccounts = sqliteTable('voip_accounts', {
  ...ownedColumns(),
  name: text('name').notNull(),
  server: text('server').notNull(),
  domain: text('domain'),
  port: integer('port').notNull(),
  transport: text('transport', { enum: ['udp', 'tcp', 'tls'] }).notNull(),
  username: text('username').notNull(),
  /** AES-256-GCM ciphertext, `v1:<iv>:<tag>:<data>` */
  passwordEnc: text('password_enc').notNull(),
  displayName: text('display_name'),
  createdAt: text('created_at').notNull(),
});

export type VoipAccountRow = typeof voipAccounts.$inferSelect;

export const voipMigrations: Migration[] = [
  {
    id: 'voip-001-init',
    sql: `
      CREATE TABLE voip_accounts (
        ${OWNED_COLUMNS_SQL},
        name TEXT NOT NULL,
        server TEXT NOT NULL,
        domain TEXT,
        port INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
        transport TEXT NOT NULL CHECK (transport IN ('udp', 'tcp', 'tls')),
        username TEXT NOT NULL,
        password_enc TEXT NOT NULL,
        display_name TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX voip_accounts_org ON voip_accounts(org_id);
      CREATE INDEX voip_accounts_user ON voip_accounts(user_id);
    `,
  },
];
