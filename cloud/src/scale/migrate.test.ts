import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE, REPO_ROOT } from '../testing/process.ts';
import { migrations } from '../modules.ts';
import { CloudDatabase } from '../db/database.ts';
import { createTestSchema, testDatabaseUrl } from '../testing/database.ts';

/** Several cloud processes starting together on one database (replicas): migrations apply once. */
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A process that opens the database (migrating it) and prints how many migrations it sees applied. */
const SCRIPT = `
import { CloudDatabase } from ${JSON.stringify(path.join(REPO_ROOT, 'cloud/src/db/database.ts'))};
import { migrations } from ${JSON.stringify(path.join(REPO_ROOT, 'cloud/src/modules.ts'))};
const db = new CloudDatabase(process.argv[1], migrations);
await db.start();
process.stdout.write(String((await db.one('SELECT COUNT(*) AS n FROM _migrations')).n));
await db.stop();
`;

function migrateIn(location: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(NODE, ['--input-type=module', '-e', SCRIPT, location], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    err += d;
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out, err })));
}

/** The engine under test: a SQLite file, or a fresh PostgreSQL schema. */
async function location(): Promise<string> {
  const url = testDatabaseUrl();
  if (url) {
    const schema = await createTestSchema(url);
    cleanups.push(() => schema.drop());
    return schema.url;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrate-race-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'cloud.db');
}

describe(`CloudDatabase.migrate with several processes on one ${testDatabaseUrl() ? 'PostgreSQL schema' : 'SQLite file'}`, () => {
  it('applies every migration exactly once when four processes start at the same moment', async () => {
    const where = await location();
    const results = await Promise.all([1, 2, 3, 4].map(() => migrateIn(where)));
    for (const r of results) {
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(Number(r.out)).toBe(migrations.length);
    }
    const db = new CloudDatabase(where, migrations);
    await db.start();
    const ids = (await db.query<{ id: string; applied_at: string }>('SELECT id, applied_at FROM _migrations')).map(
      (r) => r.id,
    );
    await db.stop();
    expect(ids.sort()).toEqual(migrations.map((m) => m.id).sort());
  }, 30_000);
});
