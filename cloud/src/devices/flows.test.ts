import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CloudDatabase } from '../db/database.ts';
import { authMigrations } from '../auth/tables.ts';
import { orgMigrations } from '../orgs/tables.ts';
import { edgeMigrations } from '../edges/tables.ts';
import { FlowDirectory, flowMigrations } from './flows.ts';

const migrations = [...authMigrations, ...orgMigrations, ...edgeMigrations, ...flowMigrations];

/** The config-flow directory lives in the shared database: every replica (instance) sees the same flows. */
let dir: string;
let database: CloudDatabase;
let second: CloudDatabase;
let edgeA: number;
let edgeB: number;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flows-test-'));
  const file = path.join(dir, 'cloud.db');
  database = new CloudDatabase(file, migrations);
  database.start();
  second = new CloudDatabase(file, migrations);
  second.start();
  const at = new Date().toISOString();
  for (const id of ['alice', 'bob']) {
    database.raw.prepare('INSERT INTO users (id, email, password_hash, app_account_token, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(id, `${id}@example.test`, 'x', `aat-${id}`, at);
  }
  const edge = database.raw.prepare("INSERT INTO edges (name, user_id, location, status, created_at, updated_at) VALUES (?, 'alice', 'home', 'online', ?, ?)");
  edgeA = Number(edge.run('A', at, at).lastInsertRowid);
  edgeB = Number(edge.run('B', at, at).lastInsertRowid);
});

afterAll(() => {
  second.stop();
  database.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

afterEach(() => {
  vi.useRealTimers();
  database.raw.exec('DELETE FROM cloud_flows');
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
    expect(database.raw.prepare('SELECT flow_id FROM cloud_flows').pluck().all()).toEqual(['old']);
    await flows.remember('new', edgeA, 'alice');
    expect(database.raw.prepare('SELECT flow_id FROM cloud_flows').pluck().all()).toEqual(['new']);
    expect(await flows.get('new', 'alice')).toEqual({ edgeId: edgeA });
  });

  it('drops a flow with its edge', async () => {
    const flows = new FlowDirectory(database);
    await flows.remember('f1', edgeB, 'alice');
    database.raw.prepare('DELETE FROM edges WHERE id = ?').run(edgeB);
    expect(await flows.get('f1', 'alice')).toBeNull();
  });
});
