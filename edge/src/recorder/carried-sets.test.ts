import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DB_FILE, EdgeDatabase } from '../db/database.ts';
import { MIGRATIONS } from '../db/migrations.ts';
import { silentLogger } from '../log.ts';
import { tempDir } from '../testing/edge.ts';
import { ALL_SETS_SQL, CARRIED_SET_SQL } from './attribute-text.ts';
import { RecorderQueries } from './queries.ts';
import { fnv1a32 } from './known-texts.ts';
import { RecorderStore, type PendingState } from './store.ts';
import { RecorderWriter } from './writer.ts';

/** A new attribute set is carried by the first row that has it (attribute-text.ts, store.ts). */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const row = (state: string, attributes: Record<string, unknown>, t: number, entity = 'sensor.power'): PendingState => ({
  kind: 'state',
  entity_id: entity,
  state,
  attributes,
  last_updated: t,
  last_changed: null,
});

function open(dir: string) {
  const database = new EdgeDatabase(dir);
  database.open();
  cleanups.push(() => database.close());
  // plain rows (no blocks, which carry their own sets), however many states an entity has in a batch
  const store = new RecorderStore(database, { blockFrom: Infinity });
  store.open();
  const queries = new RecorderQueries(database);
  const attributesOf = (entity = 'sensor.power') =>
    queries
      .history({ start: 0, entity_ids: [entity], significant_changes_only: false })
      .get(entity)
      ?.map((s) => [s.state, s.attributes]);
  const sets = () => database.sqlite.prepare(ALL_SETS_SQL).raw().all();
  return { database, store, queries, attributesOf, sets };
}

function newDir() {
  const tmp = tempDir();
  cleanups.push(() => tmp.cleanup());
  return tmp.dir;
}

