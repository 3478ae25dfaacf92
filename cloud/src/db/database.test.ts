import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CloudDatabase, UniqueViolation, type Migration } from './database.ts';
import { createTestSchema, testDatabaseUrl } from '../testing/database.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const MIGRATIONS: Migration[] = [
  {
    id: 't-001',
    sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, n INTEGER, x REAL, flag INTEGER);',
  },
];

/** A database on the engine under test: a SQLite file, or a fresh PostgreSQL schema. */
async function open(migrations = MIGRATIONS): Promise<CloudDatabase> {
  return (await openAt(migrations)).db;
}

/** Also returns where it is, so a second process-like instance (a replica) can open it too. */
async function openAt(migrations = MIGRATIONS): Promise<{ db: CloudDatabase; location: string }> {
  const url = testDatabaseUrl();
  let location: string;
  if (url) {
    const schema = await createTestSchema(url);
    cleanups.push(() => schema.drop());
    location = schema.url;
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-db-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    location = path.join(dir, 'c.db');
  }
  const db = new CloudDatabase(location, migrations);
  await db.start();
  cleanups.push(() => db.stop());
  return { db, location };
}

const names = async (db: CloudDatabase) =>
  (await db.query<{ name: string }>('SELECT name FROM t ORDER BY id')).map((r) => r.name);

