import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { EntityState, tunnel } from '@smarthome/protocol';
import { CloudDatabase } from '../db/database.ts';
import { migrations } from '../modules.ts';
import { testDatabaseUrl } from '../testing/database.ts';
import type { TestCloud } from '../testing/harness.ts';
import { lampState } from '../testing/fixtures.ts';
import { useMirrorCloud } from '../testing/mirror-cloud.ts';
import { MirrorStore } from './store.ts';
import { MirrorWriter } from './writer.ts';

let t: TestCloud;
let mirror: MirrorStore;
let edgeA: number;
let edgeB: number;
useMirrorCloud((cloud) => ({ t, mirror, edgeA, edgeB } = cloud), [1, 1]);

const lamp = (state: string): EntityState => lampState(state);
const stateDelta = (state: string): tunnel.Delta => ({ kind: 'state', state: lamp(state) });

/** The writer's commits and its callers' resolutions, in the order they happened. */
function record(writer: MirrorWriter): string[] {
  const events: string[] = [];
  writer.on('commit', (edges: number[]) =>
    events.push(`commit ${edges.map((e) => (e === edgeA ? 'A' : e === edgeB ? 'B' : 'X')).join(',')}`),
  );
  return events;
}

/** Records the SQL of every query and execute on `db` until `restore()`. */
function recordStatements(db: CloudDatabase) {
  const statements: string[] = [];
  const { query, execute, batch } = db;
  db.query = (sql, params) => (statements.push(sql), query.call(db, sql, params)) as never;
  db.execute = (sql, params) => (statements.push(sql), execute.call(db, sql, params));
  db.batch = (batched) => (statements.push(...batched.map((s) => s.sql)), batch.call(db, batched));
  const restore = () => {
    db.query = query;
    db.execute = execute;
    db.batch = batch;
  };
  return { statements, restore };
}

