import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessCache } from './access-cache.ts';
import { CloudDatabase } from '../db/database.ts';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { addMember, sampleSnapshot } from '../testing/fixtures.ts';

describe('AccessCache', () => {
  it('answers from memory until invalidated, and keeps no answer whose load overlapped a write', async () => {
    const cache = new AccessCache();
    let loads = 0;
    const load = async () => {
      loads++;
      return { n: loads };
    };
    expect(await cache.get('k', load)).toEqual({ n: 1 });
    expect(await cache.get('k', load)).toEqual({ n: 1 });
    cache.invalidate();
    expect(await cache.get('k', load)).toEqual({ n: 2 });
    // a write lands while the answer is being loaded: it is returned but not kept
    let release!: () => void;
    cache.invalidate();
    const slow = cache.get('k', async () => {
      await new Promise<void>((r) => {
        release = r;
      });
      return { n: 'old' };
    });
    await new Promise((r) => setImmediate(r));
    cache.invalidate();
    release();
    expect(await slow).toEqual({ n: 'old' });
    expect(await cache.get('k', load)).toEqual({ n: 3 });
  });

  it('tells its listeners of every invalidation', async () => {
    const cache = new AccessCache();
    let told = 0;
    cache.onInvalidate(() => {
      told++;
    });
    await cache.get('k', async () => 1);
    cache.invalidate();
    cache.invalidate();
    expect(told).toBe(2);
  });

  it('keeps no answer longer than maxAgeMs', async () => {
    let now = 1000;
    const cache = new AccessCache({ maxAgeMs: 5000, now: () => now });
    let loads = 0;
    const load = async () => ++loads;
    expect(await cache.get('k', load)).toBe(1);
    now += 4999;
    expect(await cache.get('k', load)).toBe(1);
    now += 2;
    expect(await cache.get('k', load)).toBe(2);
  });

  it('freezes what it shares, and caches nothing while disabled (a replica cut off from Redis)', async () => {
    let enabled = true;
    const cache = new AccessCache({ enabled: () => enabled });
    const value = await cache.get('k', async () => [{ edgeId: 1 }]);
    expect(Object.isFrozen(value) && Object.isFrozen(value[0])).toBe(true);
    enabled = false;
    let loads = 0;
    await cache.get('k', async () => {
      loads++;
      return 1;
    });
    await cache.get('k', async () => {
      loads++;
      return 1;
    });
    expect([loads, cache.size]).toEqual([2, 0]);
  });
});

describe('CloudDatabase.onWrite', () => {
  it('names the table of every write, and again when its transaction ends', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-writes-'));
    const db = new CloudDatabase(path.join(dir, 'c.db'), [
      { id: 't-1', sql: 'CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE b (id INTEGER PRIMARY KEY);' },
    ]);
    await db.start();
    const seen: string[] = [];
    db.onWrite((table) => seen.push(table));
    const { sqliteTable, integer, text } = await import('drizzle-orm/sqlite-core');
    const a = sqliteTable('a', { id: integer('id').primaryKey(), v: text('v') });
    await db.db.insert(a).values({ id: 1, v: 'x' });
    await db.execute('UPDATE a SET v = ? WHERE id = ?', ['y', 1]);
    await db.query('SELECT * FROM a');
    await db.transaction(async () => {
      await db.execute('INSERT INTO b (id) VALUES (1)');
      await db.db.delete(a);
    });
    expect(seen).toEqual(['a', 'a', 'b', 'a', 'b', 'a']);
    await db.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('cached grants follow the writes that change them', () => {
  let t: TestCloud;
  beforeAll(async () => {
    t = await startTestCloud();
  });
  afterAll(async () => {
    await t.stop();
  });

  it('a removed member, a deleted share and a revoked edge lose access on the very next request', async () => {
    const admin = await t.user();
    const member = await t.user();
    const org = (await t.post('/v1/organizations', { token: admin.token, body: { name: 'Org' } })).body.id as string;
    await addMember(t, org, member.id, 'member');
    const { edge } = await t.cloud.services.edges.create(
      { kind: 'org', userId: admin.id, orgId: org, role: 'admin' },
      { name: 'Org edge' },
    );
    await t.cloud.services.mirror.replaceSnapshot(edge.id, sampleSnapshot({ devices: 1 }));
    const { edge: personal } = await t.cloud.services.edges.create(
      { kind: 'personal', userId: admin.id, orgId: null },
      { name: 'Mine' },
    );
    await t.cloud.services.mirror.replaceSnapshot(personal.id, sampleSnapshot({ devices: 2 }));
    const memberStates = async () =>
      (await t.get('/v1/entities/states', { token: member.token })).body.map((s: any) => `${s.edge_id}:${s.entity_id}`);

    expect(await memberStates()).toEqual([`${edge.id}:light.lamp_1`]);
    const share = await t.post(`/v1/organizations/${org}/shares`, {
      token: admin.token,
      body: {
        resource_type: 'entity',
        resource_id: 'light.lamp_2',
        can_view: true,
        can_control: false,
        can_edit: false,
      },
    });
    expect(share.status).toBe(201);
    expect(await memberStates()).toEqual([`${edge.id}:light.lamp_1`, `${personal.id}:light.lamp_2`]);
    expect((await t.delete(`/v1/organizations/${org}/shares/${share.body.id}`, { token: admin.token })).status).toBe(
      200,
    );
    expect(await memberStates()).toEqual([`${edge.id}:light.lamp_1`]);

    expect((await t.delete(`/v1/edges/${edge.id}`, { token: admin.token, org })).status).toBe(200);
    expect(await memberStates()).toEqual([]);

    const { edge: second } = await t.cloud.services.edges.create(
      { kind: 'org', userId: admin.id, orgId: org, role: 'admin' },
      { name: 'Second' },
    );
    await t.cloud.services.mirror.replaceSnapshot(second.id, sampleSnapshot({ devices: 1 }));
    expect(await memberStates()).toEqual([`${second.id}:light.lamp_1`]);
    expect((await t.delete(`/v1/organizations/${org}/members/${member.id}`, { token: admin.token })).status).toBe(200);
    expect(await memberStates()).toEqual([]);
    expect((await t.get('/v1/entities/states', { token: member.token, org })).status).toBe(403);
  });
});
