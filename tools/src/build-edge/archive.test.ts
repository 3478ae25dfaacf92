import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { archiveBinary } from './archive.ts';

const hasTools = ['tar', 'xz', 'sha256sum'].every((t) => spawnSync(t, ['--version'], { stdio: 'ignore' }).status === 0);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'edge-archive-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(!hasTools)('edge release archive', () => {
  it('writes <name>.tar.xz holding the executable (mode kept) and a sha256sum-checkable .sha256', async () => {
    const binary = path.join(tmp, 'smarthome-edge-linux-x64');
    const content = Buffer.concat([Buffer.from('#!/bin/sh\necho edge\n'), Buffer.alloc(1 << 20, 7)]);
    writeFileSync(binary, content);
    chmodSync(binary, 0o755);
    const archive = await archiveBinary(binary);
    expect(archive.file).toBe(`${binary}.tar.xz`);
    expect(archive.bytes).toBeLessThan(content.length / 10);
    expect(readFileSync(archive.checksumFile, 'utf8')).toBe(`${archive.sha256}  smarthome-edge-linux-x64.tar.xz\n`);
    expect(spawnSync('sha256sum', ['-c', archive.checksumFile], { cwd: tmp }).status).toBe(0);

    const unpacked = path.join(tmp, 'unpacked');
    mkdirSync(unpacked);
    expect(spawnSync('tar', ['-xJf', archive.file, '-C', unpacked]).status).toBe(0);
    const out = path.join(unpacked, 'smarthome-edge-linux-x64');
    expect(readFileSync(out).equals(content)).toBe(true);
    expect(statSync(out).mode & 0o777).toBe(0o755);
  });
});
