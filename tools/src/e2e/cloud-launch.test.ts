import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnReady, type Spawned } from '@smarthome/cloud/testing/process';

/** `pnpm cloud` (cloud/launch.mjs) as a real process: the malloc setting it starts the cloud with. */
const started: Spawned[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const p of started.splice(0))
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill('SIGKILL');
      await p.exit;
    }
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const environ = (pid: number) => fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

describe.runIf(process.platform === 'linux')('pnpm cloud (cloud/launch.mjs)', () => {
  it('runs the cloud with glibc’s mmap threshold at 32 KB in the process it was started as; a GLIBC_TUNABLES of one’s own is kept', async () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'GLIBC_TUNABLES=glibc.malloc.mmap_threshold=32768'],
      ['', 'GLIBC_TUNABLES='],
    ];
    for (const [given, expected] of cases) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-launch-'));
      dirs.push(dir);
      // from the sources unless a fresh bundle exists: seconds on a loaded machine
      const p = await spawnReady(
        'cloud/launch.mjs',
        ['--port', '0', '--data-dir', dir],
        { GLIBC_TUNABLES: given },
        60_000,
      );
      started.push(p);
      // execve keeps the pid: the child spawned is the cloud answering, with the variable set
      expect(environ(p.child.pid!)).toContain(expected);
      expect((await fetch(`http://127.0.0.1:${p.ready.http}/healthz`)).status).toBe(200);
      p.child.kill('SIGTERM');
      expect(await p.exit).toBe(0);
    }
  }, 150_000);
});