describe(`CloudDatabase on ${testDatabaseUrl() ? 'PostgreSQL' : 'SQLite'}`, () => {
  it('runs portable SQL with ? placeholders, returning numbers for integers and counts', async () => {
    const db = await open();
    expect(await db.execute('INSERT INTO t (name, n, x) VALUES (?, ?, ?)', ['a', 2 ** 40, 1.5])).toBe(1);
    expect(await db.execute("INSERT INTO t (name, n) VALUES ('what?', ?)", [7])).toBe(1);
    expect(await db.query('SELECT id, name, n, x FROM t ORDER BY id')).toEqual([
      { id: 1, name: 'a', n: 2 ** 40, x: 1.5 },
      { id: 2, name: 'what?', n: 7, x: null },
    ]);
    expect(await db.one('SELECT COUNT(*) AS c FROM t WHERE n > ?', [5])).toEqual({ c: 2 });
    expect(await db.one('SELECT name FROM t WHERE id = ?', [99])).toBeUndefined();
  });

  it('applies each migration once and records it, also across restarts', async () => {
    const db = await open();
    await db.stop();
    await db.start();
    expect(await db.query('SELECT id FROM _migrations')).toEqual([{ id: 't-001' }]);
  });

  it('translates a duplicate key into UniqueViolation, a 409 (a create that lost a race)', async () => {
    const db = await open();
    await db.execute('INSERT INTO t (name) VALUES (?)', ['a']);
    await expect(db.execute('INSERT INTO t (name) VALUES (?)', ['a'])).rejects.toBeInstanceOf(UniqueViolation);
    await expect(db.execute('INSERT INTO t (name) VALUES (?)', ['a'])).rejects.toMatchObject({
      status: 409,
      expose: 'already exists',
    });
  });

  it('orders text by bytes, as SQLite does', async () => {
    const db = await open();
    for (const name of ['b', 'B', 'a', '_', 'é']) await db.execute('INSERT INTO t (name) VALUES (?)', [name]);
    expect((await db.query<{ name: string }>('SELECT name FROM t ORDER BY name')).map((r) => r.name)).toEqual([
      'B',
      '_',
      'a',
      'b',
      'é',
    ]);
  });

  it('runs overlapping transactions one after the other instead of colliding', async () => {
    const db = await open();
    const tick = () => new Promise((r) => setImmediate(r));
    const insert = (name: string) => db.execute('INSERT INTO t (name) VALUES (?)', [name]);
    // Each yields to the event loop mid-transaction; a second BEGIN on one SQLite connection would fail.
    const a = db.transaction(async () => {
      await insert('a1');
      await tick();
      await insert('a2');
      return 'a';
    });
    const b = db.transaction(async () => {
      await insert('b1');
      await tick();
      await insert('b2');
      return 'b';
    });
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(await names(db)).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  it('rolls back on error, keeps serving the next transaction, and joins nested transactions', async () => {
    const db = await open();
    const insert = (name: string) => db.execute('INSERT INTO t (name) VALUES (?)', [name]);
    await expect(
      db.transaction(async () => {
        await insert('lost');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await db.transaction(async () => {
      await insert('outer');
      await db.transaction(async () => {
        await insert('inner');
      });
    });
    expect(await names(db)).toEqual(['outer', 'inner']);
  });

  // PostgreSQL only: two SQLite connections in one process would block each other's event loop
  // (better-sqlite3 waits synchronously for the file lock); SQLite replicas are separate processes.
  it.skipIf(!testDatabaseUrl())(
    'loses no update when two replicas read-modify-write the same row in transactions at once',
    async () => {
      const { db: a, location } = await openAt();
      const b = new CloudDatabase(location, MIGRATIONS);
      await b.start();
      cleanups.push(() => b.stop());
      await a.execute('INSERT INTO t (name, n) VALUES (?, 0)', ['counter']);
      const increment = (db: CloudDatabase) =>
        db.transaction(async () => {
          const row = await db.one<{ n: number }>('SELECT n FROM t WHERE name = ?', ['counter']);
          await new Promise((r) => setImmediate(r));
          await db.execute('UPDATE t SET n = ? WHERE name = ?', [row!.n + 1, 'counter']);
        });
      await Promise.all(Array.from({ length: 10 }, (_, i) => increment(i % 2 ? a : b)));
      expect(await a.one('SELECT n FROM t WHERE name = ?', ['counter'])).toEqual({ n: 10 });
    },
  );

  it('atomic() commits all or nothing', async () => {
    const db = await open();
    await expect(
      db.atomic(async () => {
        await db.execute('INSERT INTO t (name) VALUES (?)', ['half']);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await db.atomic(async () => {
      await db.execute('INSERT INTO t (name) VALUES (?)', ['x']);
      await db.execute('INSERT INTO t (name) VALUES (?)', ['y']);
    });
    expect(await names(db)).toEqual(['x', 'y']);
  });

  it('batch() commits all or nothing, booleans as 0/1, and tells the write listeners once committed', async () => {
    const db = await open();
    const told: string[] = [];
    db.onWrite((table) => told.push(table));
    await expect(
      db.batch([
        { sql: 'INSERT INTO t (name) VALUES (?)', params: ['half'] },
        { sql: 'INSERT INTO t (name) VALUES (?)', params: ['half'] },
      ]),
    ).rejects.toBeInstanceOf(UniqueViolation);
    expect(told).toEqual([]);
    await db.batch([
      { sql: 'INSERT INTO t (name, flag) VALUES (?, ?)', params: ['x', true] },
      { sql: 'UPDATE t SET n = ? WHERE name = ?', params: [3, 'x'] },
    ]);
    expect(await db.query('SELECT name, n, flag FROM t')).toEqual([{ name: 'x', n: 3, flag: 1 }]);
    expect(told).toEqual(['t', 't']);
  });

  it('keeps a query from outside an open transaction out of it (not rolled back with it)', async () => {
    const db = await open();
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const failing = db.transaction(async () => {
      await db.execute('INSERT INTO t (name) VALUES (?)', ['inside']);
      await held;
      throw new Error('abort');
    });
    await new Promise((r) => setImmediate(r));
    const outside = db.execute('INSERT INTO t (name) VALUES (?)', ['outside']);
    release();
    await expect(failing).rejects.toThrow('abort');
    await outside;
    expect(await names(db)).toEqual(['outside']);
  });

  it('runs drizzle queries (async) on the same engine', async () => {
    const { sqliteTable, integer, text } = await import('drizzle-orm/sqlite-core');
    const { eq } = await import('drizzle-orm');
    const t = sqliteTable('t', {
      id: integer('id').primaryKey({ autoIncrement: true }),
      name: text('name'),
      n: integer('n'),
      flag: integer('flag', { mode: 'boolean' }),
    });
    const db = await open();
    const inserted = await db.db.insert(t).values({ name: 'x', n: 1, flag: true }).returning().get();
    expect(inserted).toMatchObject({ id: 1, name: 'x', n: 1, flag: true });
    expect(await db.db.select({ name: t.name }).from(t).where(eq(t.id, 1)).get()).toEqual({ name: 'x' });
    expect(await db.db.select().from(t).where(eq(t.id, 2)).get()).toBeUndefined();
    const updated = await db.db.update(t).set({ flag: false }).where(eq(t.name, 'x')).returning({ id: t.id }).all();
    expect(updated).toEqual([{ id: 1 }]);
    expect(await db.one('SELECT flag FROM t')).toEqual({ flag: 0 });
  });
});

describe('a value the engine cannot hold', () => {
  it('names nothing: no row on SQLite, a 404 NoSuchValue on PostgreSQL', async () => {
    const db = await open();
    const lookup = db.one('SELECT name FROM t WHERE id = ?', [1e20]);
    if (db.dialect === 'sqlite') expect(await lookup).toBeUndefined();
    else await expect(lookup).rejects.toMatchObject({ name: 'NoSuchValue', status: 404 });
  });
});
