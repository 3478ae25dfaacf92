import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../testing/until.ts';
import { SqliteDriver } from './sqlite-driver.ts';
import { SqliteThread } from './sqlite-thread.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-wal-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'c.db');
}

async function openDriver(file: string, options: ConstructorParameters<typeof SqliteDriver>[1]): Promise<SqliteDriver> {
  const driver = new SqliteDriver(file, options);
  await driver.open();
  await driver.migrate([{ id: 'b-001', sql: 'CREATE TABLE b (id INTEGER PRIMARY KEY, data BLOB NOT NULL)' }]);
  cleanups.push(() => driver.close());
  return driver;
}

/** `kib` KiB of new rows in one transaction */
async function write(driver: SqliteDriver, kib: number): Promise<void> {
  await driver.transaction(async () => {
    for (let i = 0; i < kib / 4; i++) await driver.execute('INSERT INTO b (data) VALUES (?)', [Buffer.alloc(4096, i)]);
  });
}

const autocheckpoint = async (driver: SqliteDriver) =>
  (await driver.query('PRAGMA wal_autocheckpoint', []))[0]!.wal_autocheckpoint;

describe('SQLite WAL checkpoints', () => {
  it('leave a quiet database to SQLite: no thread, the commits checkpoint', async () => {
    const driver = await openDriver(tempFile(), { checkpointThreadFromBytes: 1024 * 1024, walProbeMs: 10 });
    await write(driver, 64);
    await new Promise((r) => setTimeout(r, 100));
    expect(driver.checkpointThread).toBe(false);
    expect(await autocheckpoint(driver)).toBe(1000);
  });

  it('move to a thread of their own once the WAL has grown, which keeps the WAL bounded', async () => {
    const file = tempFile();
    const driver = await openDriver(file, {
      checkpointThreadFromBytes: 256 * 1024,
      walProbeMs: 10,
      checkpointEveryMs: 20,
    });
    await write(driver, 512);
    await until(() => driver.checkpointThread);
    // the main connection no longer checkpoints: only the thread can
    expect(await autocheckpoint(driver)).toBe(0);

    let largestWal = 0;
    for (let round = 0; round < 12; round++) {
      await write(driver, 512);
      largestWal = Math.max(largestWal, fs.statSync(`${file}-wal`).size);
      await new Promise((r) => setTimeout(r, 60));
    }
    // 6 MiB written since; without checkpoints the WAL would hold all of it
    expect(largestWal).toBeLessThan(3 * 1024 * 1024);

    await driver.close();
    // the main connection, closing last, checkpointed the rest and removed the WAL
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT count(*) AS n FROM b').get()).toEqual({ n: 13 * 128 });
    check.close();
  });

  it('report a thread that failed, which has then exited', async () => {
    const errors: Error[] = [];
    const checkpointer = new SqliteThread(path.join(tempFile(), 'missing-dir', 'c.db'), (err) => errors.push(err));
    checkpointer.start();
    await until(() => errors.length > 0);
    expect(errors[0]!.message).toMatch(/directory does not exist|unable to open/);
    expect(checkpointer.running).toBe(false);
    await checkpointer.stop();
  });
});
