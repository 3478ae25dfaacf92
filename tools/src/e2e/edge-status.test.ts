import { afterEach, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';

/**
 * The edge status the cloud reports follows the tunnels (in-process; cloud-restart.test.ts
 * does it with killed processes): a cloud without Redis starts with no edge online, and a
 * replica that holds an edge's tunnel puts back `online` if something marked it offline.
 */
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => { for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {}); });

async function cloud(overrides: Parameters<typeof startTestCloud>[0] = {}, opts: Parameters<typeof startTestCloud>[1] = {}): Promise<TestCloud> {
  const t = await startTestCloud(overrides, opts);
  cleanups.push(() => t.stop());
  return t;
}

async function edgeStatus(t: TestCloud, id: number): Promise<string> {
  return (await t.sqlOne<{ status: string }>('SELECT status FROM edges WHERE id = ?', [id]))!.status;
}

describe('edge status', () => {
  it('a cloud without Redis starts with every edge offline: one left online by a crash has no tunnel', async () => {
    const first = await cloud();
    const u = await first.user();
    const created = (await first.post('/v1/edges', { token: u.token, body: { name: 'Home' } })).body;
    const revoked = (await first.post('/v1/edges', { token: u.token, body: { name: 'Gone' } })).body;
    await first.delete(`/v1/edges/${revoked.edge.id}`, { token: u.token });
    // What a SIGKILL leaves behind: the row still says online.
    await first.sql("UPDATE edges SET status = 'online' WHERE id = ?", [created.edge.id]);
    const second = await cloud(first.cloud.config.databaseUrl ? { databaseUrl: first.cloud.config.databaseUrl } : {}, { dataDir: first.dataDir });
    expect((await second.get(`/v1/edges/${created.edge.id}`, { token: u.token })).body.status).toBe('offline');
    expect(await edgeStatus(second, revoked.edge.id)).toBe('revoked');
  });
});
