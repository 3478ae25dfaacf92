import { describe, expect, it } from 'vitest';
import { compressedHistoryJson, restHistoryJson, toLogbookEntries } from './ha-shapes.ts';
import { haIsoTime } from './ha-time.ts';
import type { History, LogbookRow } from './queries.ts';

/** 2026-11-20T12:00:00Z */
const T0 = Date.UTC(2026, 10, 20, 12) / 1000;

const toCompressedHistory = (...args: Parameters<typeof compressedHistoryJson>) =>
  JSON.parse(compressedHistoryJson(...args)) as Record<string, Record<string, unknown>[]>;
const toRestHistory = (...args: Parameters<typeof restHistoryJson>) =>
  JSON.parse(restHistoryJson(...args)) as Record<string, unknown>[][];

const history = (): History =>
  new Map([
    [
      'sensor.temp',
      [
        { state: '19', attributes: { unit_of_measurement: '°C' }, last_updated: T0, last_changed: T0 },
        {
          state: '19',
          attributes: { unit_of_measurement: '°C', battery: 5 },
          last_updated: T0 + 30.5,
          last_changed: T0,
        },
        { state: '20', attributes: { unit_of_measurement: '°C' }, last_updated: T0 + 60, last_changed: T0 + 60 },
      ],
    ],
    [
      'climate.den',
      [
        { state: 'heat', attributes: { temperature: 20 }, last_updated: T0 + 1, last_changed: T0 + 1 },
        { state: 'heat', attributes: { temperature: 21 }, last_updated: T0 + 2, last_changed: T0 + 1 },
      ],
    ],
  ]);

describe('history shapes', () => {
  it('formats times as HA does', () => {
    expect(haIsoTime(T0 + 30.5)).toBe('2026-11-20T12:00:30.500000+00:00');
  });

  it('history_during_period: {entity_id: [{s, a, lu, lc?}]}', () => {
    expect(toCompressedHistory(history())).toEqual({
      'sensor.temp': [
        { s: '19', a: { unit_of_measurement: '°C' }, lu: T0 },
        { s: '19', a: { unit_of_measurement: '°C', battery: 5 }, lu: T0 + 30.5, lc: T0 },
        { s: '20', a: { unit_of_measurement: '°C' }, lu: T0 + 60 },
      ],
      'climate.den': [
        { s: 'heat', a: { temperature: 20 }, lu: T0 + 1 },
        { s: 'heat', a: { temperature: 21 }, lu: T0 + 2, lc: T0 + 1 },
      ],
    });
  });

  it('minimal_response: first item full, then only state changes as {s, lu}; climate keeps full items', () => {
    const out = toCompressedHistory(history(), { minimal_response: true, no_attributes: true });
    expect(out['sensor.temp']).toEqual([
      { s: '19', a: {}, lu: T0 },
      { s: '20', lu: T0 + 60 },
    ]);
    expect(out['climate.den']).toEqual([
      { s: 'heat', a: {}, lu: T0 + 1 },
      { s: 'heat', a: {}, lu: T0 + 2, lc: T0 + 1 },
    ]);
  });

  it('writes a shared attribute set once and splices it into every item that uses it', () => {
    const shared = { friendly_name: 'Quote " and \\ and é', nested: { list: [1, null, 'x'] } };
    const h: History = new Map([
      ['sensor.a', [{ state: '1', attributes: shared, last_updated: T0, last_changed: T0 }]],
      ['sensor.b', [{ state: null, attributes: shared, last_updated: T0 + 1, last_changed: T0 }]],
    ]);
    const text = compressedHistoryJson(h);
    expect(text.split(JSON.stringify(shared)).length - 1).toBe(2);
    expect(JSON.parse(text)).toEqual({
      'sensor.a': [{ s: '1', a: shared, lu: T0 }],
      'sensor.b': [{ s: null, a: shared, lu: T0 + 1, lc: T0 }],
    });
    expect(JSON.parse(restHistoryJson(h))[1]).toEqual([
      {
        entity_id: 'sensor.b',
        state: null,
        attributes: shared,
        last_changed: '2026-11-20T12:00:00.000000+00:00',
        last_updated: '2026-11-20T12:00:01.000000+00:00',
      },
    ]);
  });

  it('an empty history is an empty object (WebSocket) or list (REST)', () => {
    expect(compressedHistoryJson(new Map())).toBe('{}');
    expect(restHistoryJson(new Map())).toBe('[]');
  });

  it('REST: a list of lists of full states; minimal_response leaves {state, last_changed} after the first', () => {
    expect(toRestHistory(history())[0]).toEqual([
      {
        entity_id: 'sensor.temp',
        state: '19',
        attributes: { unit_of_measurement: '°C' },
        last_changed: '2026-11-20T12:00:00.000000+00:00',
        last_updated: '2026-11-20T12:00:00.000000+00:00',
      },
      {
        entity_id: 'sensor.temp',
        state: '19',
        attributes: { unit_of_measurement: '°C', battery: 5 },
        last_changed: '2026-11-20T12:00:00.000000+00:00',
        last_updated: '2026-11-20T12:00:30.500000+00:00',
      },
      {
        entity_id: 'sensor.temp',
        state: '20',
        attributes: { unit_of_measurement: '°C' },
        last_changed: '2026-11-20T12:01:00.000000+00:00',
        last_updated: '2026-11-20T12:01:00.000000+00:00',
      },
    ]);
    const minimal = toRestHistory(history(), { minimal_response: true });
    expect(minimal[0]).toEqual([
      {
        entity_id: 'sensor.temp',
        state: '19',
        attributes: { unit_of_measurement: '°C' },
        last_changed: '2026-11-20T12:00:00.000000+00:00',
        last_updated: '2026-11-20T12:00:00.000000+00:00',
      },
      { state: '20', last_changed: '2026-11-20T12:01:00.000000+00:00' },
    ]);
    expect(minimal[1]).toHaveLength(2);
    expect(minimal[1][1]).toMatchObject({ entity_id: 'climate.den', attributes: { temperature: 21 } });
  });
});

