import { afterEach, describe, expect, it } from 'vitest';
import { EdgeDatabase } from '../db/database.ts';
import { silentLogger } from '../log.ts';
import { tempDir } from '../testing/edge.ts';
import { recordedStates } from '../testing/recorder.ts';
import { AdaptiveWriter, type AdaptiveWriterOptions } from './adaptive-writer.ts';
import { ALL_SETS_SQL } from './attribute-text.ts';
import { InlineWriter } from './inline-writer.ts';
import type { PendingState } from './store.ts';
import { RecorderWriter } from './writer.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const row = (entityId: string, state: string, t: number): PendingState => ({
  kind: 'state',
  entity_id: entityId,
  state,
  attributes: { friendly_name: entityId, n: t % 3 },
  last_updated: t,
  last_changed: null,
});

function setup(options: AdaptiveWriterOptions = {}) {
  const tmp = tempDir();
  cleanups.push(() => tmp.cleanup());
  const database = new EdgeDatabase(tmp.dir);
  database.open();
  cleanups.push(() => database.close());
  const lines: string[] = [];
  const log = { ...silentLogger, info: (m: string) => lines.push(m) };
  const threads: RecorderWriter[] = [];
  const writer = new AdaptiveWriter(
    new InlineWriter(database),
    () => {
      const t = new RecorderWriter(database.file, log);
      threads.push(t);
      return t;
    },
    log,
    options,
  );
  writer.start();
  cleanups.push(() => writer.stop());
  const states = () => recordedStates(database);
  return { database, writer, threads, states, lines };
}

describe('recorder adaptive writer', () => {
  it('small batches are written on the main thread: no writer thread is started', () => {
    const { writer, threads, states } = setup();
    for (let i = 0; i < 20; i++) writer.write([row(`sensor.s${i % 4}`, String(i), i)]);
    // inline: committed when write() returns, before any flush
    expect(states()).toHaveLength(20);
    expect(writer.threaded).toBe(false);
    expect(threads).toHaveLength(0);
    expect(writer.batches).toBe(20);
  });

  it('a large batch starts the thread; later rows follow the earlier ones, in order', () => {
    const { writer, threads, states, lines, database } = setup({ batchRows: 2 });
    writer.write([row('sensor.a', '1', 1), row('sensor.b', '2', 2)]);
    expect(writer.threaded).toBe(true);
    expect(threads).toHaveLength(1);
    expect(lines.join('\n')).toMatch(/recorder: writing on a thread from now on/);
    // sensor.a's attributes as in its first row (t % 3 equal): the same set, found in the table
    writer.write([row('sensor.a', '3', 4)]);
    writer.write([row('sensor.c', '4', 5)]);
    writer.flush();
    expect(writer.pendingRows).toBe(0);
    expect(writer.batches).toBe(3);
    expect(states()).toEqual([
      ['sensor.a', '1'],
      ['sensor.b', '2'],
      ['sensor.a', '3'],
      ['sensor.c', '4'],
    ]);
    // the thread found the set the main thread had written: three sets for four rows
    const sets = database.sqlite.prepare(`SELECT COUNT(*) FROM (${ALL_SETS_SQL})`).pluck().get();
    expect(sets).toBe(3);
    // and renames go through it
    expect(writer.renameEntity('sensor.a', 'sensor.z')).toBe(true);
    expect(states().filter(([id]) => id === 'sensor.z')).toHaveLength(2);
  });

  it('a rate that lasts through the busy windows in a row starts the thread', () => {
    let now = 0;
    const { writer, states } = setup({ windowRows: 3, windowMs: 1000, sustainWindows: 3, now: () => now });
    let n = 0;
    const write = () => writer.write([row('sensor.a', String(n), n++)]);
    // three rows in each of the first two windows: busy, but not yet for long enough
    for (const t of [0, 300, 600, 1100, 1400, 1700]) {
      now = t;
      write();
    }
    expect(writer.threaded).toBe(false);
    now = 2200;
    write();
    now = 2500;
    write();
    expect(writer.threaded).toBe(false);
    // the third row of the third busy window
    now = 2800;
    write();
    expect(writer.threaded).toBe(true);
    writer.flush();
    expect(states()).toHaveLength(9);
  });

  it('a burst within one window stays on the main thread, however many rows', () => {
    let now = 0;
    const { writer, states, threads } = setup({ windowRows: 3, windowMs: 1000, now: () => now });
    for (let i = 0; i < 10; i++) writer.write(Array.from({ length: 100 }, (_, j) => row(`sensor.s${j}`, String(i), i)));
    // quiet after it, then another burst: each is one busy window, never three in a row
    now = 5000;
    for (let i = 0; i < 10; i++) writer.write([row('sensor.a', String(i), i)]);
    expect(writer.threaded).toBe(false);
    expect(threads).toHaveLength(0);
    expect(states()).toHaveLength(1010);
  });

  it('a quiet window between busy ones starts the count again', () => {
    let now = 0;
    const { writer } = setup({ windowRows: 3, windowMs: 1000, sustainWindows: 3, now: () => now });
    let n = 0;
    const window = (start: number, rows: number) => {
      for (let i = 0; i < rows; i++) {
        now = start + i * 100;
        writer.write([row('sensor.a', String(n), n++)]);
      }
    };
    window(0, 3);
    window(1100, 3);
    window(2200, 1); // quiet: fewer rows than windowRows
    window(3300, 3);
    window(4400, 3);
    expect(writer.threaded).toBe(false);
    window(5500, 3);
    expect(writer.threaded).toBe(true);
  });

  it('a gap longer than a window between busy windows starts the count again', () => {
    let now = 0;
    const { writer } = setup({ windowRows: 2, windowMs: 1000, sustainWindows: 2, now: () => now });
    writer.write([row('sensor.a', '1', 1), row('sensor.a', '2', 2)]);
    now = 2500; // the next window begins more than a window after the busy one ended
    writer.write([row('sensor.a', '3', 3), row('sensor.a', '4', 4)]);
    expect(writer.threaded).toBe(false);
    now = 3600;
    writer.write([row('sensor.a', '5', 5), row('sensor.a', '6', 6)]);
    expect(writer.threaded).toBe(true);
  });

  it('rows spread over windows keep writing on the main thread', async () => {
    const { writer, states } = setup({ windowRows: 3, windowMs: 20, sustainWindows: 1 });
    for (let i = 0; i < 6; i++) {
      writer.write([row('sensor.a', String(i), i)]);
      await new Promise((r) => setTimeout(r, 30));
    }
    expect(writer.threaded).toBe(false);
    expect(states()).toHaveLength(6);
  });

  it('stop() ends the thread and the main-thread writer; what was posted is written', async () => {
    const { writer, states, database } = setup({ batchRows: 1 });
    const rows = Array.from({ length: 300 }, (_, i) => row(`sensor.s${i % 7}`, String(i), i));
    for (let i = 0; i < rows.length; i += 100) writer.write(rows.slice(i, i + 100));
    await writer.stop();
    expect(states()).toHaveLength(300);
    // no connection of the thread left: the main one takes the write lock at once
    database.sqlite.exec('BEGIN IMMEDIATE; COMMIT');
  });
});
