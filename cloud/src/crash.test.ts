import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CloudDatabase } from './db/database.ts';
import { migrations } from './modules.ts';
import { spawnReady, type Spawned } from './testing/process.ts';
import { createTestSchema, testDatabaseUrl, type TestSchema } from './testing/database.ts';

/**
 * kill -9 of the cloud process under a load of HTTP writes: every write answered 2xx is there
 * after a restart, and a write that was cut off is there entirely or not at all (creating an
 * organization writes the organization and its admin membership in one transaction).
 */
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function cloudProcess(dataDir: string, schema: TestSchema | null): Promise<Spawned> {
  const p = await spawnReady(
    'cloud/src/main.ts',
    ['--port', '0', '--data-dir', dataDir, ...(schema ? ['--database-url', schema.url] : [])],
    {},
    60_000,
  );
  cleanups.push(() => {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  });
  return p;
}

async function post(
  base: string,
  urlPath: string,
  token: string | null,
  body: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(base + urlPath, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

describe('cloud process: kill -9 under write load', () => {
  it('keeps every acknowledged write and applies none halfway', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cloud-crash-'));
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const url = testDatabaseUrl();
    const schema = url ? await createTestSchema(url) : null;
    if (schema) cleanups.push(() => schema.drop());

    const first = await cloudProcess(dataDir, schema);
    const base = `http://127.0.0.1:${first.ready.http}`;
    const reg = await post(base, '/v1/auth/register', null, { email: 'load@example.test', password: 'password123' });
    expect(reg.status).toBe(201);
    const token = reg.body.access_token as string;

    const zones: number[] = [];
    const orgs: string[] = [];
    let running = true;
    let n = 0;
    const writer = async () => {
      while (running) {
        const i = ++n;
        try {
          if (i % 3 === 0) {
            const res = await post(base, '/v1/organizations', token, { name: `org ${i}` });
            if (res.status === 201) orgs.push(res.body.id);
          } else {
            const res = await post(base, '/v1/zones', token, {
              name: `zone ${i}`,
              icon: 'mdi:home',
              latitude: 1,
              longitude: 2,
              radius: 10,
            });
            if (res.status === 201) zones.push(res.body.id);
          }
        } catch {
          return; // the connection died with the process
        }
      }
    };
    const writers = Array.from({ length: 8 }, writer);
    const until = Date.now() + 20_000;
    while ((zones.length < 100 || orgs.length < 30) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    first.child.kill('SIGKILL');
    expect(await first.exit).toBeNull();
    running = false;
    await Promise.all(writers);
    expect(zones.length).toBeGreaterThanOrEqual(100);

    const database = new CloudDatabase(schema?.url ?? path.join(dataDir, 'cloud.db'), migrations);
    await database.start();
    try {
      const storedZones = new Set(
        (await database.query<{ id: number }>('SELECT id FROM zones')).map((r) => Number(r.id)),
      );
      expect(zones.filter((id) => !storedZones.has(id))).toEqual([]);
      const storedOrgs = new Set(
        (await database.query<{ id: string }>('SELECT id FROM organizations')).map((r) => r.id),
      );
      expect(orgs.filter((id) => !storedOrgs.has(id))).toEqual([]);
      // no organization without its admin, no membership without its organization
      expect(
        await database.query(`SELECT o.id FROM organizations o WHERE NOT EXISTS
        (SELECT 1 FROM org_members m WHERE m.org_id = o.id AND m.role = 'admin')`),
      ).toEqual([]);
      expect(
        await database.query(
          'SELECT m.org_id FROM org_members m WHERE NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = m.org_id)',
        ),
      ).toEqual([]);
    } finally {
      await database.stop();
    }

    // and the cloud starts again on what the crash left
    const again = await cloudProcess(dataDir, schema);
    const login = await post(`http://127.0.0.1:${again.ready.http}`, '/v1/auth/token', null, {
      grant_type: 'password',
      email: 'load@example.test',
      password: 'password123',
    });
    expect(login.status).toBe(200);
    again.child.kill('SIGTERM');
    expect(await again.exit).toBe(0);
  }, 120_000);
});
