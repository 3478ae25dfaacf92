import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Name of the better-sqlite3 addon among the single executable's assets (see tools/src/build-edge). */
export const SQLITE_ADDON_ASSET = 'better_sqlite3.node';

let loaded: object | undefined;

function loadFrom(dir: string, bytes: Uint8Array): object {
  const tmp = mkdtempSync(path.join(dir, '.smarthome-edge-')); // mode 0700
  const file = path.join(tmp, SQLITE_ADDON_ASSET);
  try {
    writeFileSync(file, bytes, { mode: 0o500, flag: 'wx' });
    const mod = { exports: {} as object };
    process.dlopen(mod, file);
    return mod.exports;
  } finally {
    // The library stays mapped after its file is gone (Linux), so nothing is left behind,
    // not even after SIGKILL.
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * better-sqlite3's `nativeBinding` option. Inside the single executable (`node:sea`), the
 * addon is one of the executable's assets: it is written to a private temp directory,
 * loaded with `process.dlopen` and returned as the addon object. Elsewhere (plain
 * `node edge/src/main.ts`): undefined, so better-sqlite3 loads its own prebuilt addon.
 *
 * When the temp dir refuses to load code (`/tmp` mounted noexec), `fallbackDir` (the data
 * dir), `$XDG_RUNTIME_DIR`, the working directory and the executable's own directory are
 * tried in that order.
 *
 *     new Database(file, { nativeBinding: sqliteNativeBinding(dataDir) })
 */
export function sqliteNativeBinding(fallbackDir?: string): object | undefined {
  if (loaded) return loaded;
  const sea = process.getBuiltinModule('node:sea');
  if (!sea?.isSea()) return undefined;
  const bytes = new Uint8Array(sea.getRawAsset(SQLITE_ADDON_ASSET) as ArrayBuffer);
  const dirs = [
    os.tmpdir(),
    fallbackDir && path.resolve(fallbackDir),
    process.env.XDG_RUNTIME_DIR,
    process.cwd(),
    path.dirname(process.execPath),
  ].filter((d, i, all): d is string => !!d && all.indexOf(d) === i);
  let firstError: unknown;
  for (const dir of dirs) {
    try {
      loaded = loadFrom(dir, bytes);
      return loaded;
    } catch (err) {
      firstError ??= err;
    }
  }
  throw new Error(`cannot load the SQLite addon from ${dirs.join(' or ')}: ${(firstError as Error).message}`, {
    cause: firstError,
  });
}
