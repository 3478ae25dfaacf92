import { describe, expect, it } from 'vitest';
import type { PendingRow } from './store.ts';
import { packRows, unpackRows } from './writer-protocol.ts';

describe('recorder writer protocol', () => {
  it('packs rows into columns and one string, and unpacks them as the thread writes them', () => {
    const rows: PendingRow[] = [
      {
        kind: 'state',
        entity_id: 'sensor.a',
        state: '21.5',
        attributes: { unit: '°C' },
        last_updated: 1.5,
        last_changed: null,
      },
      {
        kind: 'state',
        entity_id: 'sensor.b',
        state: null,
        attributes: null,
        shared: null,
        last_updated: 2,
        last_changed: 1,
      },
      { kind: 'event', event_type: 'call_service', data: { domain: 'light' }, time_fired: 3 },
      {
        kind: 'state',
        entity_id: 'sensor.c',
        state: '',
        attributes: null,
        shared: '{"e":"\\u0000😀"}',
        last_updated: 4,
        last_changed: null,
      },
      { kind: 'event', event_type: 'homeassistant_start', data: {}, json: '{}', time_fired: 5 },
    ];
    const packed = packRows(rows);
    expect(packed.text).toBe(
      'sensor.a21.5{"unit":"°C"}sensor.bcall_service{"domain":"light"}sensor.c{"e":"\\u0000😀"}homeassistant_start{}',
    );
    expect(unpackRows(packed)).toEqual([
      {
        kind: 'state',
        entity_id: 'sensor.a',
        state: '21.5',
        attributes: null,
        shared: '{"unit":"°C"}',
        last_updated: 1.5,
        last_changed: null,
      },
      {
        kind: 'state',
        entity_id: 'sensor.b',
        state: null,
        attributes: null,
        shared: null,
        last_updated: 2,
        last_changed: 1,
      },
      { kind: 'event', event_type: 'call_service', data: null, json: '{"domain":"light"}', time_fired: 3 },
      {
        kind: 'state',
        entity_id: 'sensor.c',
        state: '',
        attributes: null,
        shared: '{"e":"\\u0000😀"}',
        last_updated: 4,
        last_changed: null,
      },
      { kind: 'event', event_type: 'homeassistant_start', data: null, json: '{}', time_fired: 5 },
    ]);
  });
});
