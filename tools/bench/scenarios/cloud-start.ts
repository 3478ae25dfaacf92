import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { NODE, REPO_ROOT } from '@smarthome/cloud/testing/process';
import { createTestSchema } from '@smarthome/cloud/testing/database';
import { buildCloud } from '../../src/build-cloud/build.ts';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * Cloud process start on an empty database: time from spawn to the `ready` line, RSS 1 s after
 * ready, and the boot's peak RSS (VmHWM read at the same moment: the most the process held from
 * spawn until then, which is what a container's memory limit meets), for the TypeScript sources,
 * the bundle (`pnpm build:cloud`) and a bare Hono hello-world on @hono/node-server (the same-run
 * baseline). Median of the runs. SQLite (a fresh data dir per start); with DATABASE_URL=postgres://…
 * the bundle also on PostgreSQL (a fresh schema per start). MB here are 2^20 bytes (/proc's kB / 1024).
 *
 * Every process runs on a private copy of the repo's Node binary whose pages were dropped from the
 * page cache and read back by an uncounted start (as after a reboot; edge-start does the same):
 * most of the RSS is Node's own mapped file, and a binary just written to disk (pnpm install
 * writes it) is mapped in large page-cache folios, 16 MB more of it here (cloud bundle 128–131 MB
 * on the installed binary vs 112–116 MB on a read-back copy, same run). The anonymous part
 * (RssAnon) does not depend on this.
 *
 * `pnpm cloud` runs the bundle with Node's compile cache (cloud/launch.mjs: V8's code for the
 * bundle kept on disk, written at exit); the bench gives the bundle the same with
 * NODE_COMPILE_CACHE, a cache written by one uncounted start, and also runs it without (before).
 */
const TARGET_READY_MS = 500;
const TARGET_RSS_MB = 120;
const TARGET_PEAK_MB = 150;

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
  anonMb: number;
  peakMb: number;
}

function memMb(pid: number): { rss: number; anon: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), peak: kb('VmHWM') };
}

/** Drops the file's pages from the page cache (GNU dd), so the next start reads them back from disk. */
function dropPageCache(file: string): void {
  const r = spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
  if (r.status !== 0) throw new Error(`dd iflag=nocache ${file} failed: ${r.stderr}`);
}

// the SQLite rows must not pick up a DATABASE_URL from the bench's own shell (the cloud reads it)
const { DATABASE_URL: postgresUrl, ...sqliteEnv } = process.env;

