import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { NODE, REPO_ROOT } from '@smarthome/cloud/testing/process';
import { buildCloud } from '../../src/build-cloud/build.ts';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * Cloud process start on an empty SQLite data dir: time from spawn to the `ready` line, and
 * RSS 1 s after ready, for the TypeScript sources, the bundle (`pnpm build:cloud`) and a bare
 * Hono hello-world on @hono/node-server (the same-run baseline). Median of the runs.
 */
const TARGET_READY_MS = 500;
const TARGET_RSS_MB = 120;

const HELLO = `import { Hono } from 'hono';
import { serve } from '@hono/node-server';
const app = new Hono();
app.get('/', (c) => c.text('hello'));
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => process.stdout.write('ready ' + JSON.stringify({ http: info.port }) + '\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

interface Sample {
  readyMs: number;
  rssMb: number;
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

async function startOnce(script: string, args: string[]): Promise<Sample> {
  const started = performance.now();
  const child = spawn(NODE, [script, ...args], { stdio: ['ignore', 'pipe', 'ignore'], cwd: REPO_ROOT });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const readyMs = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script}: no ready line within 120 s`)), 120_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('ready ')) {
        clearTimeout(timer);
        resolve(performance.now() - started);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited ${code} before ready`));
    });
  });
  await new Promise((r) => setTimeout(r, 1000));
  const rss = rssMb(child.pid!);
  child.kill('SIGTERM');
  await exited;
  return { readyMs, rssMb: rss };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(
  name: string,
  runs: number,
  start: () => Promise<Sample>,
  log: (m: string) => void,
): Promise<Sample> {
  const samples: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    samples.push(await start());
    log(`${name}: ${samples.at(-1)!.readyMs.toFixed(0)} ms, ${samples.at(-1)!.rssMb.toFixed(0)} MB`);
  }
  return { readyMs: median(samples.map((s) => s.readyMs)), rssMb: median(samples.map((s) => s.rssMb)) };
}

export const scenario: BenchScenario = {
  name: 'cloud-start',
  description:
    'cloud process start (SQLite, empty data dir): ready time and RSS, sources vs bundle vs Hono hello-world',
  async run({ quick, log }: BenchOptions): Promise<BenchResult> {
    const runs = quick ? 1 : 5;
    const work = fs.mkdtempSync(path.join(REPO_ROOT, 'cloud', '.bundle-test-'));
    try {
      const bundle = (await buildCloud(path.join(work, 'smarthome-cloud.mjs'))).file;
      const hello = path.join(work, 'hello.mjs');
      fs.writeFileSync(hello, HELLO);
      const withData = (script: string) => async () => {
        const data = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-start-'));
        try {
          return await startOnce(script, ['--port', '0', '--data-dir', data]);
        } finally {
          fs.rmSync(data, { recursive: true, force: true });
        }
      };
      // hello.mjs lives in cloud/, which resolves hono and @hono/node-server like the cloud does
      const base = await measure('hello-world', runs, () => startOnce(hello, []), log);
      const source = await measure('sources', runs, withData(path.join(REPO_ROOT, 'cloud/src/main.ts')), log);
      const bundled = await measure('bundle', runs, withData(bundle), log);
      const ok = bundled.readyMs <= TARGET_READY_MS && bundled.rssMb <= TARGET_RSS_MB;
      const row = (what: string, s: Sample, target: string) => [what, s.readyMs.toFixed(0), s.rssMb.toFixed(0), target];
      return {
        columns: ['process', 'ready (ms)', 'RSS 1 s after ready (MB)', 'target'],
        rows: [
          row('Hono hello-world (baseline)', base, ''),
          row('cloud from TypeScript sources', source, ''),
          row('cloud bundle (pnpm build:cloud)', bundled, `≤ ${TARGET_READY_MS} ms, ≤ ${TARGET_RSS_MB} MB`),
        ],
        summary: `bundle: ${bundled.readyMs.toFixed(0)} ms / ${bundled.rssMb.toFixed(0)} MB (${(bundled.readyMs / base.readyMs).toFixed(1)}× and ${(bundled.rssMb / base.rssMb).toFixed(1)}× the hello-world); sources: ${source.readyMs.toFixed(0)} ms / ${source.rssMb.toFixed(0)} MB`,
        ok,
      };
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
};
