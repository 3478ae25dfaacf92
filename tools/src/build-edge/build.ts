/**
 * `pnpm build:edge`: the one-file edge executable (Node single executable application).
 *
 *   1. esbuild bundles the edge (edge/src/main.ts) into one CommonJS file, and the recorder's
 *      writer thread (edge/src/recorder/writer-worker.ts) into another;
 *   2. `node --experimental-sea-config` turns it into a SEA blob, with better-sqlite3's
 *      prebuilt addon for the target as an asset (loaded by edge/src/native/sqlite-binding.ts),
 *      the writer thread's bundle as the asset recorder-writer.cjs (started with `eval`),
 *      and the portal's build (web/dist) as assets portal/<path>;
 *   3. a copy of the Node 24 binary for the target (this machine's arch: the repo's own
 *      node_modules/node/bin/node; other targets: the npm package node-linux-<arch> of the
 *      same version, cached in .tmp/build-edge/) is stripped when a strip tool is there, and
 *      the blob is injected with postject.
 *
 * Output: dist/smarthome-edge-linux-x64 and dist/smarthome-edge-linux-arm64, each with its release
 * archive (archive.ts).
 * Options: --arch x64,arm64 (default both) · --entry <file> (default edge/src/main.ts) ·
 * --out <dir> (default dist) · --code-cache on|off (default on, for the target of this host's arch
 *   only: V8 writes the cache for its own CPU; measured by the edge-start bench) ·
 * --archive on|off (default on: <binary>.tar.xz and .tar.xz.sha256 beside each binary).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';
import { archiveBinary } from './archive.ts';
import { sqliteAddonPlugin, zodEnglishOnlyPlugin } from './plugins.ts';
import { PORTAL_DIST, SEA_ASSET_PREFIX } from '@smarthome/web/serve';
import { ensurePortalBuilt } from '@smarthome/web/serve/build';

export const ROOT = path.resolve(import.meta.dirname, '../../..');
/** The repo's Node 24 (the real binary: node_modules/.bin/node is a shell shim). */
export const NODE24 = path.join(ROOT, 'node_modules/node/bin/node');
const CACHE = path.join(ROOT, '.tmp/build-edge');
/** Must equal SQLITE_ADDON_ASSET and SQLITE_ADDON_HASH_ASSET in edge/src/native/sqlite-binding.ts. */
const SQLITE_ASSET = 'better_sqlite3.node';
const SQLITE_HASH_ASSET = 'better_sqlite3.node.sha256';
/** The recorder's writer thread, bundled on its own: the executable starts it from this asset (edge/src/recorder/writer.ts WRITER_ASSET). */
const RECORDER_WRITER_ENTRY = path.join(ROOT, 'edge/src/recorder/writer-worker.ts');
const RECORDER_WRITER_ASSET = 'recorder-writer.cjs';
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/**
 * Node flags baked into the executable. A semi-space of at most 4 MB (default 16 MB on 64-bit)
 * keeps a busy edge's young generation small; the collections once ready (startup-gc.ts) and
 * after a burst (burst-gc.ts) give it back when the edge goes quiet, so 1 MB (before) was no
 * smaller there (edge-start at 1,000 / 10,000 entities, same session: 1 s after ready and after a
 * change per entity the same within 1 MB), while its more frequent scavenges cost the ingest's
 * main thread ~0.7 µs a message (mqtt-ingest with both executables, 7.3 → 6.6 µs/msg).
 */
export const EXEC_ARGV = ['--max-semi-space-size=4'];

export type Arch = 'x64' | 'arm64';
export const ARCHES: readonly Arch[] = ['x64', 'arm64'];

export interface BuildOptions {
  entry?: string;
  outDir?: string;
  arches?: readonly Arch[];
  /** V8 code cache in the blob (default true); only possible when the target is this machine's arch. */
  codeCache?: boolean;
  log?: (line: string) => void;
}

export interface BuiltBinary {
  arch: Arch;
  file: string;
  bytes: number;
  stripped: boolean;
  codeCache: boolean;
}

