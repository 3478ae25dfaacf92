import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CloudDatabase } from '../db/database.ts';
import { createTestSchema, testDatabaseUrl, type TestSchema } from '../testing/database.ts';
import { authMigrations } from '../auth/tables.ts';
import { orgMigrations } from '../orgs/tables.ts';
import { edgeMigrations } from '../edges/tables.ts';
import { FlowDirectory, flowMigrations } from './flows.ts';

const migrations = [...authMigrations, ...orgMigrations, ...edgeMigrations, ...flowMigrations];

/** The config-flow directory lives in the shared database: every replica (instance) sees the same flows. */
let dir: string;
let schema: TestSchema | undefined;
let database: CloudDatabase;
let second: CloudDatabase;
let edgeA: number;
let edgeB: number;

async function flowIds(): Promise<string[]> {
  return (await database.query<{ flow_id: string }>('SELECT flow_id FROM cloud_flows')).map((r) => r.flow_id);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flows-test-'));
  const url = testDatabaseUrl();
  schema = url ? await createTestSchema(url) : undefined;
  const location = schema?.url ?? path.join(dir, 'cloud.db');
  database = new CloudDatabase(location, migrations);
  await database.start();
  second = new CloudDatabase(location, migrations);
  await second.start();
  const at = new Date().toISOString();
  for (const id of ['alice', 'bob']) {
    await database.execute(
      'INSERT INTO users (id, email, password_hash, app_account_token, created_at) VALUES (?, ?, ?, ?, ?)',
      [id, `${id}@example.test`, 'x', `aat-${id}`, at],
    );
  }
  const edge = async (name: string): Promise<number> => {
    await database.execute(
      "INSERT INTO edges (name, user_id, location, status, created_at, updated_at) VALUES (?, 'alice', 'home', 'online', ?, ?)",
      [name, at, at],
    );
    const row = await database.one<{ id: number }>('SELECT id FROM edges WHERE name = ?', [name]);
    return Number(row!.id);
  };
  edgeA = await edge('A');
  edgeB = await edge('B');
});

afterAll(async () => {
  await second?.stop();
  await database?.stop();
  await schema?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

afterEach(async () => {
  vi.useRealTimers();
  await database.execute('DELETE FROM cloud_flows');
});

describe('FlowDirectory', () => {
  it('answers the starting user with the edge, from another instance on the same database too', async () => {
    const flows = new FlowDirectory(database);
    await flows.remember('f1', edgeA, 'alice');
    expect(await flows.get('f1', 'alice')).toEqual({ edgeId: edgeA });
    expect(await new FlowDirectory(second).get('f1', 'alice')).toEqual({ edgeId: edgeA });
  });

  it('answers null to another user and for an unknown flow', async () => {
    const flows = new FlowDirectory(database);
    await flows.remember('f1', edgeA, 'alice');
    expect(await flows.get('f1', 'bob')).toBeNull();
    expect(await flows.get('nope', 'alice')).toBeNull();
  });

  it('forgets a flow (on any instance)', async () => {
    const flows = new FlowDirectory(database);
    await flows.remember('f1', edgeA, 'alice');
    await flows.remember('f2', edgeB, 'alice');
    await new FlowDirectory(second).forget('f1');
    expect(await flows.get('f1', 'alice')).toBeNull();
    expect(await flows.get('f2', 'alice')).toEqual({ edgeId: edgeB });
  });

  it('remembering the same flow id again replaces it', async () => {
    const flows = new FlowDirectory(database);
    await flows.remember('f1', edgeA, 'alice');
    await flows.remember('f1', edgeB, 'bob');
    expect(await flows.get('f1', 'alice')).toBeNull();
    expect(await flows.get('f1', 'bob')).toEqual({ edgeId: edgeB });
  });

  it('expires flows after the TTL and sweeps expired rows on the next write', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const t0 = new Date('2030-01-01T00:00:00.000Z').getTime();
    vi.setSystemTime(t0);
    const flows = new FlowDirectory(database, 60_000);
    await flows.remember('old', edgeA, 'alice');
    vi.setSystemTime(t0 + 60_000);
    expect(await flows.get('old', 'alice')).toEqual({ edgeId: edgeA });
    vi.setSystemTime(t0 + 60_001);
    expect(await flows.get('old', 'alice')).toBeNull();
    // Reads do not delete; the next write sweeps.
    expect(await flowIds()).toEqual(['old']);
    await flows.remember('new', edgeA, 'alice');
    expect(await flowIds()).toEqual(['new']);
    expect(await flows.get('new', 'alice')).toEqual({ edgeId: edgeA });
  });

  it('drops a flow with its edge', async () => {
    const flows = new FlowDirectory(database);
    await flows.remember('f1', edgeB, 'alice');
    await database.execute('DELETE FROM edges WHERE id = ?', [edgeB]);
    expect(await flows.get('f1', 'alice')).toBeNull();
  });
});
