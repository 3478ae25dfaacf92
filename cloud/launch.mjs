// `pnpm cloud`: runs the bundled cloud (`pnpm build:cloud`) when it is newer than every source
// it was built from, the TypeScript sources otherwise (seconds slower to start, ~200 MiB more
// memory after start: README, "Performance"). Same process, same arguments, same signals.
import { readdirSync, statSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// glibc's malloc keeps freed memory below its mmap threshold, which raises itself as large blocks
// are freed: after a first sync of 10,000 edges (PostgreSQL) the replica kept ~240 MB after a forced
// GC; with every allocation from 32 KB on mapped and unmapped on its own, ~190 MB (4 runs each; p99
// and CPU per delta within the noise). glibc reads the variable only at start, so the process
// replaces itself once (execve: same pid, same signals; ~25 ms of start-up). A GLIBC_TUNABLES of
// one's own, even empty, is kept as given.
const CLOUD_GLIBC_TUNABLES = 'glibc.malloc.mmap_threshold=32768';
if (process.platform === 'linux' && process.env.GLIBC_TUNABLES === undefined && typeof process.execve === 'function')
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    ...process.env,
    GLIBC_TUNABLES: CLOUD_GLIBC_TUNABLES,
  });

const root = path.resolve(import.meta.dirname, '..');
const bundle = path.join(root, 'cloud/dist/smarthome-cloud.mjs');

function newest(entry) {
  const st = statSync(entry, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const name of readdirSync(entry)) max = Math.max(max, newest(path.join(entry, name)));
  return max;
}

const built = statSync(bundle, { throwIfNoEntry: false })?.mtimeMs ?? 0;
const sources = ['cloud/src', 'protocol/src', 'cloud/package.json', 'protocol/package.json', 'pnpm-lock.yaml'];
const fresh = built > 0 && sources.every((s) => newest(path.join(root, s)) < built);
if (!fresh && built > 0)
  process.stderr.write('cloud/dist is older than the sources: running from source (pnpm build:cloud rebuilds it)\n');
// V8's compiled code of the bundle kept on disk beside it (written when the process exits, checked
// against the file's content): compiling the 2.4 MB module was ~27 % of a start's CPU; with the
// cache a start takes ~18 % less CPU and ~8 MB less RSS (README, "Cloud start-up notes"). Where
// the directory cannot be written, Node carries on without it.
if (fresh) enableCompileCache(path.join(root, 'cloud/dist/.compile-cache'));
await import(pathToFileURL(fresh ? bundle : path.join(root, 'cloud/src/main.ts')).href);
