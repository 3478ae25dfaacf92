import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DB_FILE } from '../db/database.ts';
import { connect, startEdge, tempDir, waitFor } from '../testing/edge.ts';
import { item, recordedStates, T0, useRecorders } from '../testing/recorder.ts';

const { setup, tmps, cleanups } = useRecorders();

describe('recording', () => {
  it("the background writes' gate follows the default writer: none while it writes inline, the thread's once a busy window starts it, none after stop", async () => {
    // one busy window is enough here (three in a row by default: adaptive-writer.test.ts)
    const { recorder, database, emit, stop } = setup({
      writer: 'auto',
      maxBatch: 1000,
      adaptive: { sustainWindows: 1 },
    });
    emit(item('sensor.a', '1', {}, T0));
    await waitFor(() => recorder.pendingRows === 0, 3000, 'the first row');
    expect(recorder.threaded).toBe(false);
    expect(database.writeGate).toBeNull();
    for (let i = 0; i < 600; i++) emit(item(`sensor.s${i}`, String(i), {}, T0 + 1));
    await waitFor(() => recorder.threaded, 3000, 'the burst starts the thread');
    expect(recorder.threaded).toBe(true);
    const gate = database.writeGate;
    expect(gate).not.toBeNull();
    expect(gate!.tryEnter()).toBe(true);
    gate!.leave();
    await stop();
    expect(database.writeGate).toBeNull();
  });

  it('writes state changes behind, in a few transactions, and dedups attribute sets per entity', async () => {
    const { recorder, emit, count, sets, database } = setup({ maxBatch: 40 });
    await recorder.purge(); // the start-up purge (never purged before) is done
    const batchesBefore = recorder.writtenBatches;
    for (let i = 0; i < 100; i++)
      emit(item('sensor.power', String(i), { unit_of_measurement: 'W', friendly_name: 'Power' }, T0 + i));
    emit(item('sensor.power', '100', { unit_of_measurement: 'kW', friendly_name: 'Power' }, T0 + 100));
    emit(item('light.hall', 'on', { unit_of_measurement: 'W', friendly_name: 'Power' }, T0 + 100));
    // nothing written on the emitting path
    expect(count('recorder_states')).toBe(0);
    await waitFor(() => recorder.pendingRows === 0, 3000, 'write-behind');
    expect(recordedStates(database)).toHaveLength(102);
    // 102 changes in one tick: past maxBatch the write happens on the next turn, in one transaction
    expect(recorder.writtenBatches - batchesBefore).toBe(1);
    // the power sensor's 101 states of the batch are blocks (two: they span 100 s), which carry their
    // own sets; the light's row carries its set
    expect(count('recorder_states')).toBe(3);
    expect(sets()).toBe(1);
    expect(count('recorder_entities')).toBe(2);
    // a state a batch is a row: a set stored once per entity, later rows point at it
    for (const [i, unit] of ['W', 'W', 'kW', 'W'].entries()) {
      emit(item('sensor.power', String(200 + i), { unit_of_measurement: unit, friendly_name: 'Power' }, T0 + 200 + i));
      recorder.flush();
    }
    expect(sets()).toBe(3);
    expect(
      recorder
        .history({ start: T0 + 99, entity_ids: ['sensor.power'] })
        .get('sensor.power')
        ?.map((s) => [s.state, s.attributes.unit_of_measurement]),
    ).toEqual([
      ['98', 'W'],
      ['99', 'W'],
      ['100', 'kW'],
      ['200', 'W'],
      ['201', 'W'],
      ['202', 'kW'],
      ['203', 'W'],
    ]);
  });

  it('records bus events and its own start/stop, and stop flushes what is pending', async () => {
    const { dir, bus, recorder, emit, stop } = setup({ flushDelayMs: 60_000 });
    bus.emit('call_service', {
      domain: 'light',
      service: 'turn_on',
      entity_ids: ['light.hall'],
      data: { brightness: 3 },
    });
    emit(item('light.hall', 'on', {}, T0 + 1));
    expect(recorder.pendingRows).toBeGreaterThan(0);
    await stop();
    const db = new Database(path.join(dir, DB_FILE), { readonly: true });
    try {
      expect(db.prepare('SELECT event_type, data FROM recorder_events ORDER BY event_id').all()).toEqual([
        { event_type: 'homeassistant_start', data: '{}' },
        {
          event_type: 'call_service',
          data: JSON.stringify({
            domain: 'light',
            service: 'turn_on',
            entity_ids: ['light.hall'],
            data: { brightness: 3 },
          }),
        },
        { event_type: 'homeassistant_stop', data: '{}' },
      ]);
      expect(db.prepare('SELECT state, last_updated, last_changed FROM recorder_states').all()).toEqual([
        { state: 'on', last_updated: T0 + 1, last_changed: null },
      ]);
    } finally {
      db.close();
    }
  });

  it('records nothing for a just-discovered entity until its first state; a later unknown and a removal are kept', () => {
    const { database, recorder, emit, bus, count } = setup();
    const registered = item('switch.fan', null, { friendly_name: 'Fan' }, T0);
    emit(registered); // discovery: registered, no state yet
    emit(item('switch.fan', null, { friendly_name: 'Fan', icon: 'mdi:fan' }, T0 + 1), registered); // config update
    const never = item('light.gone', null, {}, T0 + 1);
    emit(never);
    bus.emit('state_changed', { entity_id: 'light.gone', old_state: never, new_state: null }); // removed, never had a state
    recorder.flush();
    expect(count('recorder_states')).toBe(0);
    expect(count('recorder_entities')).toBe(0);

    const on = item('switch.fan', 'on', { friendly_name: 'Fan' }, T0 + 2);
    emit(on);
    const unknown = item('switch.fan', null, { friendly_name: 'Fan' }, T0 + 3);
    emit(unknown, on);
    bus.emit('state_changed', { entity_id: 'switch.fan', old_state: unknown, new_state: null });
    recorder.flush();
    expect(
      database.sqlite
        .prepare(
          `SELECT e.entity_id, s.state, s.last_updated, s.attributes_id IS NULL AS no_attributes
          FROM recorder_states s JOIN recorder_entities e USING (metadata_id) ORDER BY s.state_id`,
        )
        .all(),
    ).toEqual([
      { entity_id: 'switch.fan', state: 'on', last_updated: T0 + 2, no_attributes: 0 },
      { entity_id: 'switch.fan', state: null, last_updated: T0 + 3, no_attributes: 0 },
      { entity_id: 'switch.fan', state: null, last_updated: T0, no_attributes: 1 },
    ]);
  });

  it('keeps history across a restart on the same data dir', async () => {
    const first = setup();
    first.emit(item('switch.pump', 'on', {}, T0 + 5));
    await first.stop();
    const second = setup({}, first.dir);
    second.emit(item('switch.pump', 'off', {}, T0 + 10));
    second.recorder.flush();
    expect(second.recorder.history({ start: T0 })).toEqual(
      new Map([
        [
          'switch.pump',
          [
            { state: 'on', attributes: {}, last_updated: T0 + 5, last_changed: T0 + 5 },
            { state: 'off', attributes: {}, last_updated: T0 + 10, last_changed: T0 + 10 },
          ],
        ],
      ]),
    );
  });
});

