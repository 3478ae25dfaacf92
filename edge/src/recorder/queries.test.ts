import { afterEach, describe, expect, it } from 'vitest';
import { openTempDatabase } from '../testing/edge.ts';
import { QUERY_SQL, RecorderQueries } from './queries.ts';
import { RecorderStore, type PendingState } from './store.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

/** 2026-11-20T12:00:00Z */
const T0 = Date.UTC(2026, 10, 20, 12) / 1000;

const row = (entity_id: string, state: string, attributes: Record<string, unknown>, t: number): PendingState => ({
  kind: 'state',
  entity_id,
  state,
  attributes,
  last_updated: t,
  last_changed: null,
});

const open = () => openTempDatabase(cleanups);

describe('logbook query: continuous sensors', () => {
  it('leaves out the rows of a sensor while it has a unit or a state_class, keeps its other rows', () => {
    const database = open();
    const store = new RecorderStore(database);
    store.open();
    store.write([
      row('sensor.power', '5', { unit_of_measurement: 'W' }, T0 + 1),
      row('sensor.power', '6', { unit_of_measurement: 'W' }, T0 + 2),
      row('sensor.mode', 'eco', {}, T0 + 3),
      row('sensor.mode', '7', { state_class: 'measurement' }, T0 + 4),
      row('sensor.mode', 'boost', { icon: 'mdi:fire' }, T0 + 5),
      row('binary_sensor.door', 'on', { unit_of_measurement: 'x' }, T0 + 6),
    ]);
    store.close();
    const queries = new RecorderQueries(database);
    expect(queries.logbook({ start: T0 })).toEqual([
      { kind: 'state', when: T0 + 3, entity_id: 'sensor.mode', state: 'eco', attributes: {} },
      { kind: 'state', when: T0 + 5, entity_id: 'sensor.mode', state: 'boost', attributes: { icon: 'mdi:fire' } },
      {
        kind: 'state',
        when: T0 + 6,
        entity_id: 'binary_sensor.door',
        state: 'on',
        attributes: { unit_of_measurement: 'x' },
      },
    ]);
    expect(queries.logbook({ start: T0, entity_ids: ['sensor.power'] })).toEqual([]);
  });

  it("reads a sensor's attribute sets with an index search", () => {
    const database = open();
    const plan = (
      database.sqlite.prepare(`EXPLAIN QUERY PLAN ${QUERY_SQL.significantSets}`).all(1, 1, 2) as { detail: string }[]
    ).map((r) => r.detail);
    expect(plan[0]).toMatch(
      /^SEARCH recorder_states USING COVERING INDEX recorder_states_entity_time \(metadata_id=\? AND last_updated>\? AND last_updated<\?\)/,
    );
  });
});