describe('logbook shapes', () => {
  const rows: LogbookRow[] = [
    { kind: 'event', when: T0, event_type: 'homeassistant_start', data: {} },
    {
      kind: 'state',
      when: T0 + 1,
      entity_id: 'binary_sensor.door',
      state: 'on',
      attributes: { friendly_name: 'Door', icon: 'mdi:door' },
    },
    { kind: 'state', when: T0 + 2, entity_id: 'light.hall', state: 'off', attributes: {} },
    {
      kind: 'event',
      when: T0 + 3,
      event_type: 'logbook_entry',
      data: { name: 'Kitchen', message: 'was cleaned', domain: 'vacuum', entity_id: 'vacuum.robo' },
    },
    { kind: 'event', when: T0 + 4, event_type: 'homeassistant_stop', data: {} },
  ];

  it('event_stream: epoch times, no names', () => {
    expect(toLogbookEntries(rows, { time: 'epoch' })).toEqual([
      { when: T0, name: 'Home Assistant', message: 'started', domain: 'homeassistant' },
      { when: T0 + 1, state: 'on', entity_id: 'binary_sensor.door', icon: 'mdi:door' },
      { when: T0 + 2, state: 'off', entity_id: 'light.hall' },
      { when: T0 + 3, name: 'Kitchen', message: 'was cleaned', domain: 'vacuum', entity_id: 'vacuum.robo' },
      { when: T0 + 4, name: 'Home Assistant', message: 'stopped', domain: 'homeassistant' },
    ]);
  });

  it('REST: ISO times and entity names', () => {
    const out = toLogbookEntries(rows, { time: 'iso', include_names: true });
    expect(out[1]).toEqual({
      when: '2026-11-20T12:00:01.000000+00:00',
      state: 'on',
      entity_id: 'binary_sensor.door',
      name: 'Door',
      icon: 'mdi:door',
    });
    expect(out[2]).toEqual({
      when: '2026-11-20T12:00:02.000000+00:00',
      state: 'off',
      entity_id: 'light.hall',
      name: 'light.hall',
    });
  });
});
