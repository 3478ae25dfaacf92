import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * Which engine the cloud's tests run on: the `cloud-postgres` vitest project sets
 * TEST_DATABASE_URL (from DATABASE_URL); otherwise each test cloud gets a SQLite file.
 */
export function testDatabaseUrl(): string | undefined {
  const raw = process.env.TEST_DATABASE_URL;
  if (!raw) return undefined;
  // CI machines run the tests as root with no USER set; the server's superuser is postgres.
  const url = new URL(raw);
  if (!url.username && !process.env.PGUSER && !process.env.USER) url.username = 'postgres';
  return url.toString();
}

export const onPostgres = (): boolean => testDatabaseUrl() !== undefined;

export interface TestSchema {
  /** the database URL with this schema as the search_path */
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, empty schema per test cloud, so test files run in parallel on one database. */
export async function createTestSchema(baseUrl: string): Promise<TestSchema> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  await withClient(baseUrl, (c) => c.query(`CREATE SCHEMA ${name}`));
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${name}`);
  return {
    url: url.toString(),
    name,
    drop: () => withClient(baseUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`)).then(() => undefined),
  };
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
