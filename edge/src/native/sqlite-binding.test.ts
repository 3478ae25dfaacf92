import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, expect, it } from 'vitest';
import { SQLITE_ADDON_ASSET, unpackAddon } from './sqlite-binding.ts';

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
