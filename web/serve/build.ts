import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { PORTAL_DIST } from './index.ts';

const WEB = path.resolve(import.meta.dirname, '..');
const ROOT = path.resolve(WEB, '..');
const SOURCES = [
  path.join(WEB, 'src'),
  path.join(WEB, 'index.html'),
  path.join(WEB, 'vite.config.ts'),
  path.join(WEB, 'public'),
  path.join(ROOT, 'protocol/src'),
];

function newest(p: string): number {
  if (!existsSync(p)) return 0;
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const name of readdirSync(p)) max = Math.max(max, newest(path.join(p, name)));
  return max;
}

/** Whether web/dist is missing or older than a source it is built from. */
export function portalStale(): boolean {
  const index = path.join(PORTAL_DIST, 'index.html');
  return !existsSync(index) || statSync(index).mtimeMs < Math.max(...SOURCES.map(newest));
}

/**
 * Builds the portal (what `pnpm build` does) when web/dist is missing or stale, so that the
 * tests serving it work on a fresh clone. Test files run in parallel: one builds, the others wait.
 */
export async function ensurePortalBuilt(): Promise<void> {
  if (!portalStale()) return;
  const lock = path.join(WEB, '.build-lock');
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // a lock older than 2 minutes is left over from a killed run
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > 120_000)
        rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error('timed out waiting for another portal build');
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    if (!portalStale()) return;
    const vite = path.join(WEB, 'node_modules/vite/bin/vite.js');
    const r = spawnSync(process.execPath, [vite, 'build', WEB, '--logLevel', 'error'], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`portal build failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