describe('recorder: sets carried by rows', () => {
  it('migrates a data dir with history: old rows read the same, a stored set coming back is not stored again', () => {
    const dir = newDir();
    // the schema and rows as the edge wrote them before recorder_states.shared
    const old = new Database(path.join(dir, DB_FILE));
    old.pragma('journal_mode = WAL');
    for (const m of MIGRATIONS.slice(0, -1)) old.exec(m);
    old.pragma(`user_version = ${MIGRATIONS.length - 1}`);
    old.exec(`INSERT INTO recorder_entities (metadata_id, entity_id) VALUES (1, 'sensor.power');
      INSERT INTO recorder_attributes (attributes_id, metadata_id, hash, shared) VALUES
        (1, 1, ${fnv1a32('{"v":1}')}, '{"v":1}'), (2, 1, ${fnv1a32('{"v":2}')}, '{"v":2}');
      INSERT INTO recorder_states (metadata_id, state, attributes_id, last_updated) VALUES
        (1, 'a', 1, 1), (1, 'b', 2, 2);
      INSERT INTO recorder_events (event_type, data, time_fired) VALUES ('logbook_entry', '{"name":"x","message":"y"}', 1.5);`);
    old.close();
    const { store, queries, attributesOf, sets } = open(dir);
    expect(attributesOf()).toEqual([
      ['a', { v: 1 }],
      ['b', { v: 2 }],
    ]);
    store.write([row('c', { v: 1 }, 3), row('d', { v: 3 }, 4), row('e', { v: 3 }, 5)]);
    expect(attributesOf()).toEqual([
      ['a', { v: 1 }],
      ['b', { v: 2 }],
      ['c', { v: 1 }],
      ['d', { v: 3 }],
      ['e', { v: 3 }],
    ]);
    // {"v":1} found where it was stored; {"v":3} carried by the row that first had it (state_id 4)
    expect(sets()).toEqual([
      [1, 1, '{"v":1}'],
      [2, 1, '{"v":2}'],
      [-4, 1, '{"v":3}'],
    ]);
    expect(queries.historyJson({ start: 0, significant_changes_only: false }, { format: 'websocket' })).toBe(
      '{"sensor.power":[{"s":"a","a":{"v":1},"lu":1},{"s":"b","a":{"v":2},"lu":2},{"s":"c","a":{"v":1},"lu":3},' +
        '{"s":"d","a":{"v":3},"lu":4},{"s":"e","a":{"v":3},"lu":5}]}',
    );
    expect(queries.logbook({ start: 0 }).map((r) => (r.kind === 'state' ? r.state : r.event_type))).toEqual([
      'a',
      'logbook_entry',
      'b',
      'c',
      'd',
      'e',
    ]);
  });

  it('keepSets moves a set out of the rows the purge deletes when later rows use it, and no new row takes such a set', () => {
    const { database, store, attributesOf, sets } = open(newDir());
    store.write([
      row('1', { v: 1 }, 1),
      row('2', { v: 2 }, 2),
      row('3', { v: 1 }, 3),
      row('x', { w: 1 }, 1, 'sensor.other'),
      row('4', { v: 3 }, 4),
    ]);
    // rows before 2.5 go: {"v":1} (carried by row 1) is used by row 3; {"v":2} by none later
    expect(store.keepSets(1, 2.5)).toBe(1);
    // written between keepSets and the deletion: {"v":2} is not taken from the row about to go
    store.write([row('5', { v: 2 }, 5)]);
    database.sqlite.prepare('DELETE FROM recorder_states WHERE metadata_id = 1 AND last_updated < 2.5').run();
    expect(attributesOf()).toEqual([
      ['3', { v: 1 }],
      ['4', { v: 3 }],
      ['5', { v: 2 }],
    ]);
    expect(sets()).toEqual([
      [1, 1, '{"v":1}'],
      [-4, 2, '{"w":1}'],
      [-5, 1, '{"v":3}'],
      [-6, 1, '{"v":2}'],
    ]);
    // the floor outlives the store: another (the writer thread, the next start) does not take them either
    const again = new RecorderStore(database);
    again.open();
    database.sqlite
      .prepare(
        "INSERT INTO recorder_states (state_id, metadata_id, state, attributes_id, last_updated, shared) VALUES (100, 1, 'old', -100, 0.5, '{\"v\":9}')",
      )
      .run();
    database.sqlite
      .prepare(
        "INSERT INTO recorder_states (metadata_id, state, attributes_id, last_updated) VALUES (1, 'later', -100, 6)",
      )
      .run();
    again.write([row('7', { v: 9 }, 7)]);
    expect(sets().at(-1)).toEqual([-102, 1, '{"v":9}']);
  });

  it('the writer thread runs keepSets in order with its writes', async () => {
    const dir = newDir();
    const { database, attributesOf } = open(dir);
    const writer = new RecorderWriter(database.file, silentLogger);
    writer.start();
    cleanups.push(() => writer.stop());
    writer.write([row('1', { v: 1 }, 1), row('2', { v: 1 }, 2)]);
    expect(await writer.keepSets(1, 1.5)).toBe(1);
    database.sqlite.prepare('DELETE FROM recorder_states WHERE metadata_id = 1 AND last_updated < 1.5').run();
    writer.write([row('3', { v: 1 }, 3)]);
    writer.flush();
    expect(attributesOf()).toEqual([
      ['2', { v: 1 }],
      ['3', { v: 1 }],
    ]);
  });

  it('a set seen again is found by its text in memory; another text with the same hash is a new set', () => {
    const { store, attributesOf, sets } = open(newDir());
    // two texts with one 32-bit FNV-1a hash
    expect(fnv1a32('{"v":166012}')).toBe(fnv1a32('{"v":1445000}'));
    store.write([row('1', { v: 166012 }, 1), row('2', { v: 2 }, 2), row('3', { v: 166012 }, 3)]);
    store.write([row('4', { v: 2 }, 4), row('5', { v: 1445000 }, 5), row('6', { v: 166012 }, 6)]);
    store.write([row('7', { v: 1445000 }, 7), row('8', { v: 2 }, 8)]);
    expect(sets()).toEqual([
      [-1, 1, '{"v":166012}'],
      [-2, 1, '{"v":2}'],
      [-5, 1, '{"v":1445000}'],
      [-6, 1, '{"v":166012}'],
      // one set per hash is known: colliding sets that alternate are each stored again (space only)
      [-7, 1, '{"v":1445000}'],
    ]);
    expect(attributesOf()?.map(([, a]) => (a as { v: number }).v)).toEqual([
      166012, 2, 166012, 2, 1445000, 166012, 1445000, 2,
    ]);
  });

  it('reads a carried set by its row id', () => {
    const { database } = open(newDir());
    expect(
      (database.sqlite.prepare(`EXPLAIN QUERY PLAN ${CARRIED_SET_SQL}`).all(1) as { detail: string }[]).map(
        (r) => r.detail,
      ),
    ).toEqual([expect.stringMatching(/^SEARCH recorder_states USING INTEGER PRIMARY KEY/)]);
  });
});