async function startOnce(
  node: string,
  script: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Sample> {
  const started = performance.now();
  const child = spawn(node, [script, ...args], {
    stdio: ['ignore', 'pipe', 'ignore'],
    cwd: REPO_ROOT,
    env: { ...sqliteEnv, ...env },
  });
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
  const mem = memMb(child.pid!);
  child.kill('SIGTERM');
  await exited;
  return { readyMs, rssMb: mem.rss, anonMb: mem.anon, peakMb: mem.peak };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Medians of `runs` starts of each variant, the variants taking turns (a load change weighs on all alike). */
async function alternate(
  variants: { name: string; start: () => Promise<Sample> }[],
  runs: number,
  log: (m: string) => void,
): Promise<Sample[]> {
  const samples: Sample[][] = variants.map(() => []);
  for (let i = 0; i < runs; i++)
    for (const [k, v] of variants.entries()) {
      const s = await v.start();
      samples[k].push(s);
      log(
        `${v.name}: ${s.readyMs.toFixed(0)} ms, ${s.rssMb.toFixed(0)} MB (anonymous ${s.anonMb.toFixed(0)}), peak ${s.peakMb.toFixed(0)} MB`,
      );
    }
  return samples.map(summarize);
}

async function measure(
  name: string,
  runs: number,
  start: () => Promise<Sample>,
  log: (m: string) => void,
): Promise<Sample> {
  return (await alternate([{ name, start }], runs, log))[0];
}

function summarize(samples: Sample[]): Sample {
  return {
    readyMs: median(samples.map((s) => s.readyMs)),
    rssMb: median(samples.map((s) => s.rssMb)),
    anonMb: median(samples.map((s) => s.anonMb)),
    peakMb: median(samples.map((s) => s.peakMb)),
  };
}

const meets = (s: Sample) => s.readyMs <= TARGET_READY_MS && s.rssMb <= TARGET_RSS_MB && s.peakMb <= TARGET_PEAK_MB;

export const scenario: BenchScenario = {
  name: 'cloud-start',
  description:
    'cloud process start (empty database): ready time, RSS and boot peak RSS, sources vs bundle (SQLite, PostgreSQL) vs Hono hello-world',
  async run({ quick, log }: BenchOptions): Promise<BenchResult> {
    const runs = quick ? 1 : 5;
    const work = fs.mkdtempSync(path.join(REPO_ROOT, 'cloud', '.bundle-test-'));
    try {
      const bundle = (await buildCloud(path.join(work, 'smarthome-cloud.mjs'))).file;
      const hello = path.join(work, 'hello.mjs');
      fs.writeFileSync(hello, HELLO);
      const node = path.join(work, 'node');
      fs.copyFileSync(NODE, node);
      fs.chmodSync(node, 0o755);
      dropPageCache(node);
      await startOnce(node, hello, []); // uncounted: reads the binary back from disk
      const compileCache = { NODE_COMPILE_CACHE: path.join(work, 'compile-cache') };
      const withData =
        (script: string, env: Record<string, string> = {}) =>
        async () => {
          const data = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-start-'));
          try {
            return await startOnce(node, script, ['--port', '0', '--data-dir', data], env);
          } finally {
            fs.rmSync(data, { recursive: true, force: true });
          }
        };
      const withPostgres = (script: string, url: string) => async () => {
        const data = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-start-'));
        const schema = await createTestSchema(url);
        try {
          return await startOnce(
            node,
            script,
            ['--port', '0', '--data-dir', data, '--database-url', schema.url],
            compileCache,
          );
        } finally {
          await schema.drop();
          fs.rmSync(data, { recursive: true, force: true });
        }
      };
      // hello.mjs lives in cloud/, which resolves hono and @hono/node-server like the cloud does
      const base = await measure('hello-world', runs, () => startOnce(node, hello, []), log);
      const source = await measure('sources', runs, withData(path.join(REPO_ROOT, 'cloud/src/main.ts')), log);
      await withData(bundle, compileCache)(); // uncounted: writes the compile cache
      const [plain, bundled] = await alternate(
        [
          { name: 'bundle, no compile cache', start: withData(bundle) },
          { name: 'bundle, compile cache', start: withData(bundle, compileCache) },
        ],
        runs,
        log,
      );
      const onPostgres = postgresUrl
        ? await measure('bundle, PostgreSQL', runs, withPostgres(bundle, postgresUrl), log)
        : null;
      const target = `≤ ${TARGET_READY_MS} ms, ≤ ${TARGET_RSS_MB} MB, peak ≤ ${TARGET_PEAK_MB} MB`;
      const row = (what: string, s: Sample, t: string) => [
        what,
        s.readyMs.toFixed(0),
        s.rssMb.toFixed(0),
        s.anonMb.toFixed(0),
        s.peakMb.toFixed(0),
        t,
      ];
      const rows = [
        row('Hono hello-world (baseline)', base, ''),
        row('cloud from TypeScript sources, SQLite', source, ''),
        row('cloud bundle, no compile cache (before), SQLite', plain, ''),
        row('cloud bundle as pnpm cloud runs it (compile cache), SQLite', bundled, target),
        onPostgres
          ? row('cloud bundle, PostgreSQL', onPostgres, target)
          : ['cloud bundle, PostgreSQL', 'not measured: set DATABASE_URL=postgres://…', '', '', '', target],
      ];
      const show = (s: Sample) =>
        `${s.readyMs.toFixed(0)} ms / ${s.rssMb.toFixed(0)} MB / peak ${s.peakMb.toFixed(0)} MB`;
      return {
        columns: [
          'process',
          'ready (ms)',
          'RSS 1 s after ready (MB)',
          'of it anonymous (MB)',
          'boot peak RSS (MB)',
          'target',
        ],
        rows,
        summary:
          `bundle, SQLite: ${show(bundled)} (${(bundled.readyMs / base.readyMs).toFixed(1)}× and ${(bundled.rssMb / base.rssMb).toFixed(1)}× the hello-world)` +
          (onPostgres ? `; bundle, PostgreSQL: ${show(onPostgres)}` : '; PostgreSQL not measured') +
          `; without the compile cache: ${show(plain)}; sources: ${show(source)}; targets (#19): ${target}`,
        ok: meets(bundled) && (onPostgres ? meets(onPostgres) : true),
      };
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
};
