import { afterEach, describe, expect, it } from 'vitest';
import { openTempDatabase } from '../testing/edge.ts';
import { BLOCK } from './blocks.ts';
import type { HistoryFormat } from './history-json.ts';
import { RecorderQueries, type HistoryQuery } from './queries.ts';
import { RecorderStore, type PendingState } from './store.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** 2026-11-20T12:00:00Z */
const T0 = Date.UTC(2026, 10, 20, 12) / 1000;

const row = (
  entity_id: string,
  state: string | null,
  attributes: Record<string, unknown> | null,
  t: number,
  changed: number | null = null,
): PendingState => ({ kind: 'state', entity_id, state, attributes, last_updated: t, last_changed: changed });

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

/** The same states written one batch per state (plain rows) and in one batch (blocks). */
function setup() {
  const written = [false, true].map((together) => {
    const database = openTempDatabase(cleanups);
    const store = new RecorderStore(database);
    store.open();
    if (together) store.write(states());
    else for (const state of states()) store.write([state]);
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

describe('history blocks: the same answers as plain rows', () => {
  it('history, its JSON in both shapes and the logbook, over periods that cut blocks', () => {
    const { rows, blocks } = setup();
    expect(rows.blocks).toBe(0);
    expect(blocks.blocks).toBeGreaterThan(10);
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
    expect(compared).toBeGreaterThan(150);
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
});
