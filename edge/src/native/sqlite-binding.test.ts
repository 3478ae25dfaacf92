import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, expect, it } from 'vitest';
import { SQLITE_ADDON_ASSET, cachedAddon, unpackAddon } from './sqlite-binding.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'sqlite-binding-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** better-sqlite3's prebuilt addon for this machine: the bytes the executable carries as an asset. */
function addonBytes(): Uint8Array {
  const dir = path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
  return readFileSync(path.join(dir, 'prebuilds', `${process.platform}-${process.arch}.node`));
}

/** How many times this process has the unpacked addon's code mapped (one executable segment per load). */
function mappedCopies(): number {
  return readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((line) => line.includes(tmp) && line.includes(SQLITE_ADDON_ASSET) && line.split(/\s+/)[1] === 'r-xp')
    .length;
}

it.runIf(process.platform === 'linux')(
  'a worker thread loading the shared file gets the library already mapped, not a second copy',
  async () => {
    const { exports, shared } = unpackAddon(tmp, addonBytes());
    expect(typeof (exports as { Database?: unknown }).Database).toBe('function');
    expect(shared).toMatch(/^\/proc\/self\/fd\/\d+$/);
    // loaded, and deleted at once: nothing left on disk
    expect(readdirSync(tmp)).toEqual([]);
    expect(mappedCopies()).toBe(1);

    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const mod = { exports: {} };
       process.dlopen(mod, workerData.shared);
       parentPort.postMessage(typeof mod.exports.Database);`,
      { eval: true, workerData: { shared } },
    );
    const answer = await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    // the addon initialized for the worker's own context, from the one mapping
    expect(answer).toBe('function');
    expect(mappedCopies()).toBe(1);

    // what the worker did before: its own copy, a second mapping
    unpackAddon(tmp, addonBytes());
    expect(mappedCopies()).toBe(2);
  },
);

it.runIf(process.platform === 'linux')(
  'the data dir keeps one checked copy: loaded without reading the asset, rewritten when it differs, older versions removed',
  () => {
    const dir = mkdtempSync(path.join(tmp, 'data-'));
    const bytes = addonBytes();
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    let reads = 0;
    const asset = () => {
      reads++;
      return bytes;
    };
    writeFileSync(path.join(dir, '.sqlite-addon-0123456789abcdef.node'), 'an older version');

    const first = cachedAddon(dir, sha256, asset);
    expect(typeof (first.exports as { Database?: unknown }).Database).toBe('function');
    expect(first.shared).toBe(path.join(dir, `.sqlite-addon-${sha256.slice(0, 16)}.node`));
    expect(reads).toBe(1);
    expect(readdirSync(dir)).toEqual([path.basename(first.shared)]);

    // the next start: the copy is there and intact, the asset is not read
    expect(cachedAddon(dir, sha256, asset).shared).toBe(first.shared);
    expect(reads).toBe(1);

    // a damaged copy is written again (a new file: the loaded one stays mapped, never written in place)
    rmSync(first.shared);
    writeFileSync(first.shared, Buffer.concat([bytes, Buffer.from([0])]));
    cachedAddon(dir, sha256, asset);
    expect(reads).toBe(2);
    expect(readFileSync(first.shared)).toEqual(bytes);
    expect(readdirSync(dir)).toEqual([path.basename(first.shared)]);
  },
);
