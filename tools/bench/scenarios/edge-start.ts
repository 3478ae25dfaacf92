import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import mqtt from 'mqtt';
import { REPO_ROOT } from '@smarthome/cloud/testing/process';
import { buildEdge } from '../../src/build-edge/build.ts';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * The one-file edge executable (x64) starting on a data dir holding 1,000 MQTT-discovered
 * entities with states: time from spawn to the `ready` line and RSS 1 s after ready, median of
 * the runs. Variants are built and measured in the same run, alternating, so a loaded machine
 * weighs on all of them alike: the binary without code cache is the baseline.
 * EDGE_START_BIN=<file> adds a binary built elsewhere (e.g. at another commit) as a variant;
 * EDGE_START_DATA=<dir> keeps the seeded data dir (or reuses it when it exists).
 */
const TARGET_READY_MS = 300;
const TARGET_RSS_MB = 80;
const ENTITIES = 1000;

interface Sample {
  readyMs: number;
  rssMb: number;
  anonMb: number;
}

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

interface Running {
  ports: { http: number; mqtt: number };
  readyMs: number;
  pid: number;
  stop(): Promise<void>;
}

async function startEdge(bin: string, data: string, env: Record<string, string> = {}): Promise<Running> {
  const started = performance.now();
  // an almost empty environment, like a systemd unit: no NODE_OPTIONS from the bench's own shell
  const child = spawn(bin, ['--port', '0', '--mqtt-port', '0', '--data-dir', data], {
    env: { TMPDIR: os.tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const ready = await new Promise<{ http: number; mqtt: number; ms: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bin}: no ready line within 60 s`)), 60_000);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('ready ')) return;
      clearTimeout(timer);
      resolve({ ...(JSON.parse(line.slice(6)) as { http: number; mqtt: number }), ms: performance.now() - started });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${bin} exited ${code} before ready`));
    });
  });
  return {
    ports: { http: ready.http, mqtt: ready.mqtt },
    readyMs: ready.ms,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A data dir with ENTITIES discovered sensors and a state each, written by the edge itself. */
async function seed(bin: string, data: string, log: (m: string) => void): Promise<void> {
  const edge = await startEdge(bin, data);
  try {
    const created = spawnSync(bin, ['token', 'create', '--name', 'bench', '--data-dir', data], { encoding: 'utf8' });
    if (created.status !== 0) throw new Error(`token create failed: ${created.stderr}`);
    const auth = { authorization: `Bearer ${created.stdout.trim()}` };
    const base = `http://127.0.0.1:${edge.ports.http}`;
    const res = await fetch(`${base}/v1/mqtt/credentials`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{}',
    });
    const creds = (await res.json()) as { username: string; password: string };
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${edge.ports.mqtt}`, { ...creds, reconnectPeriod: 0 });
    try {
      for (let i = 0; i < ENTITIES; i++) {
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
      for (let i = 0; i < ENTITIES; i++) await client.publishAsync(`bench_${i}/temperature`, String(20 + (i % 10)));
    } finally {
      await client.endAsync();
    }
    const until = Date.now() + 30_000;
    for (;;) {
      const states = (await (await fetch(`${base}/v1/entities/states`, { headers: auth })).json()) as {
        state: string;
      }[];
      const withState = states.filter((s) => s.state !== 'unknown' && s.state !== 'unavailable').length;
      if (withState >= ENTITIES) break;
      if (Date.now() > until) throw new Error(`seeding: only ${withState} of ${ENTITIES} states after 30 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
    log(`seeded ${ENTITIES} entities`);
  } finally {
    await edge.stop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export const scenario: BenchScenario = {
  name: 'edge-start',
  description: `edge executable start with ${ENTITIES} discovered entities: ready time and RSS, code cache and V8 flags vs the plain binary`,
  async run({ quick, log }: BenchOptions): Promise<BenchResult> {
    if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error('edge-start runs on linux-x64');
    const runs = quick ? 3 : 9;
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
        { name: 'binary + code cache', bin: cached.file, samples: [] },
        // the recorder's writer thread is a second V8 isolate: what it costs at start, same binary
        {
          name: 'code cache, recorder writes inline',
          bin: cached.file,
          env: { RECORDER_WRITER: 'inline' },
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
      const data = process.env.EDGE_START_DATA ?? path.join(work, 'data');
      if (!fs.existsSync(data)) await seed(plain.file, data, log);
      // every binary read back from disk once, by a start that is not counted (see dropPageCache)
      for (const v of variants) {
        dropPageCache(v.bin);
        await (await startEdge(v.bin, data, v.env)).stop();
      }
      for (let i = 0; i < runs; i++) {
        for (const v of variants) {
          const edge = await startEdge(v.bin, data, v.env);
          await new Promise((r) => setTimeout(r, 1000));
          const mem = rssMb(edge.pid);
          v.samples.push({ readyMs: edge.readyMs, rssMb: mem.rss, anonMb: mem.anon });
          await edge.stop();
          log(
            `${v.name}: ${edge.readyMs.toFixed(0)} ms, ${mem.rss.toFixed(0)} MB (anonymous ${mem.anon.toFixed(0)} MB)`,
          );
        }
      }
      const results = variants.map((v) => ({
        ...v,
        readyMs: median(v.samples.map((s) => s.readyMs)),
        rss: median(v.samples.map((s) => s.rssMb)),
        anon: median(v.samples.map((s) => s.anonMb)),
      }));
      const best = results.reduce((a, b) => (b.readyMs < a.readyMs ? b : a));
      return {
        columns: ['variant', 'size (MB)', 'ready (ms)', 'RSS 1 s after ready (MB)', 'of it anonymous (MB)', 'target'],
        rows: results.map((r, i) => [
          r.name,
          (fs.statSync(r.bin).size / 1024 / 1024).toFixed(1),
          r.readyMs.toFixed(0),
          r.rss.toFixed(0),
          r.anon.toFixed(0),
          i === 1 ? `≤ ${TARGET_READY_MS} ms, ≤ ${TARGET_RSS_MB} MB` : '',
        ]),
        summary: `${ENTITIES} entities, median of ${runs}: ${results.map((r) => `${r.name} ${r.readyMs.toFixed(0)} ms / ${r.rss.toFixed(0)} MB`).join('; ')}`,
        ok: best.readyMs <= TARGET_READY_MS && best.rss <= TARGET_RSS_MB,
      };
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
};
