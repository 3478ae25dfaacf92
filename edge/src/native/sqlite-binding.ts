import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Name of the better-sqlite3 addon among the single executable's assets (see tools/src/build-edge). */
export const SQLITE_ADDON_ASSET = 'better_sqlite3.node';

let loaded: object | undefined;
let shared: string | undefined;

/** The addon loaded from `file` (dlopen), as better-sqlite3 wants it. */
function dlopen(file: string): object {
  const mod = { exports: {} as object };
  process.dlopen(mod, file);
  return mod.exports;
}

/**
 * Writes the addon into a private temp dir, loads it and deletes it. `shared` is a path to the same
 * file that stays valid in this process (`/proc/self/fd/<fd>` of a descriptor kept open): another
 * thread that loads it gets the library already mapped (the dynamic loader matches the file's
 * device and inode), where unpacking its own copy mapped a second 1.8 MB of code.
 */
export function unpackAddon(dir: string, bytes: Uint8Array): { exports: object; shared: string | undefined } {
  const tmp = mkdtempSync(path.join(dir, '.smarthome-edge-')); // mode 0700
  const file = path.join(tmp, SQLITE_ADDON_ASSET);
  try {
    writeFileSync(file, bytes, { mode: 0o500, flag: 'wx' });
    const exports = dlopen(file);
    let fd: number | undefined;
    try {
      // never closed: the writer thread may start (again) at any time; one descriptor per process
      fd = openSync(file, 'r');
    } catch {
      /* no descriptor: other threads unpack their own copy */
    }
    return { exports, shared: fd === undefined ? undefined : `/proc/self/fd/${fd}` };
  } finally {
    // The library stays mapped after its file is gone (Linux), so nothing is left behind,
    // not even after SIGKILL.
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The loaded addon's file for another thread of this process (the recorder's writer thread):
 * pass it to that thread's sqliteNativeBinding() so both use one mapping of the library.
 * Undefined outside the executable (better-sqlite3's own file is shared by path there).
 */
export function sqliteAddonShared(): string | undefined {
  return shared;
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
export function sqliteNativeBinding(fallbackDir?: string, sharedFile?: string): object | undefined {
  if (loaded) return loaded;
  const sea = process.getBuiltinModule('node:sea');
  if (!sea?.isSea()) return undefined;
  if (sharedFile) {
    try {
      loaded = dlopen(sharedFile);
      return loaded;
    } catch {
      /* gone or refused: unpack a copy as the main thread did */
    }
  }
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
      ({ exports: loaded, shared } = unpackAddon(dir, bytes));
      return loaded;
    } catch (err) {
      firstError ??= err;
    }
  }
  throw new Error(`cannot load the SQLite addon from ${dirs.join(' or ')}: ${(firstError as Error).message}`, {
    cause: firstError,
  });
}
