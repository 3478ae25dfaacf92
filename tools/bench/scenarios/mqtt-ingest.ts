import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { createEdge, type Edge, type EdgeConfig } from '@smarthome/edge/edge';
import { silentLogger } from '@smarthome/edge/log';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * MQTT state messages per second at QoS 1: the edge (discovery entities, templates, state
 * machine, write-behind to SQLite) vs a bare Aedes broker, same machine, same run, same load
 * from publisher threads. The edge's time includes flushing the last states to disk.
 */

export interface Target {
  name: string;
  url: string;
  username?: string;
  password?: string;
  stop: () => Promise<void>;
  settle: () => Promise<void>;
}

const ENTITIES = 200;
const PUBLISHERS = 4;
const WINDOW = 200;

const topicsFor = (n: number) => Array.from({ length: n }, (_, i) => `bench/sensor${i}/state`);

async function bareAedes(): Promise<Target> {
  const broker = await Aedes.createBroker();
  const server: Server = createServer(broker.handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    name: 'bare Aedes',
    url: `mqtt://127.0.0.1:${port}`,
    settle: async () => {},
    stop: async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An edge with ENTITIES discovered sensors; `extra` config and `name` let other scenarios vary it. */
export async function edgeTarget(
  log: (m: string) => void,
  extra: Partial<EdgeConfig> = {},
  name = 'edge (persisted states)',
): Promise<Target> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-edge-'));
  const edge: Edge = createEdge({
    port: 0,
    mqttPort: 0,
    dataDir: dir,
    host: '127.0.0.1',
    logger: silentLogger,
    ...extra,
  });
  await edge.start();
  const creds = await edge.createMqttCredentials({ username: 'bench' });
  const url = `mqtt://127.0.0.1:${edge.ports.mqtt}`;
  const c = await mqtt.connectAsync(url, { ...creds, reconnectPeriod: 0 });
  const topics = topicsFor(ENTITIES);
  await Promise.all(
    topics.map((t, i) =>
      c.publishAsync(
        `homeassistant/sensor/bench/s${i}/config`,
        JSON.stringify({
          name: `Bench ${i}`,
          uniq_id: `bench-${i}`,
          stat_t: t,
          val_tpl: '{{ value_json.value }}',
          unit_of_meas: 'W',
          json_attr_t: t,
        }),
        { qos: 1, retain: true },
      ),
    ),
  );
  await c.endAsync();
  while (edge.discovery.entityCount() < ENTITIES) await new Promise((r) => setTimeout(r, 10));
  log(`edge: ${ENTITIES} sensor entities discovered`);
  return {
    name,
    url,
    ...creds,
    settle: async () => {
      edge.states.flush();
      edge.recorder?.flush();
    },
    stop: async () => {
      await edge.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function drive(target: Target, messages: number): Promise<number> {
  const per = Math.ceil(messages / PUBLISHERS);
  const topics = topicsFor(ENTITIES);
  const workers = Array.from(
    { length: PUBLISHERS },
    (_, w) =>
      new Worker(new URL('../lib/publisher-worker.ts', import.meta.url), {
        workerData: {
          url: target.url,
          username: target.username,
          password: target.password,
          topics: topics.filter((_, i) => i % PUBLISHERS === w),
          messages: per,
          window: WINDOW,
          qos: 1,
          offset: w * 1e6,
        },
      }),
  );
  const connected = workers.map(
    (w) =>
      new Promise<void>((resolve, reject) => {
        w.once('message', () => resolve());
        w.once('error', reject);
      }),
  );
  await Promise.all(connected);
  const done = workers.map(
    (w) =>
      new Promise<void>((resolve, reject) => {
        w.on('message', (m: { type: string }) => {
          if (m.type === 'done') resolve();
        });
        w.once('error', reject);
      }),
  );
  const started = performance.now();
  for (const w of workers) w.postMessage('go');
  await Promise.all(done);
  await target.settle();
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(workers.map((w) => w.terminate()));
  return (per * PUBLISHERS) / seconds;
}

export async function measure(
  make: () => Promise<Target>,
  messages: number,
  rounds: number,
  log: (m: string) => void,
): Promise<{ name: string; rates: number[] }> {
  const target = await make();
  try {
    await drive(target, Math.min(5000, messages)); // warm-up
    const rates: number[] = [];
    for (let i = 0; i < rounds; i++) {
      rates.push(await drive(target, messages));
      log(`${target.name}: round ${i + 1}: ${Math.round(rates[i]).toLocaleString('en-US')} msg/s`);
    }
    return { name: target.name, rates };
  } finally {
    await target.stop();
  }
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export const scenario: BenchScenario = {
  name: 'mqtt-ingest',
  description: `QoS 1 state messages/s: edge (${ENTITIES} discovered sensors, persisted) vs bare Aedes; ${PUBLISHERS} publisher threads`,
  async run({ quick, log }: BenchOptions): Promise<BenchResult> {
    const messages = quick ? 20_000 : 100_000;
    const rounds = quick ? 2 : 3;
    const bare = await measure(bareAedes, messages, rounds, log);
    const edge = await measure(() => edgeTarget(log), messages, rounds, log);
    const bareRate = median(bare.rates);
    const edgeRate = median(edge.rates);
    const ratio = edgeRate / bareRate;
    return {
      columns: ['target', 'messages/round', 'rounds', 'median msg/s', 'best msg/s', '% of bare'],
      rows: [
        [bare.name, messages, rounds, Math.round(bareRate), Math.round(Math.max(...bare.rates)), 100],
        [
          edge.name,
          messages,
          rounds,
          Math.round(edgeRate),
          Math.round(Math.max(...edge.rates)),
          Math.round(ratio * 1000) / 10,
        ],
      ],
      summary: `edge ingests ${Math.round(ratio * 100)}% of bare Aedes at QoS 1 (target ≥ 60%)`,
      ok: ratio >= 0.6,
    };
  },
};
