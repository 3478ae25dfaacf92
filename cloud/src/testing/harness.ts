import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCloud, type Cloud } from '../cloud.ts';
import { defaultCloudConfig, type CloudConfig } from '../config.ts';
import { createLogger } from '../log.ts';
import { createTestSchema, testDatabaseUrl, type TestSchema } from './database.ts';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** raw body text, sent as is */
  raw?: string | Uint8Array;
  org?: string;
  headers?: Record<string, string>;
}

/**
 * A whole cloud in-process: temp data dir, real HTTP on a loopback port, and a real database:
 * a SQLite file, or a fresh schema of the PostgreSQL at TEST_DATABASE_URL.
 */
export class TestCloud {
  readonly cloud: Cloud;
  readonly dataDir: string;
  private readonly schema: TestSchema | null;
  constructor(cloud: Cloud, dataDir: string, schema: TestSchema | null = null) {
    this.cloud = cloud;
    this.dataDir = dataDir;
    this.schema = schema;
  }

  /** Portable SQL (`?` placeholders) on the cloud's database, for tests that look behind the API. */
  sql<T = Record<string, any>>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.cloud.database.query<T>(sql, params);
  }

  async sqlOne<T = Record<string, any>>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    return this.cloud.database.one<T>(sql, params);
  }

  get url(): string {
    return this.cloud.url;
  }

  async request<T = any>(method: string, urlPath: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.org) headers['x-organization-id'] = opts.org;
    let body: string | Uint8Array | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
    const res = await fetch(this.url + urlPath, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed as T, text, headers: res.headers };
  }

  get = <T = any>(p: string, o?: RequestOptions) => this.request<T>('GET', p, o);
  post = <T = any>(p: string, o?: RequestOptions) => this.request<T>('POST', p, o);
  put = <T = any>(p: string, o?: RequestOptions) => this.request<T>('PUT', p, o);
  patch = <T = any>(p: string, o?: RequestOptions) => this.request<T>('PATCH', p, o);
  delete = <T = any>(p: string, o?: RequestOptions) => this.request<T>('DELETE', p, o);

  /**
   * Registers a user and returns its access token and ids. Its address counts as verified
   * (as if it had followed the link in its verification mail) unless `verified: false`.
   */
  async user(
    email = `u${Math.random().toString(36).slice(2)}@example.test`,
    password = 'correct horse battery',
    opts: { verified?: boolean } = {},
  ) {
    const res = await this.post('/v1/auth/register', { body: { email, password, name: email.split('@')[0] } });
    if (res.status !== 201) throw new Error(`register failed: ${res.status} ${res.text}`);
    if (opts.verified !== false)
      await this.cloud.database.execute('UPDATE users SET email_verified = 1 WHERE id = ?', [res.body.user.id]);
    return {
      email,
      password,
      id: res.body.user.id as string,
      token: res.body.access_token as string,
      refresh: res.body.refresh_token as string,
    };
  }

  async stop(): Promise<void> {
    await this.cloud.stop();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
    await this.schema?.drop();
  }
}

export async function startTestCloud(
  overrides: Partial<CloudConfig> = {},
  opts: { dataDir?: string } = {},
): Promise<TestCloud> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-test-'));
  const baseUrl = testDatabaseUrl();
  const schema = baseUrl && overrides.databaseUrl === undefined ? await createTestSchema(baseUrl) : null;
  const config = defaultCloudConfig({
    port: 0,
    host: '127.0.0.1',
    dataDir,
    fastHashing: true,
    databaseUrl: schema?.url,
    ...overrides,
  });
  const cloud = createCloud(config, { log: createLogger('cloud', { silent: !process.env.DEBUG }) });
  try {
    await cloud.start();
  } catch (err) {
    await schema?.drop();
    throw err;
  }
  return new TestCloud(cloud, dataDir, schema);
}
