import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteNativeBinding } from '../native/sqlite-binding.ts';
import { DB_FILE } from './database.ts';

/**
 * Online backup of the edge's database with SQLite's backup API: safe while the edge runs
 * (WAL lets this reader take a consistent copy without stopping writers). States are
 * written behind by at most a fraction of a second, so the copy is that recent.
 */
export async function backupDatabase(dataDir: string, outFile: string): Promise<{ file: string; bytes: number }> {
  const source = path.join(dataDir, DB_FILE);
  if (!fs.existsSync(source)) throw new Error(`no edge database at ${source}`);
  const target = path.resolve(outFile);
  if (fs.existsSync(target)) throw new Error(`${target} already exists; choose a new file`);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const db = new Database(source, {
    fileMustExist: true,
    nativeBinding: sqliteNativeBinding(path.dirname(source)) as string | undefined,
  });
  try {
    await db.backup(target);
  } finally {
    db.close();
  }
  return { file: target, bytes: fs.statSync(target).size };
}

/** Restores a backup into a (stopped) edge's data dir: the database file replaces the current one. */
export function restoreDatabase(backupFile: string, dataDir: string): string {
  if (!fs.existsSync(backupFile)) throw new Error(`no backup file at ${backupFile}`);
  const target = path.join(dataDir, DB_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  // A stale WAL next to the restored file would be replayed into it.
  for (const suffix of ['-wal', '-shm']) fs.rmSync(target + suffix, { force: true });
  fs.copyFileSync(backupFile, target);
  return target;
}
