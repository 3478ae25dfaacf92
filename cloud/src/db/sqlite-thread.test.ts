import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../testing/until.ts';
import { UniqueViolation } from './driver.ts';
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

/** A statement that keeps SQLite busy for a while: `n` rows of 16 random bytes in one INSERT. */
const manyRows = (n: number) => ({
  sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) INSERT INTO b (data) SELECT randomblob(16) FROM c',
  params: [n],
});

/** Turns of the event loop (setImmediate rounds) while `work` runs. */
async function turnsDuring(work: Promise<unknown>): Promise<number> {
  let turns = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    turns += 1;
    setImmediate(spin);
  };
  setImmediate(spin);
  await work;
  done = true;
  return turns;
}

const count = async (driver: SqliteDriver) => Number((await driver.query('SELECT count(*) AS n FROM b', []))[0]!.n);

describe('SQLite batches', () => {
  it("run on the file's thread once it runs, off the event loop, and commit as one unit", async () => {
    const threaded = await openDriver(tempFile(), { checkpointThreadFromBytes: 0 });
    expect(threaded.checkpointThread).toBe(true);
    const onThread = await turnsDuring(threaded.batch([manyRows(200_000), manyRows(1)]));
    expect(await count(threaded)).toBe(200_001);
    // the same batch on the main connection (a quiet file: no thread) holds the loop throughout
    const quiet = await openDriver(tempFile(), { checkpointThreadFromBytes: 1 << 30 });
    expect(quiet.checkpointThread).toBe(false);
    const onLoop = await turnsDuring(quiet.batch([manyRows(200_000), manyRows(1)]));
    expect(await count(quiet)).toBe(200_001);
    expect(onLoop).toBeLessThanOrEqual(2);
    expect(onThread).toBeGreaterThan(onLoop + 5);
  });

  it('roll back whole on an error, which keeps its code (a unique violation is UniqueViolation)', async () => {
    const driver = await openDriver(tempFile(), { checkpointThreadFromBytes: 0 });
    await driver.execute("INSERT INTO b (id, data) VALUES (1, x'00')", []);
    const failing = driver.batch([
      { sql: 'INSERT INTO b (id, data) VALUES (?, ?)', params: [2, Buffer.from('a')] },
      { sql: 'INSERT INTO b (id, data) VALUES (?, ?)', params: [1, Buffer.from('b')] },
    ]);
    await expect(failing).rejects.toBeInstanceOf(UniqueViolation);
    await expect(driver.batch([{ sql: 'INSERT INTO nowhere VALUES (1)', params: [] }])).rejects.toMatchObject({
      code: 'SQLITE_ERROR',
    });
    expect(await count(driver)).toBe(1);
    // the thread still takes batches
    await driver.batch([{ sql: 'INSERT INTO b (id, data) VALUES (?, ?)', params: [3, Buffer.from('c')] }]);
    expect(await count(driver)).toBe(2);
  });

  it("take their turn among transactions; the main connection's writes wait for one in flight, its reads do not", async () => {
    const driver = await openDriver(tempFile(), { checkpointThreadFromBytes: 0 });
    await driver.execute("INSERT INTO b (id, data) VALUES (1, x'00')", []);
    const order: string[] = [];
    const batch = driver.batch([manyRows(200_000)]).then(() => order.push('batch'));
    await new Promise((resolve) => setImmediate(resolve)); // posted to the thread by now
    const write = driver.execute("INSERT INTO b (data) VALUES (x'01')", []).then(() => order.push('write'));
    const read = count(driver).then((n) => order.push(`read ${n}`));
    const transaction = driver
      .transaction(async () => driver.execute("INSERT INTO b (data) VALUES (x'02')", []))
      .then(() => order.push('transaction'));
    // it waits for the batch without holding the loop (not in SQLite's busy handler)
    expect(await turnsDuring(write)).toBeGreaterThan(5);
    await Promise.all([batch, read, transaction]);
    // the read saw the file before the batch committed; both writes ran after it (their ids follow
    // the batch's rows), and neither failed busy
    expect(order[0]).toBe('read 1');
    const idOf = async (data: string) =>
      Number((await driver.query('SELECT id FROM b WHERE hex(data) = ?', [data]))[0]!.id);
    expect(await idOf('01')).toBeGreaterThan(200_001);
    expect(await idOf('02')).toBeGreaterThan(200_001);
    expect(await count(driver)).toBe(200_003);
  });

  it('are all committed before close() ends: it waits for those in flight', async () => {
    const file = tempFile();
    const driver = await openDriver(file, { checkpointThreadFromBytes: 0 });
    const batches = [driver.batch([manyRows(50_000)]), driver.batch([manyRows(50_000)])];
    await driver.close();
    await Promise.all(batches);
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT count(*) AS n FROM b').get()).toEqual({ n: 100_000 });
    check.close();
  });
});
