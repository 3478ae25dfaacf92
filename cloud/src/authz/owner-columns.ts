import { integer, text } from 'drizzle-orm/sqlite-core';

/*
 * Who a row belongs to, written once: for drizzle (what queries are built from) and as the
 * migrations' SQL (what the engines hold; both engines, see db/postgres-sql.ts). A reference
 * to a user or an organization deletes the row with it (ON DELETE CASCADE). The SQL comes out
 * exactly as the migrations spelled it before, so existing databases and new ones agree.
 */

/** drizzle: the row id, the owning user, and its organization (null: the user's personal resource). */
export function ownedColumns() {
  return {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: text('user_id').notNull(),
    orgId: text('org_id'),
  };
}

/** SQL: an AUTOINCREMENT row id (a sequence on PostgreSQL). */
export const ROW_ID_SQL = 'id INTEGER PRIMARY KEY AUTOINCREMENT';

/** SQL: a column naming a user (NOT NULL unless `nullable`). */
export function userRefSql(column: string, nullable = false): string {
  return `${column} TEXT${nullable ? '' : ' NOT NULL'} REFERENCES users(id) ON DELETE CASCADE`;
}

/** SQL: a column naming an organization (NOT NULL unless `nullable`). */
export function orgRefSql(column: string, nullable = false): string {
  return `${column} TEXT${nullable ? '' : ' NOT NULL'} REFERENCES organizations(id) ON DELETE CASCADE`;
}

/** SQL: ownedColumns() as a CREATE TABLE of the migrations lists them (one a line, indented 8). */
export const OWNED_COLUMNS_SQL = [ROW_ID_SQL, userRefSql('user_id'), orgRefSql('org_id', true)].join(',\n        ');
