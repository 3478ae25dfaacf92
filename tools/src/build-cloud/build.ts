/**
 * `pnpm build:cloud`: the cloud as one ES module, run by Node like the edge executable.
 *
 * Run from source, Node strips the types of ~400 TypeScript files and resolves every import at
 * start; on this 2-core machine that costs seconds and leaves ~200 MiB of start-up garbage. One
 * bundled file starts in a fraction of that (README, "Performance").
 *
 * Output: cloud/dist/smarthome-cloud.mjs (inside the cloud package, so the native addon
 * better-sqlite3, kept external, resolves from the cloud's own node_modules), with the files the
 * cloud reads at run time beside it. `pnpm cloud` runs it when it is newer than the sources
 * (cloud/launch.mjs).
 * Options: --out <file> (default cloud/dist/smarthome-cloud.mjs).
 */
import { copyFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '../../..');
export const CLOUD_BUNDLE = path.join(ROOT, 'cloud/dist/smarthome-cloud.mjs');
/** Read at run time relative to the module (store-iap/verify.ts), so copied beside the bundle. */
const RUNTIME_FILES = ['cloud/src/store-iap/apple-root-ca-g3.pem'];

/**
 * web/serve finds the portal build (web/dist) relative to its own module; in the bundle its
 * module is the bundle, so that path is rewritten relative to where the bundle is written.
 */
function portalFromRepo(outFile: string): esbuild.Plugin {
  const serveDir = path.join(ROOT, 'web/serve');
  return {
    name: 'portal-from-repo',
    setup(build) {
      build.onLoad({ filter: /[\\/]web[\\/]serve[\\/]index\.ts$/ }, (args) => {
        const fromBundle = path.relative(path.dirname(outFile), serveDir);
        const source = readFileSync(args.path, 'utf8').replaceAll(
          'import.meta.dirname',
          `path.join(import.meta.dirname, ${JSON.stringify(fromBundle)})`,
        );
        return { contents: source, loader: 'ts' };
      });
    },
  };
}

export interface CloudBuildResult {
  file: string;
  bytes: number;
  ms: number;
}

export async function buildCloud(
  outFile = CLOUD_BUNDLE,
  log: (line: string) => void = () => {},
): Promise<CloudBuildResult> {
  const started = performance.now();
  const result = await esbuild.build({
    entryPoints: [path.join(ROOT, 'cloud/src/main.ts')],
    outfile: outFile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // native addons and the optional native helpers of ws/pg stay out of the bundle
    external: ['better-sqlite3', 'bufferutil', 'utf-8-validate', 'pg-native', '*.node'],
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: 'none',
    logLevel: 'silent',
    // bundled CommonJS dependencies call require(); an ES module has none of its own
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    plugins: [portalFromRepo(outFile)],
  });
  for (const w of result.warnings) log(`  esbuild warning: ${w.text} (${w.location?.file}:${w.location?.line})`);
  mkdirSync(path.dirname(outFile), { recursive: true });
  for (const file of RUNTIME_FILES)
    copyFileSync(path.join(ROOT, file), path.join(path.dirname(outFile), path.basename(file)));
  return { file: outFile, bytes: statSync(outFile).size, ms: Math.round(performance.now() - started) };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string' } } });
  const out = values.out ? path.resolve(values.out) : CLOUD_BUNDLE;
  try {
    const built = await buildCloud(out, (line) => process.stderr.write(`${line}\n`));
    process.stdout.write(
      `built ${path.relative(process.cwd(), built.file)} (${(built.bytes / 1024 / 1024).toFixed(1)} MB) in ${built.ms} ms\n`,
    );
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