export interface BuildResult {
  bundleBytes: number;
  binaries: BuiltBinary[];
  ms: number;
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const show = (file: string) => (file.startsWith(ROOT + path.sep) ? path.relative(ROOT, file) : file);

function run(cmd: string, args: string[], what: string): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw new Error(`${what}: ${r.error.message}`, { cause: r.error });
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
}

function which(cmd: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const file = path.join(dir || '.', cmd);
    try {
      if (statSync(file).isFile()) return file;
    } catch {
      /* not here */
    }
  }
  return null;
}

/** better-sqlite3's directory, as the edge package resolves it. */
function betterSqlite3Dir(): string {
  const req = createRequire(path.join(ROOT, 'edge/package.json'));
  return path.dirname(req.resolve('better-sqlite3/package.json'));
}

function nodeVersion(): string {
  return (JSON.parse(readFileSync(path.join(ROOT, 'node_modules/node/package.json'), 'utf8')) as { version: string })
    .version;
}

/** Step 1: one CommonJS file; the metafile says which modules went in (tests check what the edge carries). */
export async function bundle(entry: string, outfile: string, log: (l: string) => void): Promise<esbuild.Metafile> {
  const result = await esbuild
    .build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: 'node',
      target: 'node24',
      format: 'cjs',
      // ws' optional native helpers (it falls back to JS); .node addons never bundle
      external: ['bufferutil', 'utf-8-validate', '*.node'],
      // ESM code that reads import.meta gets the CommonJS equivalents (the executable's path)
      define: {
        'import.meta.url': '__sea_import_meta_url',
        'import.meta.dirname': '__dirname',
        'import.meta.filename': '__filename',
        // readable-stream (bl, so mqtt-packet and aedes) re-exports node:stream instead of evaluating its
        // own copy of Node's streams, its documented switch: edge-start RSS −0.4 MB at 1,000 entities
        'process.env.READABLE_STREAM': '"disable"',
      },
      banner: { js: 'var __sea_import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
      plugins: [sqliteAddonPlugin, zodEnglishOnlyPlugin],
      legalComments: 'none',
      minifySyntax: true,
      // no comments: the script is pure ASCII, so V8 holds it as a one-byte string (a comment's "—" made the
      // whole 2.9 MB script two-byte: 5.9 MB of heap)
      minifyWhitespace: true,
      // identifiers are not minified, so stack traces name functions from the source as they are.
      // No keepNames: its __name() redefines `name` on ~3,000 functions, which turns each into a
      // dictionary-mode object (edge-start: ~1 MB of heap, RSS −1.2 MB at 1,000 entities); what it
      // changes is `.name` of the few classes esbuild renames on a clash (Hono2, Node2, …)
      keepNames: false,
      sourcemap: false,
      metafile: true,
      logLevel: 'silent',
    })
    .catch((err: unknown) => {
      const failure = err as esbuild.BuildFailure;
      if (failure.errors?.some((e) => /top-level await/i.test(e.text))) {
        const where = failure.errors.map((e) => `${e.location?.file}:${e.location?.line}`).join(', ');
        throw new Error(`top-level await cannot be bundled to CommonJS (a SEA main script): ${where}`, { cause: err });
      }
      throw err;
    });
  for (const w of result.warnings) {
    // better-sqlite3's dynamic require of a compiled addon is never reached (the plugin hands it the addon)
    if (w.location?.file.includes('better-sqlite3') && /require/.test(w.text)) continue;
    log(`  esbuild warning: ${w.text} (${w.location?.file}:${w.location?.line})`);
  }
  return result.metafile;
}

