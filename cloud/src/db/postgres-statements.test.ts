import { afterEach, describe, expect, it } from 'vitest';
import { createTestSchema, testDatabaseUrl } from '../testing/database.ts';
import { CloudDatabase } from './database.ts';
import { PostgresStatements } from './postgres-statements.ts';

describe('PostgresStatements', () => {
  it('translates every statement and names it from its second run, the same name each time', () => {
    const s = new PostgresStatements();
    const sql = 'SELECT name FROM t WHERE id = ? AND n > ?';
    expect(s.get(sql)).toEqual({ text: 'SELECT name FROM t WHERE id = $1 AND n > $2', name: undefined });
    const second = s.get(sql);
    expect(second.name).toMatch(/^smarthome_\d+$/);
    expect(s.get(sql)).toEqual(second);
    expect(s.get('SELECT n FROM t').name).toBeUndefined();
    expect(s.get('SELECT n FROM t').name).not.toEqual(second.name);
  });

  it('never names what selects every column (a migration adding one would break it) or a long multi-row text', () => {
    const s = new PostgresStatements();
    const long = `INSERT INTO t (name) VALUES ${Array.from({ length: 1000 }, () => '(?)').join(', ')}`;
    for (const sql of ['SELECT * FROM t', 'SELECT m.* FROM t m', 'INSERT INTO t (name) VALUES (?) RETURNING *', long])
      for (let i = 0; i < 3; i++) expect(s.get(sql).name).toBeUndefined();
    s.get('SELECT COUNT(*) AS n FROM t');
    expect(s.get('SELECT COUNT(*) AS n FROM t').name).toBeDefined();
  });

  it('sends a statement unnamed once the server refused its plan, and names nothing once the server lost a name', () => {
    const s = new PostgresStatements();
    const a = 'SELECT n FROM t';
    const b = 'SELECT name FROM t';
    s.get(a);
    s.get(b);
    expect(s.get(a).name).toBeDefined();
    expect(s.refused(a, { code: '23505', message: 'duplicate key' })).toBe(false);
    expect(s.refused(a, Object.assign(new Error('cached plan must not change result type'), { code: '0A000' }))).toBe(
      true,
    );
    expect(s.get(a).name).toBeUndefined();
    expect(s.get(b).name).toBeDefined();
    expect(s.refused(b, { code: '26000', message: 'prepared statement "smarthome_2" does not exist' })).toBe(true);
    expect(s.get(b).name).toBeUndefined();
    expect(s.get('SELECT 1').name).toBeUndefined();
    expect(s.get('SELECT 1').name).toBeUndefined();
  });
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function openPostgres(): Promise<CloudDatabase> {
  const schema = await createTestSchema(testDatabaseUrl()!);
  cleanups.push(() => schema.drop());
  const db = new CloudDatabase(schema.url, [
    { id: 't-001', sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, n INTEGER);' },
  ]);
  await db.start();
  cleanups.push(() => db.stop());
  await db.execute('INSERT INTO t (name, n) VALUES (?, ?), (?, ?)', ['a', 1, 'b', 2]);
  return db;
}

const prepared = (db: CloudDatabase) =>
  db.query<{ statement: string }>("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'smarthome%'");

describe.skipIf(!testDatabaseUrl())('named statements on PostgreSQL', () => {
  it('prepares a repeated statement once per connection and answers the same through it', async () => {
    const db = await openPostgres();
    await db.transaction(async () => {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await db.query('SELECT name FROM t WHERE n = ?', [2]));
      expect(answers).toEqual([[{ name: 'b' }], [{ name: 'b' }], [{ name: 'b' }]]);
      // the connection of this transaction holds it, under its PostgreSQL text
      expect((await prepared(db)).map((r) => r.statement)).toContain('SELECT name FROM t WHERE n = $1');
    });
  });

  it('runs a statement again unnamed when a migration changed its result type, and keeps it unnamed', async () => {
    const db = await openPostgres();
    const sql = 'SELECT n FROM t WHERE name = ?';
    for (let i = 0; i < 3; i++) expect(await db.query(sql, ['a'])).toEqual([{ n: 1 }]);
    // as another replica's migration would, on the same connection's statement
    await db.execute('ALTER TABLE t ALTER COLUMN n TYPE TEXT');
    expect(await db.query(sql, ['a'])).toEqual([{ n: '1' }]);
    expect(await db.query(sql, ['a'])).toEqual([{ n: '1' }]);
  });

  it('names nothing more once the server lost the names (a pooler in transaction mode) and loses no query', async () => {
    const db = await openPostgres();
    const sql = 'SELECT name FROM t WHERE n = ?';
    for (let i = 0; i < 3; i++) expect(await db.query(sql, [1])).toEqual([{ name: 'a' }]);
    await db.execute('DEALLOCATE ALL');
    for (let i = 0; i < 3; i++) expect(await db.query(sql, [1])).toEqual([{ name: 'a' }]);
    await db.transaction(async () => {
      for (let i = 0; i < 3; i++) await db.query('SELECT n FROM t WHERE name = ?', ['b']);
      expect(await prepared(db)).toEqual([]);
    });
  });
});
