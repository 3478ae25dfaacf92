import { afterEach } from 'vitest';
import type { EntityState } from '@smarthome/protocol';
import { EventBus } from '../bus.ts';
import { EdgeDatabase } from '../db/database.ts';
import { silentLogger } from '../log.ts';
import { ALL_SETS_SQL } from '../recorder/attribute-text.ts';
import { BLOCK, decodeBlock } from '../recorder/blocks.ts';
import { Recorder, type RecorderOptions } from '../recorder/recorder.ts';
import type { PendingState } from '../recorder/store.ts';
import { tempDir } from './edge.ts';

/** 2026-11-20T12:00:00Z */
export const T0 = Date.UTC(2026, 10, 20, 12) / 1000;
export const iso = (t: number) => new Date(t * 1000).toISOString();

/** A state change as the recorder's store takes it: at `t` (seconds), last changed at `changed` (null: at `t`). */
export function pendingState(
  entity_id: string,
  state: string | null,
  attributes: Record<string, unknown> | null,
  t: number,
  changed: number | null = null,
): PendingState {
  return { kind: 'state', entity_id, state, attributes, last_updated: t, last_changed: changed };
}

/** A state item of `entityId` at `updated` (seconds), changed at `changed`. */
export function item(
  entityId: string,
  state: string | null,
  attributes: Record<string, unknown>,
  updated: number,
  changed = updated,
): EntityState {
  return {
    entity_id: entityId,
    name: entityId,
    domain: entityId.split('.')[0],
    platform: 'mqtt',
    state,
    attributes,
    last_updated: iso(updated),
    last_changed: iso(changed),
  };
}

/**
 * Registers the test file's cleanup (of `tmps` and `cleanups`, which tests may add to) and returns `setup()`: a Recorder on a real SQLite file in a
 * temp dir (or `dir`), its bus and a settable clock, stopped and removed after each test.
 */
export function useRecorders() {
  const tmps: ReturnType<typeof tempDir>[] = [];
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
    while (tmps.length) tmps.pop()!.cleanup();
  });
  function setup(options: Partial<RecorderOptions> = {}, dir?: string, startAt = T0 * 1000) {
    const tmp = dir ? { dir } : tempDir();
    if (!dir) tmps.push(tmp as ReturnType<typeof tempDir>);
    const database = new EdgeDatabase(tmp.dir);
    database.open();
    const bus = new EventBus((err) => {
      throw err;
    });
    const clock = {
      t: startAt,
      now() {
        return this.t;
      },
    };
    const recorder = new Recorder(
      { database, bus, log: silentLogger, clock },
      { historyDays: 10, flushDelayMs: 50, maxBatch: 1000, ...options },
    );
    recorder.start();
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await recorder.stop();
      database.close();
    };
    cleanups.push(stop);
    const emit = (s: EntityState, old: EntityState | null = null) =>
      bus.emit('state_changed', { entity_id: s.entity_id, old_state: old, new_state: s });
    const count = (table: string) => database.sqlite.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
    // attribute sets, wherever stored (attribute-text.ts)
    const sets = () => database.sqlite.prepare(`SELECT count(*) FROM (${ALL_SETS_SQL})`).pluck().get() as number;
    return { dir: tmp.dir, database, bus, clock, recorder, emit, count, sets, stop };
  }
  return { setup, tmps, cleanups };
}

/**
 * Every recorded state as [entity_id, state], in the order written: plain rows and the states of
 * blocks (recorder/blocks.ts) in their place.
 */
export function recordedStates(database: EdgeDatabase): [string, string | null][] {
  const rows = database.sqlite
    .prepare(
      `SELECT e.entity_id, s.state, s.attributes_id, s.data, s.shared
       FROM recorder_states s JOIN recorder_entities e USING (metadata_id) ORDER BY s.state_id`,
    )
    .raw()
    .all() as [string, string | null, number | null, string | null, string | null][];
  return rows.flatMap(([entityId, state, attributesId, data, shared]) =>
    attributesId === BLOCK && data
      ? decodeBlock(data, shared).map((s): [string, string | null] => [entityId, s[0]])
      : [[entityId, state]],
  );
}