describe('retention', () => {
  it('purges rows and orphaned attribute sets older than historyDays in small steps, keeping recent ones', async () => {
    const { recorder, emit, clock, count, sets, database } = setup({ historyDays: 2, purgeBatch: 7 });
    await recorder.purge();
    const day = 86_400;
    // a state a batch: plain rows, each carrying its new set
    for (let i = 0; i < 50; i++) {
      emit(item('sensor.old', String(i), { n: i }, T0 + i));
      recorder.flush();
    }
    for (let i = 0; i < 30; i++) emit(item('sensor.kept', String(i), { n: 1 }, T0 + i * 0.1 * day));
    recorder.recordEvent('call_service', {});
    recorder.flush();
    expect(sets()).toBe(51);
    clock.t = (T0 + 4.05 * day) * 1000; // cutoff: T0 + 2.05 days
    expect(await recorder.purge()).toBe(50 + 21);
    expect(
      recorder
        .history({ start: T0 - day, significant_changes_only: false, include_start_time_state: false })
        .get('sensor.kept')
        ?.map((s) => s.state),
    ).toEqual(['21', '22', '23', '24', '25', '26', '27', '28', '29']);
    expect(count('recorder_states')).toBe(9);
    expect(sets()).toBe(1);
    expect(count('recorder_events')).toBe(0);
    expect(database.sqlite.prepare("SELECT value FROM recorder_meta WHERE key = 'last_purge'").pluck().get()).toBe(
      String(clock.t),
    );
    // a set whose rows were all purged is written again when it comes back
    emit(item('sensor.old', 'x', { n: 3 }, T0 + 5 * day));
    recorder.flush();
    expect(
      recorder.history({ start: T0 + 5 * day, entity_ids: ['sensor.old'] }).get('sensor.old')?.[0].attributes,
    ).toEqual({ n: 3 });
  });

  it('purges at start when the last purge is over a day old, not when it is recent', async () => {
    const first = setup({ historyDays: 1 });
    await first.recorder.purge();
    first.emit(item('switch.a', 'on', {}, T0 - 3 * 86_400));
    await first.stop();
    const second = setup({ historyDays: 1 }, first.dir);
    second.recorder.flush();
    await new Promise((r) => setTimeout(r, 50));
    expect(second.count('recorder_states')).toBe(1); // purged at T0 already
    await second.stop();
    const third = setup({ historyDays: 1 }, first.dir, (T0 + 25 * 3600) * 1000);
    await waitFor(() => third.count('recorder_states') === 0, 3000, 'start-up purge');
  });
});

