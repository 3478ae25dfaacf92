import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { REPO_ROOT } from '@smarthome/cloud/testing/process';
import { buildEdge } from '../../src/build-edge/build.ts';
import { benchAccess, spawnEdge, type EdgeProcess } from '../lib/edge-process.ts';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * The one-file edge executable (x64) starting on a data dir holding 1,000 MQTT-discovered
 * entities with states: time from spawn to the `ready` line and RSS 1 s after ready, median of
 * the runs; then one state change per entity over MQTT (QoS 1) and RSS 2 s after the last:
 * what a home sees once its sensors report, where the idle number is a best case. Variants are
 * built and measured in the same run, alternating, so a loaded machine weighs on all of them
 * alike: the binary without code cache is the baseline. The default binary is measured again
 * on 10,000 entities (fewer runs: seeding and each burst take a while).
 * EDGE_START_BIN=<file> adds a binary built elsewhere (e.g. at another commit) as a variant;
 * EDGE_START_DATA=<dir> keeps the seeded data dirs (<dir>/1000, <dir>/10000) or reuses them.
 */
const TARGET_READY_MS = 300;
const TARGET_RSS_MB = 80;
const TARGET_RSS_10K_MB = 150;
const ENTITIES = 1000;
const MANY = 10_000;

interface Sample {
  readyMs: number;
  rssMb: number;
  anonMb: number;
  /** RSS 2 s after one state change per entity */
  burstMb: number;
}

/** MQTT credentials the seeding created, kept beside the data (the user is in the edge's database). */
const CREDS_FILE = 'bench-mqtt.json';
/** Allocations of 1 MB and more always mmap'd, so freed ones go back to the kernel. */
const GLIBC_TUNABLES = 'glibc.malloc.mmap_threshold=1048576';
let bursts = 0;

interface Variant {
  name: string;
  bin: string;
  env?: Record<string, string>;
  samples: Sample[];
}

function rssMb(pid: number): { rss: number; anon: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon') };
}

/**
 * Drops the file's pages from the page cache (GNU dd, `iflag=nocache count=0`), so that it is read
 * back from disk by the starts that follow, as after a reboot. Most of the RSS of an executable
 * is its own mapped file (Node's code and data, ~50 MB), and how much of it a start maps depends on
 * how the file came into the page cache: a binary just written by the build mapped up to 16 MB
 * more than the same bytes read from disk (large page-cache folios), which made variants built in
 * the same run incomparable.
 */
function dropPageCache(file: string): void {
  const r = spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
  if (r.status !== 0) throw new Error(`dd iflag=nocache ${file} failed: ${r.stderr}`);
}

