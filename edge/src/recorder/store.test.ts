import { afterEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import Database from 'better-sqlite3';
import { DB_FILE, EdgeDatabase } from '../db/database.ts';
import { MIGRATIONS } from '../db/migrations.ts';
import { tempDir } from '../testing/edge.ts';
import { ALL_SETS_SQL } from './attribute-text.ts';
import { fnv1a32 } from './known-texts.ts';
import { RecorderStore, type PendingState } from './store.ts';

const tmps: ReturnType<typeof tempDir>[] = [];
afterEach(() => {
  while (tmps.length) tmps.pop()!.cleanup();
});

const row = (state: string, attributes: Record<string, unknown>, t: number): PendingState => ({
  kind: 'state',
  entity_id: 'sensor.power',
  state,
  attributes,
  last_updated: t,
  last_changed: null,
});

describe('recorder store: attribute sets', () => {
  it('finds a set stored before a restart or a purge, and inserts new ones once', () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const database = new EdgeDatabase(tmp.dir);
    database.open();
    // sets wherever stored: a new one is carried by its first row (id = -state_id)
    const sets = () =>
      database.sqlite
        .prepare(ALL_SETS_SQL)
        .raw()
        .all()
        .map((r) => (r as unknown[])[2]);
    const ids = () =>
      database.sqlite.prepare('SELECT attributes_id FROM recorder_states ORDER BY state_id').pluck().all();
    try {
      const first = new RecorderStore(database);
      first.open();
      first.write([row('1', { v: 1 }, 1), row('2', { v: 2 }, 2), row('3', { v: 1 }, 3)]);
      first.close();
      // a new store knows nothing in memory: the stored sets are found, not written again
      const second = new RecorderStore(database);
      second.open();
      second.write([row('4', { v: 2 }, 4), row('5', { v: 3 }, 5)]);
      second.forgetAttributes(); // as after a purge
      second.write([row('6', { v: 1 }, 6), row('7', { v: 3 }, 7)]);
      expect(sets()).toEqual(['{"v":1}', '{"v":2}', '{"v":3}']);
      expect(ids()).toEqual([-1, -2, -1, -2, -5, -1, -5]);
    } finally {
      database.close();
    }
  });

  it('takes a stored set with the same hash but another text for a different set (a collision)', () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const database = new EdgeDatabase(tmp.dir);
    database.open();
    try {
      const sqlite = database.sqlite;
      sqlite.prepare("INSERT INTO recorder_entities (metadata_id, entity_id) VALUES (1, 'sensor.power')").run();
      // a stored set (and a row using it) whose hash is that of {"v":2}: the text decides
      sqlite
        .prepare('INSERT INTO recorder_attributes (metadata_id, hash, shared) VALUES (1, ?, ?)')
        .run(fnv1a32('{"v":2}'), '{"v":1}');
      sqlite
        .prepare("INSERT INTO recorder_states (metadata_id, state, attributes_id, last_updated) VALUES (1, '0', 1, 0)")
        .run();
      const store = new RecorderStore(database);
      store.open();
      store.write([row('1', { v: 2 }, 1), row('2', { v: 2 }, 2)]);
      expect(sqlite.prepare(ALL_SETS_SQL).raw().all()).toEqual([
        [1, 1, '{"v":1}'],
        [-2, 1, '{"v":2}'],
      ]);
      expect(sqlite.prepare('SELECT attributes_id FROM recorder_states ORDER BY state_id').pluck().all()).toEqual([
        1, -2, -2,
      ]);
    } finally {
      database.close();
    }
  });

  it('writes the rows of a batch in order, and a failed batch leaves no stale id behind', () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const database = new EdgeDatabase(tmp.dir);
    database.open();
    try {
      const sqlite = database.sqlite;
      // plain rows, whatever the number of states an entity has in a batch: their sets are what is checked
      const store = new RecorderStore(database, { blockFrom: Infinity });
      store.open();
      const rows = (from: number, n: number): PendingState[] =>
        Array.from({ length: n }, (_, i) => ({
          ...row(String(from + i), { v: (from + i) % 7 }, from + i),
          entity_id: `sensor.e${(from + i) % 3}`,
        }));
      store.write(rows(0, 150));
      // the next batch fails (the events table is gone): nothing of it stays, in the file or in memory
      sqlite.exec('ALTER TABLE recorder_events RENAME TO events_away');
      expect(() =>
        store.write([
          ...rows(150, 10),
          { ...row('x', { v: 'new' }, 160), entity_id: 'sensor.new' },
          { kind: 'event', event_type: 'call_service', data: {}, time_fired: 160 },
        ]),
      ).toThrow();
      sqlite.exec('ALTER TABLE events_away RENAME TO recorder_events');
      store.write([...rows(150, 10), { ...row('x', { v: 'new' }, 160), entity_id: 'sensor.new' }]);
      const stored = sqlite
        .prepare(
          `SELECT e.entity_id, s.state, a.shared FROM recorder_states s JOIN recorder_entities e USING (metadata_id)
           JOIN (${ALL_SETS_SQL}) a ON a.id = s.attributes_id ORDER BY s.state_id`,
        )
        .raw()
        .all();
      expect(stored).toEqual([
        ...Array.from({ length: 160 }, (_, i) => [`sensor.e${i % 3}`, String(i), JSON.stringify({ v: i % 7 })]),
        ['sensor.new', 'x', '{"v":"new"}'],
      ]);
      // each entity's sets once: 3 entities × 7 values (21 distinct pairs over 160 rows), and the new one
      expect(sqlite.prepare(`SELECT count(*) FROM (${ALL_SETS_SQL})`).pluck().get()).toBe(22);
    } finally {
      database.close();
    }
  });

  it('keeps its dedup and orphan deletion on a data dir written before the sets lost their index by entity', () => {
    const tmp = tempDir();
    tmps.push(tmp);
    // the schema and rows as the edge wrote them before the sets lost their index by entity (migrations 12-13)
    const old = new Database(path.join(tmp.dir, DB_FILE));
    old.pragma('journal_mode = WAL');
    for (const m of MIGRATIONS.slice(0, 11)) old.exec(m);
    old.pragma('user_version = 11');
    old.exec(`INSERT INTO recorder_entities (metadata_id, entity_id) VALUES (1, 'sensor.power'), (2, 'sensor.other');
      INSERT INTO recorder_attributes (attributes_id, metadata_id, hash, shared) VALUES
        (1, 1, ${fnv1a32('{"v":1}')}, '{"v":1}'), (2, 2, ${fnv1a32('{"v":1}')}, '{"v":1}'), (3, 1, ${fnv1a32('{"v":2}')}, '{"v":2}');
      INSERT INTO recorder_states (metadata_id, state, attributes_id, last_updated) VALUES
        (1, 'a', 1, 1), (2, 'b', 2, 2), (1, 'c', 3, 3), (1, 'd', 1, 4);`);
    expect(
      old.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'recorder_attributes_entity'").pluck().get(),
    ).toBe(1);
    old.close();
    const database = new EdgeDatabase(tmp.dir);
    database.open();
    try {
      const sqlite = database.sqlite;
      expect(
        sqlite.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'recorder_attributes_entity'").pluck().get(),
      ).toBe(0);
      const store = new RecorderStore(database);
      store.open();
      // the entity's stored sets are found through its rows: no second copy
      store.write([row('e', { v: 2 }, 5), row('f', { v: 1 }, 6), row('g', { v: 3 }, 7)]);
      // (a new set is carried by its row, state_id 7)
      const setsOf = () => sqlite.prepare(ALL_SETS_SQL).raw().all();
      expect(setsOf()).toEqual([
        [1, 1, '{"v":1}'],
        [2, 2, '{"v":1}'],
        [3, 1, '{"v":2}'],
        [-7, 1, '{"v":3}'],
      ]);
      // the purge's step: the sets of the rows it deleted that no remaining row uses go
      sqlite.prepare('DELETE FROM recorder_states WHERE metadata_id = 1 AND last_updated < 5.5').run();
      expect(store.deleteOrphans(1, [1, 3])).toBe(1);
      expect(setsOf()).toEqual([
        [1, 1, '{"v":1}'],
        [2, 2, '{"v":1}'],
        [-7, 1, '{"v":3}'],
      ]);
      // and the one deleted is written again when it comes back
      store.write([row('h', { v: 2 }, 8)]);
      expect(setsOf().at(-1)).toEqual([-8, 1, '{"v":2}']);
      expect(store.deleteOrphans(1, [])).toBe(0);
    } finally {
      database.close();
    }
  });
});
