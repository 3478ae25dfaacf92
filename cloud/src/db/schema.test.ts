import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { is } from 'drizzle-orm';
import { getTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudDatabase } from './database.ts';
import { migrations } from '../modules.ts';
import { createTestSchema, testDatabaseUrl, type TestSchema } from '../testing/database.ts';

/**
 * Tables are declared twice: drizzle's definition (what queries are built from) and the
 * migrations (what the engines hold). This proves they agree, column by column, on the engine
 * under test, so a migration that forgets a column fails here rather than in production.
 */
const SRC = path.resolve(import.meta.dirname, '..');

async function drizzleTables(): Promise<SQLiteTable[]> {
  const files = fs
    .globSync('**/*.ts', { cwd: SRC })
    .filter((f) => !f.endsWith('.test.ts') && fs.readFileSync(path.join(SRC, f), 'utf8').includes('sqliteTable('));
  const found = new Map<string, SQLiteTable>();
  for (const f of files) {
    for (const value of Object.values(await import(path.join(SRC, f)))) {
      if (is(value, SQLiteTable)) found.set(getTableConfig(value).name, value);
    }
  }
  return [...found.values()];
}

const FAMILY: Record<string, string> = {
  SQLiteInteger: 'integer',
  SQLiteBoolean: 'integer',
  SQLiteTimestamp: 'integer',
  SQLiteText: 'text',
  SQLiteTextJson: 'text',
  SQLiteReal: 'real',
};
const ENGINE_FAMILY: Record<string, string> = {
  INTEGER: 'integer',
  TEXT: 'text',
  REAL: 'real',
  bigint: 'integer',
  text: 'text',
  'double precision': 'real',
};

interface Column {
  name: string;
  family: string;
  notNull: boolean;
}

async function engineColumns(db: CloudDatabase, table: string): Promise<Column[]> {
  if (db.dialect === 'sqlite') {
    const rows = await db.query<{ name: string; type: string; notnull: number; pk: number }>(
      `SELECT name, type, "notnull", pk FROM pragma_table_info('${table}')`,
    );
    // SQLite lets a lone INTEGER PRIMARY KEY be NULL (the rowid); both engines fill it, so treat it as NOT NULL.
    return rows.map((r) => ({
      name: r.name,
      family: ENGINE_FAMILY[r.type] ?? r.type,
      notNull: r.notnull === 1 || r.pk > 0,
    }));
  }
  const rows = await db.query<{ name: string; type: string; nullable: string }>(
    `SELECT column_name AS name, data_type AS type, is_nullable AS nullable FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((r) => ({ name: r.name, family: ENGINE_FAMILY[r.type] ?? r.type, notNull: r.nullable === 'NO' }));
}

const sortByName = (cols: Column[]) => [...cols].sort((a, b) => a.name.localeCompare(b.name));

describe(`schema on ${testDatabaseUrl() ? 'PostgreSQL' : 'SQLite'}`, () => {
  let db: CloudDatabase;
  let dir: string;
  let schema: TestSchema | null = null;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-schema-'));
    const url = testDatabaseUrl();
    schema = url ? await createTestSchema(url) : null;
    db = new CloudDatabase(schema?.url ?? path.join(dir, 'cloud.db'), migrations);
    await db.start();
  });
  afterAll(async () => {
    await db.stop();
    await schema?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('has every drizzle table with exactly its columns, types and nullability', async () => {
    const tables = await drizzleTables();
    expect(tables.length).toBeGreaterThanOrEqual(20);
    for (const table of tables) {
      const config = getTableConfig(table);
      const declared = config.columns.map((c) => ({
        name: c.name,
        family: FAMILY[c.columnType] ?? c.columnType,
        notNull: c.notNull || c.primary || config.primaryKeys.some((pk) => pk.columns.includes(c)),
      }));
      expect({ table: config.name, columns: sortByName(await engineColumns(db, config.name)) }).toEqual({
        table: config.name,
        columns: sortByName(declared),
      });
    }
  });

  it('holds no table that drizzle does not declare', async () => {
    const declared = new Set((await drizzleTables()).map((t) => getTableConfig(t).name));
    const actual =
      db.dialect === 'sqlite'
        ? await db.query<{ name: string }>(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
          )
        : await db.query<{ name: string }>(
            'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()',
          );
    expect(actual.map((r) => r.name).filter((n) => n !== '_migrations' && !declared.has(n))).toEqual([]);
  });
});