describe('MirrorWriter', () => {
  it("commits two edges' deltas of one tick in one transaction, and resolves each only after it", async () => {
    // no time budget here: a loaded machine's pause must not split the transaction
    const writer = new MirrorWriter(t.cloud.database, mirror, { budgetMs: Infinity });
    const events = record(writer);
    const [a, b] = await Promise.all([
      writer.applyDeltas(edgeA, [stateDelta('on')], 2).then((out) => (events.push('A resolved'), out)),
      writer
        .applyDeltas(edgeB, [stateDelta('on'), stateDelta('off')], 3)
        .then((out) => (events.push('B resolved'), out)),
    ]);
    expect(events).toEqual(['commit A,B', 'A resolved', 'B resolved']);
    expect(writer.commits).toBe(1);
    // per delta, the state it replaced (the snapshot's, then the batch's own)
    expect(a.map((o) => o.oldState?.state)).toEqual(['off']);
    expect(b.map((o) => o.oldState?.state)).toEqual(['off', 'on']);
    expect(await mirror.lastSeq(edgeA)).toBe(2);
    expect(await mirror.lastSeq(edgeB)).toBe(3);
    expect((await mirror.state([edgeA], 'light.lamp_1'))?.state).toBe('on');
    expect((await mirror.state([edgeB], 'light.lamp_1'))?.state).toBe('off');
  });

  it("a batch that fails fails alone: the other edges' batches of its tick are committed", async () => {
    const writer = new MirrorWriter(t.cloud.database, mirror, { budgetMs: Infinity });
    const events = record(writer);
    const missingEdge = 999_999; // no such edge: the mirror's foreign key refuses its rows
    const results = await Promise.allSettled([
      writer.applyDeltas(edgeA, [stateDelta('off')], 4),
      writer.applyDeltas(missingEdge, [stateDelta('on')], 1),
      writer.applyDeltas(edgeB, [stateDelta('on')], 5),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    // the shared transaction rolled back; each batch then went alone
    expect(events).toEqual(['commit A', 'commit B']);
    expect(await mirror.lastSeq(edgeA)).toBe(4);
    expect(await mirror.lastSeq(edgeB)).toBe(5);
    expect(await mirror.lastSeq(missingEdge)).toBeNull();
    expect((await mirror.state([edgeA], 'light.lamp_1'))?.state).toBe('off');
    expect((await mirror.state([edgeB], 'light.lamp_1'))?.state).toBe('on');
  });

  it('a transaction takes at most maxDeltas; the rest commits in the next one, in order', async () => {
    const writer = new MirrorWriter(t.cloud.database, mirror, { maxDeltas: 2, budgetMs: Infinity });
    const events = record(writer);
    await Promise.all([
      writer.applyDeltas(edgeA, [stateDelta('on'), stateDelta('off')], 7),
      writer.applyDeltas(edgeB, [stateDelta('off')], 8),
    ]);
    expect(events).toEqual(['commit A', 'commit B']);
    expect(await mirror.lastSeq(edgeA)).toBe(7);
    expect(await mirror.lastSeq(edgeB)).toBe(8);
  });

  it('a transaction stops taking work once its time budget is spent: the rest commits next, in order', async () => {
    // one batch per group, so the budget is checked after each
    const writer = new MirrorWriter(t.cloud.database, mirror, { budgetMs: 0, groupDeltas: 1 });
    const events = record(writer);
    await Promise.all([
      writer.applyDeltas(edgeA, [stateDelta('on')], 9),
      writer.applyDeltas(edgeB, [stateDelta('on')], 10),
      writer.applyDeltas(edgeB, [], 11),
    ]);
    expect(events).toEqual(['commit A', 'commit B', 'commit B']);
    expect(await mirror.lastSeq(edgeB)).toBe(11);
  });
});

describe('MirrorWriter: state changes of several edges', () => {
  it('share their statements (old states, new states, sequences), with the results of one edge at a time', async () => {
    const writer = new MirrorWriter(t.cloud.database, mirror, { budgetMs: Infinity });
    const db = t.cloud.database;
    const before = { a: await mirror.state([edgeA], 'light.lamp_1'), b: await mirror.state([edgeB], 'light.lamp_1') };
    const versionB = (await mirror.versions([edgeB])).get(edgeB)!;
    const fresh: EntityState = { ...lamp('on'), entity_id: 'light.fresh_1', name: 'Fresh 1' };
    const { statements, restore } = recordStatements(db);
    try {
      const [a, b] = await Promise.all([
        writer.applyDeltas(edgeA, [stateDelta('dim'), { kind: 'state', state: fresh }], 30),
        writer.applyDeltas(edgeB, [stateDelta('bright')], null),
      ]);
      expect(a.map((o) => o.oldState)).toEqual([before.a, null]);
      expect(b.map((o) => o.oldState)).toEqual([before.b]);
    } finally {
      restore();
    }
    // PostgreSQL: one statement (data-modifying WITH, no transaction); SQLite: one SELECT, one
    // upsert of the three states, one of A's sequence, one of B's version
    expect(statements).toHaveLength(db.dialect === 'postgres' ? 1 : 4);
    expect(writer.commits).toBe(1);
    expect((await mirror.state([edgeA], 'light.lamp_1'))?.state).toBe('dim');
    expect((await mirror.state([edgeA], 'light.fresh_1'))?.state).toBe('on');
    expect((await mirror.state([edgeB], 'light.lamp_1'))?.state).toBe('bright');
    expect(await mirror.lastSeq(edgeA)).toBe(30);
    expect(await mirror.lastSeq(edgeB)).toBe(11);
    expect((await mirror.versions([edgeB])).get(edgeB)).toBe(versionB + 1);
  });

  it('announced with their old states (oldStates false): the old states are not read, the new ones are written', async () => {
    const writer = new MirrorWriter(t.cloud.database, mirror, { budgetMs: Infinity });
    const db = t.cloud.database;
    const before = await mirror.state([edgeB], 'light.lamp_1');
    const { statements, restore } = recordStatements(db);
    const readsOld = () => statements.filter((s) => /FROM mirror_entities/.test(s)).length;
    try {
      // one batch that wants its old state beside one that does not: only the first is read
      const [a, b] = await Promise.all([
        writer.applyDeltas(edgeA, [stateDelta('warm')], 50, false),
        writer.applyDeltas(edgeB, [stateDelta('cold')], 51),
      ]);
      expect(a.map((o) => o.oldState)).toEqual([null]);
      expect(b.map((o) => o.oldState)).toEqual([before]);
      expect(readsOld()).toBe(1);
      // none wants them: no read at all, on either engine
      statements.length = 0;
      const [c, d] = await Promise.all([
        writer.applyDeltas(edgeA, [stateDelta('cool')], 52, false),
        writer.applyDeltas(edgeB, [stateDelta('hot')], 53, false),
      ]);
      expect([...c, ...d].map((o) => o.oldState)).toEqual([null, null]);
      expect(statements.length).toBeGreaterThan(0);
      expect(readsOld()).toBe(0);
      // MirrorStore.applyDeltas (a batch with other changes, one retried alone) skips it too
      statements.length = 0;
      const [e] = await mirror.applyDeltas(edgeA, [stateDelta('dark')], 54, false);
      expect(e!.oldState).toBeNull();
      expect(readsOld()).toBe(0);
    } finally {
      restore();
    }
    expect((await mirror.state([edgeA], 'light.lamp_1'))?.state).toBe('dark');
    expect((await mirror.state([edgeB], 'light.lamp_1'))?.state).toBe('hot');
    expect(await mirror.lastSeq(edgeA)).toBe(54);
    expect(await mirror.lastSeq(edgeB)).toBe(53);
  });

  it('keep every text as sent: quotes, backslashes, braces, commas, "NULL", unicode and null values', async () => {
    const writer = new MirrorWriter(t.cloud.database, mirror, { budgetMs: Infinity });
    const odd: EntityState = {
      ...lamp('say "hi", {x}\\ NULL'),
      entity_id: 'sensor.odd_1',
      name: 'Odd, "one" {1}',
      attributes: { text: '{"a":[1,2]}, \\"', none: null, emoji: 'üñí 😀', NULL: 'NULL', empty: '' },
      last_changed: '2026-11-25T06:00:00.000Z',
      last_updated: '2026-11-25T06:00:01.000Z',
    };
    const unknown: EntityState = { ...lamp('x'), entity_id: 'sensor.unknown_1', state: null };
    await Promise.all([
      writer.applyDeltas(edgeA, [{ kind: 'state', state: odd }], 40),
      writer.applyDeltas(edgeB, [{ kind: 'state', state: unknown }], null),
    ]);
    const stored = await mirror.state([edgeA], 'sensor.odd_1');
    expect(stored).toMatchObject({
      state: odd.state,
      name: odd.name,
      attributes: odd.attributes,
      last_changed: odd.last_changed,
      last_updated: odd.last_updated,
    });
    expect((await mirror.state([edgeB], 'sensor.unknown_1'))?.state).toBeNull();
    // the next change hands back the stored state as its old state, texts intact
    const [next] = await writer.applyDeltas(edgeA, [{ kind: 'state', state: { ...odd, state: 'calm' } }], 41);
    expect(next!.oldState).toMatchObject({ state: odd.state, attributes: odd.attributes });
  });
});

describe.skipIf(!!testDatabaseUrl())(
  "MirrorWriter on SQLite: changes announced on arrival, on the file's thread",
  () => {
    it('are written there as one batch per tick, and read back like any other', async () => {
      // a second connection to the test cloud's file (as a replica on the same file), its thread at open
      const database = new CloudDatabase(path.join(t.dataDir, 'cloud.db'), migrations, {
        sqlite: { checkpointThreadFromBytes: 0 },
      });
      await database.start();
      try {
        const threaded = new MirrorStore(database);
        const writer = new MirrorWriter(database, threaded, { budgetMs: Infinity });
        const events = record(writer);
        const { statements, restore } = recordStatements(database);
        const batch = vi.spyOn(database, 'batch');
        try {
          const [a, b] = await Promise.all([
            writer.applyDeltas(edgeA, [stateDelta('thread on')], 60, false),
            writer.applyDeltas(edgeB, [stateDelta('thread off')], 61, false),
          ]);
          expect([...a, ...b].map((o) => o.oldState)).toEqual([null, null]);
        } finally {
          restore();
        }
        expect(events).toEqual(['commit A,B']);
        expect(batch).toHaveBeenCalledTimes(1);
        // no old state read, the states and sequences in one batch
        expect(statements.filter((s) => /FROM mirror_entities/.test(s))).toEqual([]);
        // committed for every connection: the test cloud's own reads see it
        expect((await mirror.state([edgeA], 'light.lamp_1'))?.state).toBe('thread on');
        expect((await mirror.state([edgeB], 'light.lamp_1'))?.state).toBe('thread off');
        expect(await mirror.lastSeq(edgeA)).toBe(60);
        expect(await mirror.lastSeq(edgeB)).toBe(61);
      } finally {
        await database.stop();
      }
    });
  },
);
