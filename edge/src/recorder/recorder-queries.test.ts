import { describe, expect, it } from 'vitest';
import { STORED_SET_SQL } from './attribute-text.ts';
import { QUERY_SQL } from './queries.ts';
import { item, T0, useRecorders } from '../testing/recorder.ts';

const { setup } = useRecorders();

describe('history query', () => {
  function seeded() {
    const s = setup();
    const a = { friendly_name: 'Temp', unit_of_measurement: '°C' };
    s.emit(item('sensor.temp', '19', a, T0 - 3600));
    s.emit(item('sensor.temp', '19', { ...a, battery: 50 }, T0 - 1800, T0 - 3600)); // last before start: attribute update
    s.emit(item('sensor.temp', '20', a, T0 + 60));
    s.emit(item('sensor.temp', '20', { ...a, battery: 40 }, T0 + 120, T0 + 60)); // attribute-only
    s.emit(item('sensor.temp', '21', a, T0 + 180));
    s.emit(item('climate.den', 'heat', { temperature: 20 }, T0 + 60));
    s.emit(item('climate.den', 'heat', { temperature: 21 }, T0 + 90, T0 + 60));
    s.emit(item('light.hall', 'on', {}, T0 + 7200)); // after the period below
    s.recorder.flush();
    return s;
  }

  it('answers the state at start, then significant changes, per entity in the asked order', () => {
    const { recorder } = seeded();
    const h = recorder.history({
      start: T0,
      end: T0 + 3600,
      entity_ids: ['sensor.temp', 'climate.den', 'light.hall', 'light.unknown'],
    });
    expect([...h.keys()]).toEqual(['sensor.temp', 'climate.den']);
    expect(h.get('sensor.temp')).toEqual([
      {
        state: '19',
        attributes: { friendly_name: 'Temp', unit_of_measurement: '°C', battery: 50 },
        last_updated: T0,
        last_changed: T0,
      },
      {
        state: '20',
        attributes: { friendly_name: 'Temp', unit_of_measurement: '°C' },
        last_updated: T0 + 60,
        last_changed: T0 + 60,
      },
      {
        state: '21',
        attributes: { friendly_name: 'Temp', unit_of_measurement: '°C' },
        last_updated: T0 + 180,
        last_changed: T0 + 180,
      },
    ]);
    // climate is a significant domain: attribute updates are part of its history
    expect(h.get('climate.den')).toEqual([
      { state: 'heat', attributes: { temperature: 20 }, last_updated: T0 + 60, last_changed: T0 + 60 },
      { state: 'heat', attributes: { temperature: 21 }, last_updated: T0 + 90, last_changed: T0 + 60 },
    ]);
  });

  it('without significant_changes_only, start state or attributes; all entities when none asked', () => {
    const { recorder } = seeded();
    const h = recorder.history({
      start: T0,
      end: T0 + 3600,
      significant_changes_only: false,
      include_start_time_state: false,
      no_attributes: true,
    });
    expect([...h.keys()]).toEqual(['climate.den', 'sensor.temp']);
    expect(h.get('sensor.temp')).toEqual([
      { state: '20', attributes: {}, last_updated: T0 + 60, last_changed: T0 + 60 },
      { state: '20', attributes: {}, last_updated: T0 + 120, last_changed: T0 + 60 },
      { state: '21', attributes: {}, last_updated: T0 + 180, last_changed: T0 + 180 },
    ]);
    // without end: up to now, including the light
    expect(
      recorder
        .history({ start: T0 + 3600 })
        .get('light.hall')
        ?.map((s) => s.state),
    ).toEqual(['on']);
  });
});

describe('query plans', () => {
  it('every read is an index search, history rows come in index order (no temp b-tree sort)', () => {
    const { database } = setup();
    const plan = (sql: string) =>
      (
        database.sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(
          ...sql
            .split('?')
            .slice(1)
            .map(() => 1),
        ) as {
          detail: string;
        }[]
      ).map((r) => r.detail);
    for (const key of ['startState', 'rows', 'significantRows'] as const)
      expect(plan(QUERY_SQL[key])).toEqual([
        expect.stringMatching(
          /^SEARCH recorder_states USING COVERING INDEX recorder_states_entity_time \(metadata_id=\? AND last_updated[<>]/,
        ),
      ]);
    expect(plan(QUERY_SQL.entity)).toEqual([expect.stringMatching(/^SEARCH recorder_entities USING COVERING INDEX/)]);
    expect(plan(STORED_SET_SQL)).toEqual([
      expect.stringMatching(/^SEARCH recorder_attributes USING INTEGER PRIMARY KEY/),
    ]);
    expect(plan(QUERY_SQL.events)).toEqual([
      expect.stringMatching(/^SEARCH recorder_events USING INDEX recorder_events_time/),
    ]);
  });
});

describe('logbook query', () => {
  it('answers state changes of non-continuous entities and logbook events, oldest first', () => {
    const { recorder, emit, clock } = setup();
    emit(item('sensor.temp', '20', { unit_of_measurement: '°C' }, T0 + 10));
    emit(item('binary_sensor.door', 'on', { friendly_name: 'Door' }, T0 + 20));
    emit(item('binary_sensor.door', 'on', { friendly_name: 'Door', battery: 9 }, T0 + 30, T0 + 20));
    emit(item('binary_sensor.door', 'off', { friendly_name: 'Door' }, T0 + 40));
    clock.t = (T0 + 50) * 1000;
    recorder.recordEvent('logbook_entry', { name: 'Kitchen', message: 'was cleaned', entity_id: 'binary_sensor.door' });
    recorder.recordEvent('call_service', { domain: 'light' });
    recorder.flush();
    expect(recorder.logbook({ start: T0 - 1 })).toEqual([
      { kind: 'event', when: T0, event_type: 'homeassistant_start', data: {} },
      {
        kind: 'state',
        when: T0 + 20,
        entity_id: 'binary_sensor.door',
        state: 'on',
        attributes: { friendly_name: 'Door' },
      },
      {
        kind: 'state',
        when: T0 + 40,
        entity_id: 'binary_sensor.door',
        state: 'off',
        attributes: { friendly_name: 'Door' },
      },
      {
        kind: 'event',
        when: T0 + 50,
        event_type: 'logbook_entry',
        data: { name: 'Kitchen', message: 'was cleaned', entity_id: 'binary_sensor.door' },
      },
    ]);
    expect(
      recorder.logbook({ start: T0 + 30, end: T0 + 50, entity_ids: ['binary_sensor.door'] }).map((r) => r.when),
    ).toEqual([T0 + 40]);
  });
});