/** A data dir with `entities` discovered sensors and a state each, written by the edge itself. */
async function seed(bin: string, data: string, entities: number, log: (m: string) => void): Promise<void> {
  const edge = await spawnEdge(bin, data);
  try {
    const { base, auth, creds } = await benchAccess(bin, data, edge);
    fs.writeFileSync(path.join(data, CREDS_FILE), JSON.stringify(creds));
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${edge.ports.mqtt}`, { ...creds, reconnectPeriod: 0 });
    try {
      for (let i = 0; i < entities; i++) {
        const id = `bench_${i}`;
        await client.publishAsync(
          `homeassistant/sensor/${id}/temperature/config`,
          JSON.stringify({
            name: 'Temperature',
            unique_id: `${id}_temperature`,
            state_topic: `${id}/temperature`,
            device_class: 'temperature',
            unit_of_measurement: '°C',
            device: { identifiers: [id], name: `Probe ${i}` },
          }),
          { qos: 1, retain: true },
        );
      }
      for (let i = 0; i < entities; i++) await client.publishAsync(`bench_${i}/temperature`, String(20 + (i % 10)));
    } finally {
      await client.endAsync();
    }
    const until = Date.now() + Math.max(30_000, entities * 20);
    for (;;) {
      const states = (await (await fetch(`${base}/v1/entities/states`, { headers: auth })).json()) as {
        state: string;
      }[];
      const withState = states.filter((s) => s.state !== 'unknown' && s.state !== 'unavailable').length;
      if (withState >= entities) break;
      if (Date.now() > until)
        throw new Error(`seeding: only ${withState} of ${entities} states after ${Math.max(30, entities / 50)} s`);
      await new Promise((r) => setTimeout(r, 200));
    }
    log(`seeded ${entities} entities`);
  } finally {
    await edge.stop();
  }
}

/**
 * One state change per seeded entity, QoS 1, from four MQTT clients at once (a home has a few:
 * zigbee2mqtt, a couple of devices), then 2 s for the edge to write them: its RSS then. Each
 * connection's password check is a scrypt of 16 MB in one of libuv's four threads (see the
 * GLIBC_TUNABLES variant).
 */
async function burst(edge: EdgeProcess, data: string, entities: number): Promise<number> {
  // values no earlier burst sent: every message is a state change
  const round = ++bursts;
  const creds = JSON.parse(fs.readFileSync(path.join(data, CREDS_FILE), 'utf8')) as {
    username: string;
    password: string;
  };
  const clients = await Promise.all(
    [0, 1, 2, 3].map(() => mqtt.connectAsync(`mqtt://127.0.0.1:${edge.ports.mqtt}`, { ...creds, reconnectPeriod: 0 })),
  );
  try {
    await Promise.all(
      clients.map(async (client, c) => {
        for (let i = c; i < entities; i += clients.length)
          await client.publishAsync(`bench_${i}/temperature`, `${round}.${i % 10}`, { qos: 1 });
      }),
    );
  } finally {
    await Promise.all(clients.map((c) => c.endAsync()));
  }
  await new Promise((r) => setTimeout(r, 2000));
  return rssMb(edge.pid).rss;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Measured extends Variant {
  readyMs: number;
  rss: number;
  anon: number;
  burst: number;
}

/** Each variant started `runs` times on `data`, alternating: the medians. */
async function measure(
  variants: Variant[],
  data: string,
  entities: number,
  runs: number,
  log: (m: string) => void,
): Promise<Measured[]> {
  for (let i = 0; i < runs; i++) {
    for (const v of variants) {
      const edge = await spawnEdge(v.bin, data, { env: v.env });
      try {
        await new Promise((r) => setTimeout(r, 1000));
        const mem = rssMb(edge.pid);
        const burstMb = await burst(edge, data, entities);
        v.samples.push({ readyMs: edge.readyMs, rssMb: mem.rss, anonMb: mem.anon, burstMb });
        log(
          `${entities} entities, ${v.name}: ${edge.readyMs.toFixed(0)} ms, ${mem.rss.toFixed(0)} MB (anonymous ${mem.anon.toFixed(0)} MB), after a change per entity ${burstMb.toFixed(0)} MB`,
        );
      } finally {
        await edge.stop();
      }
    }
  }
  return variants.map((v) => ({
    ...v,
    readyMs: median(v.samples.map((s) => s.readyMs)),
    rss: median(v.samples.map((s) => s.rssMb)),
    anon: median(v.samples.map((s) => s.anonMb)),
    burst: median(v.samples.map((s) => s.burstMb)),
  }));
}

export const scenario: BenchScenario = {
  name: 'edge-start',
  description: `edge executable start with ${ENTITIES} and ${MANY} discovered entities: ready time, RSS idle and after a change per entity; code cache, the recorder's writer thread, vs the plain binary`,
  async run({ quick, log }: BenchOptions): Promise<BenchResult> {
    if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error('edge-start runs on linux-x64');
    const runs = quick ? 3 : 9;
    const runsMany = quick ? 1 : 3;
    // .tmp/ is git-ignored, so a fresh clone does not have it
    fs.mkdirSync(path.join(REPO_ROOT, '.tmp'), { recursive: true });
    const work = fs.mkdtempSync(path.join(REPO_ROOT, '.tmp', 'edge-start-'));
    try {
      const silent = () => {};
      const plain = (
        await buildEdge({ arches: ['x64'], outDir: path.join(work, 'plain'), codeCache: false, log: silent })
      ).binaries[0];
      const cached = (
        await buildEdge({ arches: ['x64'], outDir: path.join(work, 'cache'), codeCache: true, log: silent })
      ).binaries[0];
      const variants: Variant[] = [
        { name: 'binary (baseline)', bin: plain.file, samples: [] },
        { name: 'binary + code cache (default)', bin: cached.file, samples: [] },
        // the recorder's writer thread is a second Node environment: what it costs when started
        // with the edge, as before it waited for the rows to come fast (AdaptiveWriter)
        {
          name: 'default, writer thread from the start',
          bin: cached.file,
          env: { RECORDER_WRITER: 'thread' },
          samples: [],
        },
        // glibc keeps each thread's 16 MB scrypt buffer once its malloc threshold rose past it (the
        // README's systemd unit sets this): what that costs, same binary
        {
          name: 'default, GLIBC_TUNABLES mmap_threshold',
          bin: cached.file,
          env: { GLIBC_TUNABLES: GLIBC_TUNABLES },
          samples: [],
        },
      ];
      // EDGE_START_NODE_OPTIONS="--max-semi-space-size=1": the code-cache binary again with these V8/Node flags
      // (the executables already carry build.ts EXEC_ARGV)
      const flags = process.env.EDGE_START_NODE_OPTIONS;
      if (flags)
        variants.push({ name: `code cache + ${flags}`, bin: cached.file, env: { NODE_OPTIONS: flags }, samples: [] });
      if (process.env.EDGE_START_BIN)
        variants.push({ name: 'EDGE_START_BIN', bin: process.env.EDGE_START_BIN, samples: [] });
      // EDGE_START_DATA=<dir>: seeded once and kept, for profiling the same start by hand
      const dataRoot = process.env.EDGE_START_DATA ?? path.join(work, 'data');
      const data = path.join(dataRoot, String(ENTITIES));
      const dataMany = path.join(dataRoot, String(MANY));
      if (!fs.existsSync(path.join(data, CREDS_FILE))) await seed(plain.file, data, ENTITIES, log);
      if (!fs.existsSync(path.join(dataMany, CREDS_FILE))) await seed(plain.file, dataMany, MANY, log);
      // every binary read back from disk once, by a start that is not counted (see dropPageCache)
      for (const v of variants) {
        dropPageCache(v.bin);
        await (await spawnEdge(v.bin, data, { env: v.env })).stop();
      }
      const load = () => os.loadavg()[0].toFixed(1);
      const loadBefore = load();
      const results = await measure(variants, data, ENTITIES, runs, log);
      const many = await measure(
        [
          { name: 'binary + code cache (default)', bin: cached.file, samples: [] },
          {
            name: 'default, GLIBC_TUNABLES mmap_threshold',
            bin: cached.file,
            env: { GLIBC_TUNABLES: GLIBC_TUNABLES },
            samples: [],
          },
        ],
        dataMany,
        MANY,
        runsMany,
        log,
      );
      const best = results.reduce((a, b) => (b.readyMs < a.readyMs ? b : a));
      const row = (r: Measured, entities: number, target: string) => [
        r.name,
        entities,
        (fs.statSync(r.bin).size / 1024 / 1024).toFixed(1),
        r.readyMs.toFixed(0),
        r.rss.toFixed(0),
        r.anon.toFixed(0),
        r.burst.toFixed(0),
        target,
      ];
      return {
        columns: [
          'variant',
          'entities',
          'size (MB)',
          'ready (ms)',
          'RSS 1 s after ready (MB)',
          'of it anonymous (MB)',
          'RSS after a change per entity (MB)',
          'target',
        ],
        rows: [
          ...results.map((r, i) => row(r, ENTITIES, i === 1 ? `≤ ${TARGET_READY_MS} ms, ≤ ${TARGET_RSS_MB} MB` : '')),
          ...many.map((r, i) => row(r, MANY, i === 0 ? `≤ ${TARGET_RSS_10K_MB} MB` : '')),
        ],
        summary:
          `load ${loadBefore} → ${load()}; ${ENTITIES} entities, median of ${runs}: ` +
          results
            .map(
              (r) =>
                `${r.name} ${r.readyMs.toFixed(0)} ms / ${r.rss.toFixed(0)} MB (${r.burst.toFixed(0)} MB after a burst)`,
            )
            .join('; ') +
          `; ${MANY} entities, median of ${runsMany}: ` +
          many
            .map(
              (r) =>
                `${r.name} ${r.readyMs.toFixed(0)} ms / ${r.rss.toFixed(0)} MB (${r.burst.toFixed(0)} MB after a burst)`,
            )
            .join('; '),
        ok: best.readyMs <= TARGET_READY_MS && results[1].rss <= TARGET_RSS_MB && many[0].rss <= TARGET_RSS_10K_MB,
      };
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
};