/** The Node binary for the target: this repo's for this machine's arch, else node-linux-<arch> from npm. */
function baseNode(arch: Arch, version: string, log: (l: string) => void): string {
  if (arch === process.arch && process.platform === 'linux') return NODE24;
  const dir = path.join(CACHE, `node-linux-${arch}-${version}`);
  const bin = path.join(dir, 'node_modules', `node-linux-${arch}`, 'bin', 'node');
  if (!existsSync(bin)) {
    log(`  fetching node-linux-${arch}@${version} from the npm registry into ${path.relative(ROOT, dir)}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'package.json'), '{"private":true}\n');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    run(
      npm,
      [
        'install',
        '--force',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--no-package-lock',
        '--prefix',
        dir,
        `node-linux-${arch}@${version}`,
      ],
      `npm install node-linux-${arch}`,
    );
    if (!existsSync(bin)) throw new Error(`node-linux-${arch}@${version} has no bin/node`);
  }
  return bin;
}

function strip(file: string, arch: Arch): boolean {
  const candidates =
    arch === process.arch
      ? ['strip', 'llvm-strip']
      : arch === 'arm64'
        ? ['aarch64-linux-gnu-strip', 'llvm-strip']
        : ['x86_64-linux-gnu-strip', 'llvm-strip'];
  for (const tool of candidates) {
    if (!which(tool)) continue;
    const r = spawnSync(tool, [file], { stdio: 'ignore' });
    if (r.status === 0) return true;
  }
  return false;
}

/** A file holding the addon's SHA-256 (hex), for the SQLITE_HASH_ASSET asset. */
function addonHashFile(addon: string, work: string, arch: Arch): string {
  const file = path.join(work, `${SQLITE_HASH_ASSET}-${arch}`);
  writeFileSync(file, createHash('sha256').update(readFileSync(addon)).digest('hex'));
  return file;
}

/** Steps 2 and 3 for one target. */
function makeExecutable(
  arch: Arch,
  bundleFile: string,
  work: string,
  outDir: string,
  codeCache: boolean,
  version: string,
  /** name → file: the portal's files and the recorder's writer thread */
  assets: Record<string, string>,
  log: (l: string) => void,
): BuiltBinary {
  const addon = path.join(betterSqlite3Dir(), 'prebuilds', `linux-${arch}.node`);
  if (!existsSync(addon)) throw new Error(`better-sqlite3 has no prebuilt addon for linux-${arch} (${addon})`);
  const useCodeCache = codeCache && arch === process.arch;
  const blob = path.join(work, `sea-prep-${arch}.blob`);
  const config = {
    main: bundleFile,
    output: blob,
    disableExperimentalSEAWarning: true,
    useSnapshot: false,
    useCodeCache,
    execArgv: EXEC_ARGV,
    // the addon's SHA-256 beside it: the edge keeps a checked copy in its data dir (sqlite-binding.ts)
    assets: { [SQLITE_ASSET]: addon, [SQLITE_HASH_ASSET]: addonHashFile(addon, work, arch), ...assets },
  };
  const configFile = path.join(work, `sea-config-${arch}.json`);
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  run(NODE24, ['--experimental-sea-config', configFile], 'node --experimental-sea-config');

  const out = path.join(outDir, `smarthome-edge-linux-${arch}`);
  const partial = path.join(work, `smarthome-edge-linux-${arch}`);
  copyFileSync(baseNode(arch, version, log), partial);
  chmodSync(partial, 0o755);
  const stripped = strip(partial, arch);
  if (!stripped) log(`  note: no strip tool for ${arch}; the ${arch} binary stays unstripped`);
  const postject = path.join(ROOT, 'node_modules/postject/dist/cli.js');
  run(NODE24, [postject, partial, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', SEA_FUSE], `postject (${arch})`);
  chmodSync(partial, 0o755);
  // replace, never overwrite in place: a copy that is running or being copied stays intact
  try {
    renameSync(partial, out);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    rmSync(out, { force: true });
    copyFileSync(partial, out);
    chmodSync(out, 0o755);
  }
  return { arch, file: out, bytes: statSync(out).size, stripped, codeCache: useCodeCache };
}

/**
 * The portal's build (web/dist, built first when missing or stale) as SEA assets named
 * portal/<path>: the edge serves them from the executable (web/serve seaAssets()), same bytes as the cloud's.
 */
async function portalAssets(): Promise<Record<string, string>> {
  await ensurePortalBuilt();
  const assets: Record<string, string> = {};
  for (const rel of readdirSync(PORTAL_DIST, { recursive: true, encoding: 'utf8' })) {
    const file = path.join(PORTAL_DIST, rel);
    if (statSync(file).isFile()) assets[SEA_ASSET_PREFIX + rel.split(path.sep).join('/')] = file;
  }
  return assets;
}

export async function buildEdge(options: BuildOptions = {}): Promise<BuildResult> {
  const started = performance.now();
  const log = options.log ?? ((l: string) => process.stdout.write(l + '\n'));
  const entry = path.resolve(ROOT, options.entry ?? 'edge/src/main.ts');
  if (!existsSync(entry)) throw new Error(`entry ${entry} does not exist`);
  const outDir = path.resolve(ROOT, options.outDir ?? 'dist');
  mkdirSync(outDir, { recursive: true });
  mkdirSync(CACHE, { recursive: true });
  const version = nodeVersion();

  // a private work dir per build, so concurrent builds (the binary test, pnpm build:edge) never collide
  const work = mkdtempSync(path.join(CACHE, 'work-'));
  try {
    const bundleFile = path.join(work, 'smarthome-edge.cjs');
    let t = performance.now();
    await bundle(entry, bundleFile, log);
    const bundleBytes = statSync(bundleFile).size;
    log(`bundle   ${show(entry)}  ${mb(bundleBytes)}  ${Math.round(performance.now() - t)} ms`);

    t = performance.now();
    const writerFile = path.join(work, RECORDER_WRITER_ASSET);
    await bundle(RECORDER_WRITER_ENTRY, writerFile, log);
    log(
      `bundle   ${show(RECORDER_WRITER_ENTRY)}  ${mb(statSync(writerFile).size)}  ${Math.round(performance.now() - t)} ms`,
    );

    t = performance.now();
    const portal = await portalAssets();
    log(`portal   ${show(PORTAL_DIST)}  ${Object.keys(portal).length} files  ${Math.round(performance.now() - t)} ms`);
    const assets = { ...portal, [RECORDER_WRITER_ASSET]: writerFile };

    const binaries: BuiltBinary[] = [];
    for (const arch of options.arches ?? ARCHES) {
      t = performance.now();
      const b = makeExecutable(arch, bundleFile, work, outDir, options.codeCache ?? true, version, assets, log);
      binaries.push(b);
      log(
        `${arch.padEnd(8)} ${show(b.file)}  ${mb(b.bytes)}  (Node ${version}${b.stripped ? ', stripped' : ''}${b.codeCache ? ', code cache' : ''})  ${((performance.now() - t) / 1000).toFixed(1)} s`,
      );
    }
    const ms = performance.now() - started;
    log(`done in ${(ms / 1000).toFixed(1)} s`);
    return { bundleBytes, binaries, ms };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      arch: { type: 'string' },
      entry: { type: 'string' },
      out: { type: 'string' },
      'code-cache': { type: 'string' },
      archive: { type: 'string' },
    },
  });
  const arches = values.arch ? values.arch.split(',').map((a) => a.trim()) : ARCHES;
  try {
    for (const a of arches) if (!ARCHES.includes(a as Arch)) throw new Error(`unknown arch ${a} (x64, arm64)`);
    if (process.platform !== 'linux') throw new Error('the edge executable is built on Linux');
    if (!existsSync(NODE24)) throw new Error(`${NODE24} is missing: run pnpm install first`);
    const built = await buildEdge({
      arches: arches as Arch[],
      entry: values.entry,
      outDir: values.out,
      codeCache: values['code-cache'] !== 'off',
    });
    if (values.archive !== 'off') {
      for (const b of built.binaries) {
        const t = performance.now();
        const a = await archiveBinary(b.file);
        process.stdout.write(
          `archive  ${show(a.file)}  ${mb(a.bytes)}  sha256 ${a.sha256.slice(0, 16)}…  ${((performance.now() - t) / 1000).toFixed(1)} s\n`,
        );
      }
    }
  } catch (err) {
    process.stderr.write(`build:edge failed: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
