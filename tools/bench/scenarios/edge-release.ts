import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '@smarthome/cloud/testing/process';
import { archiveBinary, type Archive } from '../../src/build-edge/archive.ts';
import { ARCHES, NODE24, buildEdge, type Arch } from '../../src/build-edge/build.ts';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * The edge's release artifacts as `pnpm build:edge` writes them: per target the executable, its
 * `.tar.xz` and the `.sha256` beside it (checked with `sha256sum -c`, as a download would be).
 * Same-run baseline: this machine's Node binary alone, stripped and archived the same way, i.e.
 * what any Node single executable costs before the edge's own bundle, assets and code cache.
 * MB here are 2^20 bytes, as the build prints them.
 */
const TARGET_ARCHIVE_MB = 30;
const MB = 1024 * 1024;

/** `sha256sum -c` on the checksum file, from its directory (the file names a sibling). */
function checksumHolds(a: Archive): boolean {
  return spawnSync('sha256sum', ['--check', '--quiet', a.checksumFile], { cwd: path.dirname(a.file) }).status === 0;
}

export const scenario: BenchScenario = {
  name: 'edge-release',
  description: `edge release archives (tar.xz + SHA-256) per target vs the bare Node binary archived the same way; target ≤ ${TARGET_ARCHIVE_MB} MB`,
  async run({ log }: BenchOptions): Promise<BenchResult> {
    // .tmp/ is git-ignored, so a fresh clone does not have it
    mkdirSync(path.join(REPO_ROOT, '.tmp'), { recursive: true });
    const work = mkdtempSync(path.join(REPO_ROOT, '.tmp', 'edge-release-'));
    try {
      const rows: (string | number)[][] = [];
      let ok = true;

      // baseline: the host's Node alone, stripped like the build strips its copy
      const bare = path.join(work, 'bare', `node-linux-${process.arch}`);
      mkdirSync(path.dirname(bare), { recursive: true });
      copyFileSync(NODE24, bare);
      chmodSync(bare, 0o755);
      const stripped = spawnSync('strip', [bare]).status === 0;
      let t = performance.now();
      const bareArchive = await archiveBinary(bare);
      rows.push([
        `Node ${process.arch} alone${stripped ? ', stripped' : ''} (baseline)`,
        (statSync(bare).size / MB).toFixed(1),
        (bareArchive.bytes / MB).toFixed(1),
        checksumHolds(bareArchive) ? 'ok' : 'FAILED',
        '',
      ]);
      log(
        `baseline: ${(bareArchive.bytes / MB).toFixed(1)} MB, archived in ${((performance.now() - t) / 1000).toFixed(0)} s`,
      );

      // each target on its own, so one that cannot be built (no network for arm64's Node) leaves the others
      for (const arch of ARCHES as readonly Arch[]) {
        let built;
        try {
          built = await buildEdge({
            arches: [arch],
            outDir: path.join(work, arch),
            log: (l) => log(`${arch}: ${l.trim()}`),
          });
        } catch (err) {
          ok = false;
          rows.push([`edge ${arch}`, `not built: ${(err as Error).message.split('\n')[0]}`, '', '', '']);
          continue;
        }
        for (const b of built.binaries) {
          t = performance.now();
          const a = await archiveBinary(b.file);
          const holds = checksumHolds(a);
          if (a.bytes > TARGET_ARCHIVE_MB * MB || !holds) ok = false;
          rows.push([
            `${path.basename(a.file)}${b.codeCache ? ' (code cache)' : ''}`,
            (b.bytes / MB).toFixed(1),
            (a.bytes / MB).toFixed(1),
            holds ? `ok ${a.sha256.slice(0, 12)}…` : 'FAILED',
            `≤ ${TARGET_ARCHIVE_MB} MB`,
          ]);
          log(`${arch}: ${(a.bytes / MB).toFixed(1)} MB, archived in ${((performance.now() - t) / 1000).toFixed(0)} s`);
        }
      }
      const edges = rows.slice(1).filter((r) => typeof r[2] === 'string' && r[2] !== '');
      return {
        columns: ['artifact', 'binary (MB)', '.tar.xz (MB)', 'sha256sum -c', 'target'],
        rows,
        summary: `archives ${edges.map((r) => `${r[0]} ${r[2]} MB`).join(', ')}; the bare Node binary ${(bareArchive.bytes / MB).toFixed(1)} MB (target ≤ ${TARGET_ARCHIVE_MB} MB each, #19)`,
        ok,
      };
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  },
};
