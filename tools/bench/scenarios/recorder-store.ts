import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EdgeDatabase } from '@smarthome/edge/db/database';
import { RecorderStore, type PendingState } from '@smarthome/edge/recorder/store';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';
import { median } from './mqtt-ingest.ts';

/**
 * The recorder writer's own cost: RecorderStore.write (the attribute dedup and the SQL) on the
 * edge database's connection (the writer thread's has the same settings), in 5,000-row transactions over 200 entities; the
 * CPU time of the calling thread per row. Four kinds of rows: a new attribute set each row, sets
 * that come back after 100 rows of their entity (what the recorder bench's rounds send: the
 * publishers repeat their payloads each round), sets that repeat (a typical sensor), and a new
 * 350-byte set each row (zigbee2mqtt-like). BENCH_STORE_BASE=<checkout> adds that checkout's store
 * in the same rounds (each store on a fresh data dir of its own schema). No target: the recorder
 * bench judges the cost in the edge.
 */

const ENTITIES = 200;
const BATCH = 5000;

interface Writer {
  write(rows: PendingState[]): void;
}
type StoreModules = {
  EdgeDatabase: typeof EdgeDatabase;
  RecorderStore: new (connection: EdgeDatabase) => Writer & { open(): void };
};

const zigbee = {
  linkquality: 120,
  battery: 98,
  voltage: 3000,
  temperature: 21.5,
  humidity: 45.2,
  pressure: 1012,
  update: { state: 'idle', installed_version: 123, latest_version: 123 },
  update_available: false,
  last_seen: '2026-11-23T19:00:00.000Z',
  device: { friendlyName: 'Kitchen sensor', model: 'WSDCGQ11LM', ieeeAddr: '0x00158d0001234567' },
};

const PATTERNS: Record<string, (n: number, entity: number) => Record<string, unknown>> = {
  'a new set each row': (n) => ({ value: n, ts: n }),
  'sets back after 100 rows of the entity': (n) => ({ value: n % 20_000, ts: n % 20_000 }),
  'sets repeat (typical sensor)': (_, e) => ({ unit_of_measurement: 'W', friendly_name: `Bench ${e}` }),
  'a new 350-byte set each row': (n) => ({ value: n, ts: n, ...zigbee }),
};

function batch(b: number, t0: number, attributes: (n: number, entity: number) => Record<string, unknown>) {
  return Array.from({ length: BATCH }, (_, i): PendingState => {
    const n = b * BATCH + i;
    const e = n % ENTITIES;
    return {
      kind: 'state',
      entity_id: `sensor.bench_${e}`,
      state: String(n),
      attributes: null,
      shared: JSON.stringify(attributes(n, e)),
      last_updated: t0 + n / 1000,
      last_changed: null,
    };
  });
}

/** µs of this thread's CPU per row for `rows` rows written by the store of `modules` on a fresh data dir. */
function measure(modules: StoreModules, rows: number, pattern: string): number {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-store-'));
  const database = new modules.EdgeDatabase(dir);
  database.open();
  const store = new modules.RecorderStore(database);
  store.open();
  const t0 = Date.now() / 1000;
  let cpu = 0;
  try {
    for (let b = 0; b < rows / BATCH; b++) {
      const input = batch(b, t0, PATTERNS[pattern]);
      const used = process.threadCpuUsage();
      store.write(input);
      const d = process.threadCpuUsage(used);
      cpu += d.user + d.system;
    }
  } finally {
    database.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return cpu / rows;
}

export const scenario: BenchScenario = {
  name: 'recorder-store',
  description: `recorder writer: RecorderStore.write CPU per row (${BATCH}-row transactions, ${ENTITIES} entities), four kinds of attribute sets`,
  async run({ quick, log }: BenchOptions): Promise<BenchResult> {
    const rows = quick ? 100_000 : 300_000;
    const rounds = quick ? 3 : 5;
    const variants: [string, StoreModules][] = [['this checkout', { EdgeDatabase, RecorderStore }]];
    const base = process.env.BENCH_STORE_BASE;
    if (base) {
      const db = (await import(path.resolve(base, 'edge/src/db/database.ts'))) as StoreModules;
      const store = (await import(path.resolve(base, 'edge/src/recorder/store.ts'))) as StoreModules;
      variants.push([base, { EdgeDatabase: db.EdgeDatabase, RecorderStore: store.RecorderStore }]);
    }
    const out: (string | number)[][] = [];
    for (const pattern of Object.keys(PATTERNS)) {
      const us = variants.map(() => [] as number[]);
      // variants alternate within each round: the same machine load for each
      for (let r = 0; r < rounds; r++)
        for (let j = 0; j < variants.length; j++) {
          const k = (r + j) % variants.length;
          us[k].push(measure(variants[k][1], rows, pattern));
        }
      variants.forEach(([name], k) => {
        out.push([pattern, name, rows, median(us[k]).toFixed(2), us[k].map((x) => x.toFixed(2)).join(' ')]);
        log(`${pattern}, ${name}: ${median(us[k]).toFixed(2)} µs/row`);
      });
    }
    return { columns: ['rows', 'store', 'rows/round', 'median µs/row (thread CPU)', 'per round'], rows: out };
  },
};
