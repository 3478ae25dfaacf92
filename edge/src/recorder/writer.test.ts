import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EdgeDatabase } from '../db/database.ts';
import { silentLogger, type Logger } from '../log.ts';
import { tempDir } from '../testing/edge.ts';
import { recordedStates } from '../testing/recorder.ts';
import type { PendingState } from './store.ts';
import { RecorderWriter, type RecorderWriterOptions } from './writer.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const row = (entityId: string, state: string, t: number): PendingState => ({
  kind: 'state',
  entity_id: entityId,
  state,
  attributes: { friendly_name: entityId, n: t },
  last_updated: t,
  last_changed: null,
});

function setup(options: RecorderWriterOptions = {}, log: Logger = silentLogger) {
  const tmp = tempDir();
  cleanups.push(() => tmp.cleanup());
  const database = new EdgeDatabase(tmp.dir);
  database.open();
  cleanups.push(() => database.close());
  const writer = new RecorderWriter(database.file, log, options);
  writer.start();
  cleanups.push(() => writer.stop());
  const states = () => recordedStates(database);
  return { database, writer, states };
}

describe('recorder writer thread', () => {
  it('flush() returns once the thread committed every posted row, visible to the main connection', () => {
    const { writer, states } = setup();
    writer.write([row('sensor.a', '1', 1), row('sensor.b', '2', 2)]);
    writer.write([row('sensor.a', '3', 3)]);
    writer.flush();
    expect(writer.pendingRows).toBe(0);
    expect(writer.batches).toBe(2);
    expect(states()).toEqual([
      ['sensor.a', '1'],
      ['sensor.b', '2'],
      ['sensor.a', '3'],
    ]);
  });

  it('stop() writes what was posted and not yet written, then closes its connection', async () => {
    const { database, writer, states } = setup();
    const rows = Array.from({ length: 500 }, (_, i) => row(`sensor.s${i % 7}`, String(i), i));
    for (let i = 0; i < rows.length; i += 100) writer.write(rows.slice(i, i + 100));
    await writer.stop();
    expect(states()).toHaveLength(500);
    // the thread's connection is closed: the main one can take the write lock at once
    database.sqlite.exec('BEGIN IMMEDIATE; COMMIT');
  });

  it('event data is posted as its JSON (what the structured clone would refuse included)', () => {
    const { database, writer } = setup();
    writer.write([
      { kind: 'event', event_type: 'call_service', data: { service: 'x', callback: () => 1 }, time_fired: 1 },
    ]);
    writer.flush();
    expect(database.sqlite.prepare('SELECT data FROM recorder_events').pluck().all()).toEqual(['{"service":"x"}']);
  });

  it('a thread that cannot open the database: flush() throws at once, stop() returns', async () => {
    const errors: unknown[] = [];
    const log = { ...silentLogger, error: (_m: string, err: unknown) => errors.push(err) };
    const tmp = tempDir();
    cleanups.push(() => tmp.cleanup());
    const writer = new RecorderWriter(path.join(tmp.dir, 'missing', 'edge.db'), log as Logger);
    writer.start();
    writer.write([row('sensor.a', '1', 1)]);
    expect(() => writer.flush()).toThrow(/could not open the database/);
    await writer.stop();
    expect(errors).toHaveLength(1);
  });

  it('renames in order with the writes before it', () => {
    const { writer, states } = setup();
    writer.write([row('sensor.old', 'a', 1)]);
    expect(writer.renameEntity('sensor.old', 'sensor.new')).toBe(true);
    writer.write([row('sensor.new', 'b', 2)]);
    writer.flush();
    expect(states()).toEqual([
      ['sensor.new', 'a'],
      ['sensor.new', 'b'],
    ]);
  });

  it('a write blocked by another lock is retried, not lost; past the backlog new rows are dropped and said', async () => {
    const errors: string[] = [];
    const warnings: string[] = [];
    const log = { ...silentLogger, error: (m: string) => errors.push(m), warn: (m: string) => warnings.push(m) };
    const { database, writer, states } = setup({ busyTimeoutMs: 20, maxBacklogRows: 5 }, log as Logger);
    database.sqlite.exec('BEGIN IMMEDIATE'); // as a long purge step would
    writer.write([row('sensor.a', '1', 1), row('sensor.a', '2', 2), row('sensor.a', '3', 3)]);
    expect(() => writer.flush()).toThrow(/writing failed; the rows are kept and retried/);
    writer.write([row('sensor.a', '4', 4), row('sensor.a', '5', 5), row('sensor.a', '6', 6)]); // 6 > 5 behind
    expect(writer.dropped).toBe(3);
    expect(warnings).toEqual([expect.stringMatching(/3 rows behind, dropping rows/)]);
    database.sqlite.exec('COMMIT');
    await expect.poll(() => writer.pendingRows).toBe(0);
    writer.flush();
    expect(states().map(([, s]) => s)).toEqual(['1', '2', '3']);
    expect(errors.some((e) => /write failed, retrying: database is locked/.test(e))).toBe(true);
  });

  it('holds the write gate while it writes, and waits while the main thread holds it', async () => {
    const { writer, states } = setup();
    const gate = writer.gate!;
    expect(gate.tryEnter()).toBe(true);
    writer.write([row('sensor.a', '1', 1)]);
    // the thread waits for the gate: nothing is written while the main thread holds it
    await new Promise((r) => setTimeout(r, 30));
    expect(writer.pendingRows).toBe(1);
    gate.leave();
    writer.flush();
    expect(states()).toEqual([['sensor.a', '1']]);
    // free again once the thread is done
    expect(gate.tryEnter()).toBe(true);
    gate.leave();
  });
});