describe('recorder in the edge', () => {
  it('records what MQTT devices publish; --history-days 0 turns it off', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const edge = await startEdge(tmp.dir, { stateFlushMs: 20 });
    cleanups.push(() => edge.stop());
    const c = await connect(edge, await edge.createMqttCredentials({ username: 'd' }));
    cleanups.push(() => c.endAsync());
    await c.publishAsync(
      'homeassistant/switch/heater/config',
      JSON.stringify({ name: 'Heater', uniq_id: 'heater', cmd_t: 'heater/set', stat_t: 'heater/state' }),
      { qos: 1, retain: true },
    );
    await waitFor(() => edge.registry.getEntity('switch.heater'));
    const start = Date.now() / 1000 - 1;
    for (const s of ['ON', 'OFF', 'ON']) {
      await c.publishAsync('heater/state', s, { qos: 1 });
      await waitFor(() => edge.states.get('switch.heater')?.state === s.toLowerCase());
    }
    await waitFor(
      () => edge.recorder!.history({ start, entity_ids: ['switch.heater'] }).get('switch.heater')?.length === 3,
      3000,
      'recorded history',
    );
    const h = edge.recorder!.history({ start, entity_ids: ['switch.heater'] }).get('switch.heater')!;
    // discovery creates the entity with no state yet: not recorded; the three changes are
    expect(h.map((s) => [s.state, s.attributes.friendly_name])).toEqual([
      ['on', 'Heater'],
      ['off', 'Heater'],
      ['on', 'Heater'],
    ]);
    expect(h[2].last_updated).toBe(Date.parse(edge.states.get('switch.heater')!.last_updated!) / 1000);

    const off = tempDir();
    tmps.push(off);
    const plain = await startEdge(off.dir, { historyDays: 0 });
    cleanups.push(() => plain.stop());
    expect(plain.recorder).toBeNull();
  });
});
