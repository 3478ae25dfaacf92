import { afterEach, describe, expect, it } from 'vitest';
import { openTempDatabase } from '../testing/edge.ts';
import { pendingState as row, T0 } from '../testing/recorder.ts';
import { compressedHistoryJson, restHistoryJson } from './ha-shapes.ts';
import { haIsoTime, isoTimeFormatter } from './ha-time.ts';
import { historyJsonSql, type HistoryFormat } from './history-json.ts';
import { RecorderQueries, type HistoryQuery } from './queries.ts';
import { RecorderStore } from './store.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function setup() {
  const database = openTempDatabase(cleanups);
  const store = new RecorderStore(database);
  store.open();
  store.write([
    // before the period: start states
    row('sensor.power', '5', { unit_of_measurement: 'W', friendly_name: 'Power "main"' }, T0 - 100),
    row('switch.only_before', 'on', { icon: 'mdi:power' }, T0 - 50.25),
    row('device_tracker.phone', 'home', { gps: [1.5, 2] }, T0 - 10),
    // in the period: changes, attribute-only updates (last_changed kept), odd states and times
    row('sensor.power', '5', { unit_of_measurement: 'W', friendly_name: 'Power "main"', battery: 9 }, T0 + 1, T0 - 100),
    row('sensor.power', '6.5', { unit_of_measurement: 'W', friendly_name: 'Power "main"' }, T0 + 2.001),
    row('sensor.power', '6.5', { unit_of_measurement: 'W', friendly_name: 'Power "main"' }, T0 + 3.1234567),
    row('sensor.power', 'quote " back \\ nl \n tab \t é ☃ 🙂 \u2028', { x: 'ü\u0001' }, T0 + 4.0005),
    row('sensor.power', null, null, T0 + 5),
    row('sensor.power', '7', {}, T0 + 3600),
    row('climate.den', 'heat', { temperature: 20 }, T0 + 1.5),
    row('climate.den', 'heat', { temperature: 21 }, T0 + 2.5, T0 + 1.5),
    row('climate.den', 'off', { temperature: 21 }, T0 + 7),
    row('device_tracker.phone', 'home', { gps: [1.6, 2] }, T0 + 20, T0 - 10),
    row('device_tracker.phone', 'away', { gps: [3, 4] }, T0 + 30),
    row('light.new', 'on', { brightness: 255, nested: { a: [1, null, true] } }, T0 + 40),
    row('light.new', 'on', { brightness: 128, nested: { a: [] } }, T0 + 41, T0 + 40),
    row('light.new', 'off', { brightness: 0, nested: { a: [] } }, T0 + 42),
    row('light.new', 'off', { brightness: 0, nested: { a: [] } }, T0 + 42),
    row('light.new', 'on', { brightness: 0, nested: { a: [] } }, T0 + 43),
  ]);
  store.close();
  return new RecorderQueries(database);
}

describe('history JSON written by SQLite', () => {
  it('equals the reference writers over history() for every option, format and period', () => {
    const queries = setup();
    const periods: HistoryQuery[] = [
      { start: T0 },
      { start: T0, end: T0 + 41 },
      { start: T0 - 1000 },
      { start: T0 + 100_000 },
      { start: T0, entity_ids: ['light.new', 'nope.none', 'climate.den', 'light.new', 'switch.only_before'] },
    ];
    let compared = 0;
    for (const period of periods)
      for (const include_start_time_state of [undefined, false])
        for (const significant_changes_only of [undefined, false])
          for (const no_attributes of [undefined, true])
            for (const minimal_response of [undefined, true])
              for (const format of ['websocket', 'rest'] as HistoryFormat[]) {
                const query = { ...period, include_start_time_state, significant_changes_only, no_attributes };
                const reference = (format === 'websocket' ? compressedHistoryJson : restHistoryJson)(
                  queries.history(query),
                  { minimal_response, no_attributes },
                );
                const written = queries.historyJson(query, { format, minimal_response });
                expect({ query, format, minimal_response, json: JSON.parse(written) }).toEqual({
                  query,
                  format,
                  minimal_response,
                  json: JSON.parse(reference),
                });
                compared++;
              }
    expect(compared).toBe(160);
  });

  it("writes HA's items: start state stamped at start, lc on attribute updates, REST times in HA's isoformat", () => {
    const queries = setup();
    const ws = JSON.parse(
      queries.historyJson({ start: T0, end: T0 + 3, entity_ids: ['sensor.power'] }, { format: 'websocket' }),
    );
    expect(ws).toEqual({
      'sensor.power': [
        { s: '5', a: { unit_of_measurement: 'W', friendly_name: 'Power "main"' }, lu: T0 },
        { s: '6.5', a: { unit_of_measurement: 'W', friendly_name: 'Power "main"' }, lu: T0 + 2.001 },
      ],
    });
    const rest = JSON.parse(
      queries.historyJson(
        { start: T0, end: T0 + 3, entity_ids: ['sensor.power'], significant_changes_only: false, no_attributes: true },
        { format: 'rest' },
      ),
    );
    expect(rest).toEqual([
      [
        {
          entity_id: 'sensor.power',
          state: '5',
          attributes: {},
          last_changed: '2026-11-20T12:00:00.000000+00:00',
          last_updated: '2026-11-20T12:00:00.000000+00:00',
        },
        {
          entity_id: 'sensor.power',
          state: '5',
          attributes: {},
          last_changed: '2026-11-20T11:58:20.000000+00:00',
          last_updated: '2026-11-20T12:00:01.000000+00:00',
        },
        {
          entity_id: 'sensor.power',
          state: '6.5',
          attributes: {},
          last_changed: '2026-11-20T12:00:02.001000+00:00',
          last_updated: '2026-11-20T12:00:02.001000+00:00',
        },
      ],
    ]);
    expect(queries.historyJson({ start: T0, entity_ids: ['nope.none'] }, { format: 'rest' })).toBe('[]');
    expect(queries.historyJson({ start: T0 + 100_000, include_start_time_state: false }, { format: 'websocket' })).toBe(
      '{}',
    );
  });

  it('formats times as haIsoTime does, sub-millisecond times included', () => {
    const iso = isoTimeFormatter();
    for (const t of [T0, T0 + 0.0005, T0 + 59.9996, T0 + 3.1234567, 0, 1.5, T0 - 0.0004, 4102444800.999])
      expect(iso(t)).toBe(haIsoTime(t));
  });

  it('every statement is an index search in index order (no temp b-tree sort)', () => {
    const database = openTempDatabase(cleanups);
    const plan = (sql: string) =>
      (
        database.sqlite
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .all(sql.includes('@end') ? { metadata_id: 1, start: 1, end: 2 } : { metadata_id: 1, start: 1 }) as {
          detail: string;
        }[]
      ).map((r) => r.detail);
    const search =
      /^SEARCH recorder_states USING COVERING INDEX recorder_states_entity_time \(metadata_id=\? AND last_updated[<>]/;
    for (const significant of [false, true])
      for (const sql of Object.values(historyJsonSql(significant)))
        expect(plan(sql)).toEqual([expect.stringMatching(search)]);
  });
});
