import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE, REPO_ROOT } from '../testing/process.ts';
import { migrations } from '../modules.ts';

/** Several cloud processes starting together on one SQLite file (replicas): migrations apply once. */
const dirs: string[] = [];
afterEach(() => { for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });

/** A process that opens the database (migrating it) and prints how many migrations it sees applied. */
const SCRIPT = `
import { CloudDatabase } from ${JSON.stringify(path.join(REPO_ROOT, 'cloud/src/db/database.ts'))};
import { migrations } from ${JSON.stringify(path.join(REPO_ROOT, 'cloud/src/modules.ts'))};
const db = new CloudDatabase(process.argv[1], migrations);
db.start();
process.stdout.write(String(db.raw.prepare('SELECT count(*) FROM _migrations').pluck().get()));
db.stop();
`;

function migrateIn(file: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(NODE, ['--input-type=module', '-e', SCRIPT, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })));
}

describe('CloudDatabase.migrate with several processes on one file', () => {
  it('applies every migration exactly once when four processes start at the same moment', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrate-race-'));
    dirs.push(dir);
    const file = path.join(dir, 'cloud.db');
    const results = await Promise.all([1, 2, 3, 4].map(() => migrateIn(file)));
    for (const r of results) {
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(Number(r.out)).toBe(migrations.length);
    }
    const db = new Database(file, { readonly: true });
    const ids = db.prepare('SELECT id FROM _migrations ORDER BY rowid').pluck().all();
    db.close();
    expect(ids).toEqual(migrations.map((m) => m.id));
  }, 30_000);
});
