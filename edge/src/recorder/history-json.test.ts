import { afterEach, describe, expect, it } from 'vitest';
import type { EntityState } from '@smarthome/protocol';
import { EventBus } from '../bus.ts';
import { EdgeDatabase } from '../db/database.ts';
import { silentLogger } from '../log.ts';
import { tempDir } from '../test-helpers.ts';
import { toCompressedHistory, toRestHistory } from './ha-shapes.ts';
import { Recorder } from './recorder.ts';

/** The serialised history (straight from rows) says exactly what the object mapping says. */

const T0 = Date.UTC(2026, 10, 20, 12) / 1000;
const iso = (t: number) => new Date(t * 1000).toISOString();
const item = (entityId: string, state: string | null, attributes: Record<string, unknown>, updated: number, changed = updated): EntityState => ({
  entity_id: entityId, name: entityId, domain: entityId.split('.')[0], platform: 'mqtt', state, attributes, last_updated: iso(updated), last_changed: iso(changed),
});

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => { await cleanup?.(); cleanup = null; });

describe('historyJson', () => {
  it('matches toCompressedHistory and toRestHistory for every option', async () => {
    const tmp = tempDir();
    const database = new EdgeDatabase(tmp.dir);
    database.open();
    const bus = new EventBus((err) => { throw err; });
    const recorder = new Recorder({ database, bus, log: silentLogger, clock: { now: () => (T0 + 1000) * 1000 } }, { historyDays: 10 });
    recorder.start();
    cleanup = async () => { await recorder.stop(); database.close(); tmp.cleanup(); };
    const emit = (s: EntityState) => bus.emit('state_changed', { entity_id: s.entity_id, old_state: null, new_state: s });
    emit(item('sensor.t', '20', { unit_of_measurement: '°C', friendly_name: 'T "quoted"' }, T0 - 100));
    emit(item('sensor.t', '21.5', { unit_of_measurement: '°C', friendly_name: 'T "quoted"' }, T0 + 10));
    emit(item('sensor.t', '21.5', { unit_of_measurement: '°C', friendly_name: 'T', extra: [1, { a: null }] }, T0 + 20, T0 + 10));
    emit(item('sensor.t', null, {}, T0 + 30));
    emit(item('climate.c', 'heat', { temperature: 20 }, T0 + 5));
    emit(item('climate.c', 'heat', { temperature: 21 }, T0 + 6, T0 + 5));
    emit(item('light.l', 'on', { brightness: 3 }, T0 + 7.123456));
    emit(item('light.l', 'off', {}, T0 + 8));
    recorder.flush();
    const ids = ['sensor.t', 'climate.c', 'light.l', 'light.none'];
    for (const significant of [true, false]) {
      for (const minimal of [false, true]) {
        for (const noAttributes of [false, true]) {
          const query = { start: T0, end: T0 + 100, entity_ids: ids, significant_changes_only: significant, no_attributes: noAttributes };
          const shape = { minimal_response: minimal, no_attributes: noAttributes };
          const objects = recorder.history(query);
          const what = JSON.stringify({ significant, minimal, noAttributes });
          expect(JSON.parse(recorder.historyJson(query, { format: 'websocket', ...shape })), what).toEqual(toCompressedHistory(objects, shape));
          expect(JSON.parse(recorder.historyJson(query, { format: 'rest', ...shape })), what).toEqual(toRestHistory(objects, shape));
        }
      }
    }
    expect(JSON.parse(recorder.historyJson({ start: T0, end: T0 + 100, entity_ids: ['light.none'] }, { format: 'websocket' }))).toEqual({});
    expect(JSON.parse(recorder.historyJson({ start: T0, end: T0 + 100, entity_ids: ['light.none'] }, { format: 'rest' }))).toEqual([]);
  });
});
