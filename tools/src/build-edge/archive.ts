/**
 * Release artifacts for the edge executable: `<name>.tar.xz` (the binary, mode 0755, inside a
 * tar so the mode survives a download) and `<name>.tar.xz.sha256` in `sha256sum` format, so
 * `sha256sum -c` checks a download. xz because it is what a Pi's Debian unpacks out of the box
 * and it makes the 108 MB binary about a quarter of that.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Archive {
  file: string;
  bytes: number;
  sha256: string;
  checksumFile: string;
}

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Archives `binary` next to itself (or into `outDir`); needs tar and xz on the PATH. */
export async function archiveBinary(binary: string, outDir = path.dirname(binary)): Promise<Archive> {
  const name = path.basename(binary);
  const file = path.join(outDir, `${name}.tar.xz`);
  // -T0: every core; -6: xz's default preset (higher ones cost minutes for about 1 % less)
  const r = spawnSync(
    'tar',
    [
      '--create',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--use-compress-program=xz -6 -T0',
      '--file',
      file,
      '--directory',
      path.dirname(binary),
      name,
    ],
    { encoding: 'utf8' },
  );
  if (r.error) throw new Error(`tar: ${r.error.message}`, { cause: r.error });
  if (r.status !== 0) throw new Error(`tar failed (exit ${r.status}): ${r.stderr}`);
  const digest = await sha256(file);
  const checksumFile = `${file}.sha256`;
  writeFileSync(checksumFile, `${digest}  ${path.basename(file)}\n`);
  return { file, bytes: statSync(file).size, sha256: digest, checksumFile };
}
