import { createHash } from 'node:crypto';
import { mkdtempSync, openSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Name of the better-sqlite3 addon among the single executable's assets (see tools/src/build-edge). */
export const SQLITE_ADDON_ASSET = 'better_sqlite3.node';
/** The addon's SHA-256 (hex) among the assets: names and checks the copy kept in the data dir. */
export const SQLITE_ADDON_HASH_ASSET = 'better_sqlite3.node.sha256';
const CACHED_ADDON = /^\.sqlite-addon-[0-9a-f]{16}\.node$/;

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
 * The addon kept in `dir` as `.sqlite-addon-<hash>.node`: loaded when its bytes hash to `sha256`,
 * else (re)written from `asset()` first, and other versions' copies removed. A start that finds
 * its copy never reads the asset, whose 1.8 MB of the executable then stay out of RSS (unpacking
 * read them and wrote a new file at every start: edge-start −1.2 to −2 MB), and a Pi's SD card
 * is not written 1.8 MB per start. `shared` is the copy itself (it stays).
 */
export function cachedAddon(dir: string, sha256: string, asset: () => Uint8Array): { exports: object; shared: string } {
  const file = path.join(dir, `.sqlite-addon-${sha256.slice(0, 16)}.node`);
  let current = false;
  try {
    current = createHash('sha256').update(readFileSync(file)).digest('hex') === sha256;
  } catch {
    /* none yet */
  }
  if (!current) {
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, asset(), { mode: 0o500 });
      renameSync(tmp, file);
    } finally {
      rmSync(tmp, { force: true });
    }
    for (const other of readdirSync(dir))
      if (CACHED_ADDON.test(other) && path.join(dir, other) !== file) rmSync(path.join(dir, other), { force: true });
  }
  return { exports: dlopen(file), shared: file };
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
 * addon is one of the executable's assets: loaded from its checked copy in `fallbackDir` (the
 * data dir, see cachedAddon), else written to a private temp directory, loaded with
 * `process.dlopen` and returned as the addon object. Elsewhere (plain
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
  const asset = () => new Uint8Array(sea.getRawAsset(SQLITE_ADDON_ASSET) as ArrayBuffer);
  if (fallbackDir) {
    try {
      const sha256 = sea.getAsset(SQLITE_ADDON_HASH_ASSET, 'utf8').trim();
      ({ exports: loaded, shared } = cachedAddon(path.resolve(fallbackDir), sha256, asset));
      return loaded;
    } catch {
      /* no hash asset, a read-only or noexec data dir: a private copy as below */
    }
  }
  const bytes = asset();
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
