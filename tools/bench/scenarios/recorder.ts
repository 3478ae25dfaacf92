import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EventBus } from '@smarthome/edge/bus';
import { EdgeDatabase } from '@smarthome/edge/db/database';
import { silentLogger } from '@smarthome/edge/log';
import { toCompressedHistory, toLogbookEntries, toRestHistory } from '@smarthome/edge/recorder/ha-shapes';
import { Recorder } from '@smarthome/edge/recorder/recorder';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';
import { edgeTarget, measure, median } from './mqtt-ingest.ts';

/**
 * The recorder's cost and speed. Ingest: the mqtt-ingest load against an edge with the recorder
 * on (default) and off (--history-days 0), same run. Queries: a day of one change per minute for
 * N entities (half sensors with a unit, half binary sensors), seeded straight into SQLite, then
 * history (as history_during_period and as REST) and logbook answered and mapped to HA's shapes.
 */

const MAX_INGEST_COST = 0.15;
const MAX_QUERY_MS = 1000;

function seed(dir: string, entities: number, perEntity: number, start: number): EdgeDatabase {
  const database = new EdgeDatabase(dir);
  database.open();
  const sqlite = database.sqlite;
  const insertEntity = sqlite.prepare('INSERT INTO recorder_entities (metadata_id, entity_id) VALUES (?, ?)');
  const insertAttributes = sqlite.prepare(
    'INSERT INTO recorder_attributes (attributes_id, metadata_id, hash, shared) VALUES (?, ?, 0, ?)',
  );
  const insertState = sqlite.prepare(
    'INSERT INTO recorder_states (metadata_id, state, attributes_id, last_updated, last_changed) VALUES (?, ?, ?, ?, NULL)',
  );
  sqlite.transaction(() => {
    for (let e = 1; e <= entities; e++) {
      const sensor = e % 2 === 0;
      insertEntity.run(e, sensor ? `sensor.power_${e}` : `binary_sensor.motion_${e}`);
      insertAttributes.run(
        e,
        e,
        JSON.stringify(
          sensor
            ? {
                unit_of_measurement: 'W',
                device_class: 'power',
                state_class: 'measurement',
                friendly_name: `Power ${e}`,
              }
            : { device_class: 'motion', friendly_name: `Motion ${e}` },
        ),
      );
    }
    // time order, as the recorder writes them
    for (let i = 0; i < perEntity; i++) {
      for (let e = 1; e <= entities; e++) {
        insertState.run(
          e,
          e % 2 === 0 ? String((i * 7 + e) % 1000) : i % 2 ? 'on' : 'off',
          e,
          start + i * 60 + e / 1000,
        );
      }
    }
  })();
  return database;
}

function time<T>(fn: () => T): { ms: number; value: T } {
  const started = performance.now();
  const value = fn();
  return { ms: performance.now() - started, value };
}

export const scenario: BenchScenario = {
  name: 'recorder',
  description:
    'recorder: MQTT ingest with recorder on vs off; history and logbook over 24 h of N entities (one change/min each)',
  async run({ quick, log }: BenchOptions): Promise<BenchResult> {
    const messages = quick ? 20_000 : 100_000;
    const rounds = quick ? 2 : 3;
    const off = await measure(() => edgeTarget(log, { historyDays: 0 }, 'edge, recorder off'), messages, rounds, log);
    const on = await measure(() => edgeTarget(log, {}, 'edge, recorder on'), messages, rounds, log);
    const offRate = median(off.rates);
    const onRate = median(on.rates);
    const cost = 1 - onRate / offRate;

    const entities = quick ? 200 : 1000;
    const perEntity = 1440;
    const start = Math.floor(Date.now() / 1000) - 86_400;
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-recorder-'));
    const rows: (string | number)[][] = [
      [off.name, `${messages.toLocaleString('en-US')} msgs × ${rounds}`, Math.round(offRate), '', ''],
      [
        on.name,
        `${messages.toLocaleString('en-US')} msgs × ${rounds}`,
        Math.round(onRate),
        '',
        `cost ${Math.round(cost * 1000) / 10}%`,
      ],
    ];
    let worstQueryMs = 0;
    try {
      const seeded = time(() => seed(dir, entities, perEntity, start));
      const database = seeded.value;
      log(`seeded ${(entities * perEntity).toLocaleString('en-US')} rows in ${Math.round(seeded.ms)} ms`);
      const recorder = new Recorder({ database, bus: new EventBus(), log: silentLogger }, { historyDays: 10 });
      const end = start + 86_400 + 60;
      const all = Array.from({ length: entities }, (_, i) =>
        i % 2 === 1 ? `sensor.power_${i + 1}` : `binary_sensor.motion_${i + 1}`,
      );
      // each query ends in the JSON text a client receives (what the HA API sends): serialising is much of the work
      const count = (json: string) => (json.match(/"lu":|"last_changed":/g) ?? []).length;
      const q = { start, end, entity_ids: all };
      const queries: [string, () => number][] = [
        ['history_during_period, all entities', () => count(JSON.stringify(toCompressedHistory(recorder.history(q))))],
        [
          'history … minimal_response + no_attributes',
          () =>
            count(
              JSON.stringify(
                toCompressedHistory(recorder.history({ ...q, no_attributes: true }), {
                  minimal_response: true,
                  no_attributes: true,
                }),
              ),
            ),
        ],
        ['history REST, all entities', () => count(JSON.stringify(toRestHistory(recorder.history(q))))],
        [
          'history, one entity',
          () => count(JSON.stringify(toCompressedHistory(recorder.history({ start, end, entity_ids: [all[0]] })))),
        ],
        ['logbook, all entities', () => toLogbookEntries(recorder.logbook({ start, end }), { time: 'epoch' }).length],
        [
          'logbook, one entity',
          () => toLogbookEntries(recorder.logbook({ start, end, entity_ids: [all[0]] }), { time: 'epoch' }).length,
        ],
      ];
      for (const [name, fn] of queries) {
        fn(); // warm-up: statements prepared, pages cached
        const runs = Array.from({ length: 3 }, () => time(fn));
        const ms = median(runs.map((r) => r.ms));
        if (name.startsWith('history')) worstQueryMs = Math.max(worstQueryMs, ms);
        rows.push([
          name,
          `24 h × ${entities.toLocaleString('en-US')} entities`,
          '',
          Math.round(ms * 10) / 10,
          `${runs[0].value.toLocaleString('en-US')} items`,
        ]);
        log(`${name}: ${Math.round(ms)} ms`);
      }
      database.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const ok = cost <= MAX_INGEST_COST && worstQueryMs < MAX_QUERY_MS;
    return {
      columns: ['measure', 'load', 'median msg/s', 'median ms', 'note'],
      rows,
      summary:
        `recorder costs ${Math.round(cost * 1000) / 10}% of ingest (target ≤ ${MAX_INGEST_COST * 100}%); ` +
        `24 h history of ${entities} entities in ${Math.round(worstQueryMs)} ms at worst (target < ${MAX_QUERY_MS} ms)`,
      ok,
    };
  },
};
