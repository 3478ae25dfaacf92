import { afterEach, describe, expect, it } from 'vitest';
import { openTempDatabase } from '../testing/edge.ts';
import { pendingState as row, T0 } from '../testing/recorder.ts';
import { BLOCK, BLOCK_SQL, MARGIN_BLOCKS_SQL } from './blocks.ts';
import type { HistoryFormat } from './history-json.ts';
import { RecorderQueries, type HistoryQuery } from './queries.ts';
import { RecorderStore, type PendingState } from './store.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** Busy entities (blocks when written in one batch), a quiet one (plain rows either way), in arrival order. */
function states(): PendingState[] {
  const out: PendingState[] = [];
  for (let i = 0; i < 90; i++) {
    const t = T0 - 200 + i * 7 + 0.125;
    // a power sensor: its unit repeats; every 5th an attribute-only update (last_changed kept)
    if (i % 5 === 4) out.push(row('sensor.power', String(i - 1), { unit_of_measurement: 'W', n: i }, t, t - 7));
    else out.push(row('sensor.power', String(i), { unit_of_measurement: 'W' }, t));
    // a mode sensor without a unit: a new set every third state, some states repeat
    if (i % 2 === 0) out.push(row('sensor.mode', i % 4 ? 'eco' : 'boost', { level: Math.floor(i / 3) }, t + 1.5));
    // a light: a new set with each state
    if (i % 3 === 0)
      out.push(row('light.kitchen', i % 6 ? 'on' : 'off', { brightness: i * 2, rgb: [i, 0, 1] }, t + 2.25));
    // a new entity whose first state is null (not recorded), then values; a removal (null) later
    if (i >= 40 && i < 50)
      out.push(row('sensor.late', i === 40 || i === 47 ? null : `v${i}`, i === 45 ? {} : null, t + 3));
  }
  out.push(row('binary_sensor.door', 'on', { device_class: 'door' }, T0 - 150));
  out.push(row('binary_sensor.door', 'off', { device_class: 'door' }, T0 + 10));
  out.push(row('binary_sensor.door', 'on', { device_class: 'door' }, T0 + 300));
  return out;
}

/** The same states written one batch per state (plain rows) and in batches (blocks: one, unless given). */
function setup(written_ = states(), batches: PendingState[][] = [written_]) {
  const written = [false, true].map((together) => {
    const database = openTempDatabase(cleanups);
    const store = new RecorderStore(database);
    store.open();
    if (together) for (const batch of batches) store.write(batch);
    else for (const state of written_) store.write([state]);
    store.close();
    const blocks = database.sqlite
      .prepare('SELECT COUNT(*) FROM recorder_states WHERE attributes_id = ?')
      .pluck()
      .get(BLOCK) as number;
    return { queries: new RecorderQueries(database), blocks };
  });
  return { rows: written[0], blocks: written[1] };
}

const starts = [T0 - 1000, T0 - 200.125, T0 - 100.5, T0, T0 + 3.5, T0 + 61, T0 + 200.25, T0 + 1000];
const ends = [undefined, T0 + 30, T0 + 150.5, T0 - 100];

/** Compares the answers of both over the starts and ends; the number of history queries compared. */
function compare(
  rows: ReturnType<typeof setup>['rows'],
  blocks: ReturnType<typeof setup>['blocks'],
  starts: number[],
  ends: (number | undefined)[],
) {
  let compared = 0;
  for (const start of starts)
    for (const end of ends) {
      if (end !== undefined && end <= start) continue;
      for (const entity_ids of [undefined, ['light.kitchen', 'binary_sensor.door', 'sensor.late', 'nope.none']]) {
        expect(blocks.queries.logbook({ start, end, entity_ids })).toEqual(
          rows.queries.logbook({ start, end, entity_ids }),
        );
        for (const include_start_time_state of [undefined, false])
          for (const significant_changes_only of [undefined, false])
            for (const no_attributes of [undefined, true]) {
              const query: HistoryQuery = {
                start,
                end,
                entity_ids,
                include_start_time_state,
                significant_changes_only,
                no_attributes,
              };
              const expected = rows.queries.history(query);
              expect({ query, history: blocks.queries.history(query) }).toEqual({ query, history: expected });
              for (const format of ['websocket', 'rest'] as HistoryFormat[])
                for (const minimal_response of [undefined, true]) {
                  const options = { format, minimal_response };
                  expect({ query, options, json: blocks.queries.historyJson(query, options) }).toEqual({
                    query,
                    options,
                    json: rows.queries.historyJson(query, options),
                  });
                }
              compared++;
            }
      }
    }
  return compared;
}

describe('history blocks: the same answers as plain rows', () => {
  it('history, its JSON in both shapes and the logbook, over periods that cut blocks', () => {
    const { rows, blocks } = setup();
    expect(rows.blocks).toBe(0);
    expect(blocks.blocks).toBeGreaterThan(10);
    expect(compare(rows, blocks, starts, ends)).toBeGreaterThan(150);
  });

  it('the same answers after the clock stepped back, within a batch and between batches (blocks that overlap)', () => {
    const at = (i: number) => T0 + i * 2.5;
    const light = (i: number, t: number) => row('light.kitchen', i % 2 ? 'on' : 'off', { brightness: i }, t);
    // 0 … 19, then back by 30 s: 20 … 39 (one batch); then a batch back by another 30 s
    const first = [
      ...Array.from({ length: 20 }, (_, i) => light(i, at(i))),
      ...Array.from({ length: 20 }, (_, i) => light(20 + i, at(i + 8))),
    ];
    const second = Array.from({ length: 12 }, (_, i) => light(40 + i, at(i + 14)));
    const { rows, blocks } = setup([...first, ...second], [first, second]);
    expect(blocks.blocks).toBe(3);
    const times = Array.from({ length: 16 }, (_, i) => at(i * 2) + 0.5).concat([at(0), at(20), T0 - 1]);
    expect(compare(rows, blocks, times, [undefined, at(25), at(17) + 0.1])).toBeGreaterThan(100);
  });

  it('answers with the states of a period that starts and ends inside one block', () => {
    const { blocks } = setup();
    // sensor.power's states 27-35 (T0 - 10.875 ... T0 + 45.125) are one block
    const history = blocks.queries.history({ start: T0 + 3.5, end: T0 + 30, entity_ids: ['sensor.power'] });
    // the start state (the last before start: 29's attribute-only update of 28), stamped at start; then the changes
    expect(history.get('sensor.power')?.map((s) => [s.state, s.last_updated - T0, s.attributes])).toEqual([
      ['28', 3.5, { unit_of_measurement: 'W', n: 29 }],
      ['30', 10.125, { unit_of_measurement: 'W' }],
      ['31', 17.125, { unit_of_measurement: 'W' }],
      ['32', 24.125, { unit_of_measurement: 'W' }],
    ]);
  });

  it("reads the margin's blocks with a covering index search and a block by its rowid", () => {
    const database = openTempDatabase(cleanups);
    const plan = (sql: string, ...params: number[]) =>
      (database.sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map(
        (r) => r.detail,
      );
    expect(plan(MARGIN_BLOCKS_SQL, 1, 1, 2)).toEqual([
      expect.stringMatching(
        /^SEARCH recorder_states USING COVERING INDEX recorder_states_entity_time \(metadata_id=\? AND last_updated>\? AND last_updated<\?\)$/,
      ),
    ]);
    expect(plan(BLOCK_SQL, 1)).toEqual([expect.stringMatching(/^SEARCH recorder_states USING INTEGER PRIMARY KEY/)]);
  });
});
