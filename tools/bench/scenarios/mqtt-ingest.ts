import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { createEdge, type Edge, type EdgeConfig } from '@smarthome/edge/edge';
import { silentLogger } from '@smarthome/edge/log';
import { edgeBinaryTarget } from '../lib/edge-binary-target.ts';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * MQTT state messages per second at QoS 1: the edge (discovery entities, templates, state
 * machine, write-behind to SQLite) vs a bare Aedes broker, same machine, same run, same load
 * from publisher threads. The edge's time includes flushing the last states to disk.
 * MQTT_INGEST_BASE=<checkout> adds that checkout's edge (recorder off) to the rounds;
 * MQTT_INGEST_BINS=<file>,… adds edge executables, each in its own process (recorder off).
 */

export interface Target {
  name: string;
  url: string;
  username?: string;
  password?: string;
  stop: () => Promise<void>;
  settle: () => Promise<void>;
  /** CPU used so far (µs) when the target runs in its own process (an edge executable) */
  cpu?: () => { main: number; process: number };
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

/**
 * An edge with ENTITIES discovered sensors; `extra` config, `name` and `discovery` (merged into
 * each sensor's discovery config; a key set to undefined is left out) let other scenarios vary it.
 */
export async function edgeTarget(
  log: (m: string) => void,
  extra: Partial<EdgeConfig> = {},
  name = 'edge (persisted states)',
  discovery: Record<string, unknown> = {},
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
          ...discovery,
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

/**
 * edgeTarget with the recorder writing on its thread from the start ('thread') or on the main
 * thread only ('inline'), through RECORDER_WRITER, which the recorder reads when createEdge builds
 * it (before edgeTarget's first await). The default writer starts the thread only once rows come
 * fast for three seconds in a row, which a benchmark's warm-up does not: a target that measures the
 * recorder's steady state names its writer.
 */
export function edgeTargetWithWriter(
  writer: 'thread' | 'inline',
  log: (m: string) => void,
  extra: Partial<EdgeConfig> = {},
  name?: string,
  discovery: Record<string, unknown> = {},
): Promise<Target> {
  const previous = process.env.RECORDER_WRITER;
  process.env.RECORDER_WRITER = writer;
  try {
    return edgeTarget(log, extra, name, discovery);
  } finally {
    if (previous === undefined) delete process.env.RECORDER_WRITER;
    else process.env.RECORDER_WRITER = previous;
  }
}

/**
 * One round: messages/s from "go" until the target committed, and the CPU it took per message
 * (µs): the main thread's (the edge or the bare broker: what limits ingest) and the whole
 * process's (every thread: publishers, broker, edge, the recorder's writer thread). On the shared
 * machine the wall clock also counts other processes' turns on the cores; CPU time does not.
 */
export interface Round {
  rate: number;
  mainUs: number;
  processUs: number;
}

/** the first value the next drive's publishers send: each drive's values are new */
let nextValue = 0;

export async function drive(target: Target, messages: number): Promise<Round> {
  const per = Math.ceil(messages / PUBLISHERS);
  // values (and so JSON attribute sets) new in every round, not those of the round before: an
  // entity's recorder would find those sets again instead of storing new ones
  const first = nextValue;
  nextValue += per * PUBLISHERS;
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
          offset: first + w * per,
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
  const main = process.threadCpuUsage();
  const all = process.cpuUsage();
  const own = target.cpu?.();
  for (const w of workers) w.postMessage('go');
  await Promise.all(done);
  await target.settle();
  const seconds = (performance.now() - started) / 1000;
  const mainUsed = process.threadCpuUsage(main);
  const allUsed = process.cpuUsage(all);
  const ownNow = target.cpu?.();
  await Promise.all(workers.map((w) => w.terminate()));
  const sent = per * PUBLISHERS;
  if (own && ownNow)
    return {
      rate: sent / seconds,
      mainUs: (ownNow.main - own.main) / sent,
      processUs: (ownNow.process - own.process) / sent,
    };
  return {
    rate: sent / seconds,
    mainUs: (mainUsed.user + mainUsed.system) / sent,
    processUs: (allUsed.user + allUsed.system) / sent,
  };
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Rounds rotating over the targets (each round drives every target once, the first moving on by
 * one each time), so that all see the same machine load; after a warm-up round each.
 */
export async function rotate(
  targets: Target[],
  messages: number,
  rounds: number,
  log: (m: string) => void,
): Promise<Round[][]> {
  for (const t of targets) await drive(t, Math.min(5000, messages)); // warm-up
  const out: Round[][] = targets.map(() => []);
  for (let i = 0; i < rounds; i++) {
    const round: Round[] = [];
    for (let j = 0; j < targets.length; j++) {
      const k = (i + j) % targets.length;
      round[k] = await drive(targets[k], messages);
      out[k].push(round[k]);
    }
    log(
      `round ${i + 1}: ` +
        targets
          .map((t, k) => `${t.name} ${Math.round(round[k].rate)} msg/s (main ${round[k].mainUs.toFixed(1)} µs/msg)`)
          .join(', '),
    );
  }
  return out;
}

/** Median message rate, and median CPU per message of the main thread and of the process. */
export function summarize(rounds: Round[]) {
  return {
    rate: median(rounds.map((r) => r.rate)),
    best: Math.max(...rounds.map((r) => r.rate)),
    mainUs: median(rounds.map((r) => r.mainUs)),
    processUs: median(rounds.map((r) => r.processUs)),
  };
}

const TARGET = 0.8;

export const scenario: BenchScenario = {
  name: 'mqtt-ingest',
  description: `QoS 1 state messages/s: edge (${ENTITIES} discovered sensors, persisted states; recorder off, then on) vs bare Aedes; ${PUBLISHERS} publisher threads, rounds rotating`,
  async run({ quick, log }: BenchOptions): Promise<BenchResult> {
    const messages = quick ? 20_000 : 100_000;
    const rounds = quick ? 3 : 5;
    const targets: Target[] = [];
    try {
      targets.push(await bareAedes());
      targets.push(await edgeTarget(log, { historyDays: 0 }, 'edge (persisted states, recorder off)'));
      targets.push(await edgeTargetWithWriter('thread', log, {}, 'edge (persisted states, recorder on)'));
      // before/after in one run: the edge of another checkout (a git worktree with its install)
      const base = process.env.MQTT_INGEST_BASE;
      if (base) {
        const other = (await import(path.resolve(base, 'tools/bench/scenarios/mqtt-ingest.ts'))) as {
          edgeTarget: typeof edgeTarget;
        };
        targets.push(await other.edgeTarget(log, { historyDays: 0 }, `edge of ${base} (recorder off)`));
      }
      // MQTT_INGEST_BINS=<file>,…: edge executables in their own processes, recorder off (their
      // CPU: the edge process alone, without the publishers)
      for (const bin of (process.env.MQTT_INGEST_BINS ?? '').split(',').filter(Boolean))
        targets.push(await edgeBinaryTarget(bin, ENTITIES, (i) => topicsFor(ENTITIES)[i], log, `executable ${bin}`));
      const results = await rotate(targets, messages, rounds, log);
      const [bare, off, on] = results.map(summarize);
      // per round, against the bare broker's rate in the same round
      const ratios = (k: number) => results[k].map((r, i) => r.rate / results[0][i].rate);
      const pct = (x: number) => Math.round(x * 1000) / 10;
      const row = (k: number, s: ReturnType<typeof summarize>) => [
        targets[k].name,
        messages,
        rounds,
        Math.round(s.rate),
        Math.round(s.best),
        pct(s.rate / bare.rate),
        k === 0 ? '' : `${pct(Math.min(...ratios(k)))}–${pct(Math.max(...ratios(k)))}`,
        s.mainUs.toFixed(1),
        s.processUs.toFixed(1),
      ];
      const ratio = off.rate / bare.rate;
      return {
        columns: [
          'target',
          'messages/round',
          'rounds',
          'median msg/s',
          'best msg/s',
          '% of bare',
          '% per round',
          'main thread µs/msg',
          'process µs/msg',
        ],
        rows: results.map((r, k) => row(k, summarize(r))),
        summary:
          `edge ingests ${pct(ratio)}% of bare Aedes at QoS 1 with persisted states (target ≥ ${TARGET * 100}%), ` +
          `${pct(on.rate / bare.rate)}% with the recorder on; by main-thread CPU per message (what limits ` +
          `the rate when the cores are free) ${pct(bare.mainUs / off.mainUs)}% / ${pct(bare.mainUs / on.mainUs)}%`,
        ok: ratio >= TARGET,
      };
    } finally {
      for (const t of targets) await t.stop();
    }
  },
};
