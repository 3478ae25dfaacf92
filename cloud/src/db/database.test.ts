import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CloudDatabase } from './database.ts';

const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });
function open() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-db-'));
  dirs.push(dir);
  const db = new CloudDatabase(path.join(dir, 'c.db'), [{ id: 't-001', sql: 'CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)' }]);
  db.start();
  return db;
}

describe('CloudDatabase', () => {
  it('reuses prepared statements and hands them out in plain object mode', () => {
    const db = open();
    const sql = 'SELECT id, name FROM t ORDER BY id';
    db.raw.prepare('INSERT INTO t (name) VALUES (?)').run('a');
    const first = db.raw.prepare(sql);
    expect(first.raw(true).all()).toEqual([[1, 'a']]);
    const again = db.raw.prepare(sql);
    expect(again).toBe(first);
    expect(again.all()).toEqual([{ id: 1, name: 'a' }]);
    again.pluck(true);
    expect(db.raw.prepare(sql).get()).toEqual({ id: 1, name: 'a' });
    db.stop();
  });

  it('applies each migration once and records it, also across restarts', () => {
    const db = open();
    db.stop();
    db.start();
    expect(db.raw.prepare('SELECT id FROM _migrations').all()).toEqual([{ id: 't-001' }]);
    db.stop();
  });

  it('runs overlapping transactions one after the other instead of colliding', async () => {
    const db = open();
    const insert = db.raw.prepare('INSERT INTO t (name) VALUES (?)');
    const tick = () => new Promise((r) => setImmediate(r));
    // Each yields to the event loop mid-transaction, so without a queue the second BEGIN would fail.
    const a = db.transaction(async () => { insert.run('a1'); await tick(); insert.run('a2'); return 'a'; });
    const b = db.transaction(async () => { insert.run('b1'); await tick(); insert.run('b2'); return 'b'; });
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(db.raw.prepare('SELECT name FROM t ORDER BY id').all().map((r) => (r as { name: string }).name)).toEqual(['a1', 'a2', 'b1', 'b2']);
    db.stop();
  });

  it('rolls back on error, keeps serving the next transaction, and joins nested transactions', async () => {
    const db = open();
    const insert = db.raw.prepare('INSERT INTO t (name) VALUES (?)');
    await expect(db.transaction(async () => { insert.run('lost'); throw new Error('boom'); })).rejects.toThrow('boom');
    await db.transaction(async () => {
      insert.run('outer');
      await db.transaction(async () => { insert.run('inner'); });
    });
    expect(db.raw.prepare('SELECT name FROM t ORDER BY id').all().map((r) => (r as { name: string }).name)).toEqual(['outer', 'inner']);
    expect(db.raw.inTransaction).toBe(false);
    db.stop();
  });
});
