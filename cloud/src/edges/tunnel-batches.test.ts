import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { sampleSnapshot } from '../testing/fixtures.ts';
import { TunnelBatches } from './tunnel-batches.ts';

let t: TestCloud;
let batches: TunnelBatches;
/** three edges of one user: a and b usable, c revoked */
let edges: { id: number; token: string }[];
beforeAll(async () => {
  t = await startTestCloud();
  const { edges: registry, mirror, database } = t.cloud.services;
  batches = new TunnelBatches({ edges: registry, mirror, dialect: database.dialect });
  const u = await t.user();
  const scope = { kind: 'personal' as const, userId: u.id, orgId: null };
  edges = [];
  for (const name of ['A', 'B', 'C']) {
    const { edge, token } = await registry.create(scope, { name });
    edges.push({ id: edge.id, token });
  }
  await registry.revoke(edges[2]!.id);
});
afterAll(async () => {
  await t.stop();
});

const row = (id: number) =>
  t.sqlOne<{ status: string; paired_at: string | null; last_seen_at: string | null }>(
    'SELECT status, paired_at, last_seen_at FROM edges WHERE id = ?',
    [id],
  );

describe('TunnelBatches', () => {
  it("looks up one tick's edge tokens in one query: unknown, malformed and revoked ones are null", async () => {
    const [a, b, c] = edges as [(typeof edges)[0], (typeof edges)[0], (typeof edges)[0]];
    const before = batches.runs.tokens;
    const found = await Promise.all([
      batches.authenticate(a.token),
      batches.authenticate(b.token),
      batches.authenticate(c.token),
      batches.authenticate('shp_edge_unknown'),
      batches.authenticate('not-an-edge-token'),
      batches.authenticate(a.token),
    ]);
    expect(found).toEqual([{ id: a.id }, { id: b.id }, null, null, null, { id: a.id }]);
    expect(batches.runs.tokens - before).toBe(1);
  });

  it("reads one tick's lastSeq in one query: null for an edge never mirrored", async () => {
    const [a, b] = edges as [(typeof edges)[0], (typeof edges)[0]];
    await t.cloud.services.mirror.replaceSnapshot(a.id, sampleSnapshot({ devices: 1 }), 7);
    const before = batches.runs.seqs;
    expect(await Promise.all([batches.lastSeq(a.id), batches.lastSeq(b.id)])).toEqual([7, null]);
    expect(batches.runs.seqs - before).toBe(1);
  });

  it("marks one tick's connects and disconnects in one transaction; paired_at is set once; revoked stays revoked", async () => {
    const [a, b, c] = edges as [(typeof edges)[0], (typeof edges)[0], (typeof edges)[0]];
    let invalidations = 0;
    t.cloud.services.accessCache.onInvalidate(() => invalidations++);
    const before = batches.runs.marks;
    await Promise.all([batches.markOnline(a.id), batches.markOnline(b.id), batches.markOnline(c.id)]);
    expect(batches.runs.marks - before).toBe(1);
    const first = await row(a.id);
    expect(first).toEqual({ status: 'online', paired_at: expect.any(String), last_seen_at: expect.any(String) });
    expect((await row(b.id))?.status).toBe('online');
    expect((await row(c.id))?.status).toBe('revoked');

    // one edge leaves while another comes back: both in one transaction
    await batches.markOffline(b.id);
    await Promise.all([batches.markOffline(a.id), batches.markOnline(b.id), batches.markOffline(c.id)]);
    expect(batches.runs.marks - before).toBe(3);
    expect((await row(a.id))?.status).toBe('offline');
    expect((await row(b.id))?.status).toBe('online');
    expect((await row(c.id))?.status).toBe('revoked');
    await batches.markOnline(a.id);
    expect((await row(a.id))?.paired_at).toBe(first?.paired_at);
    // no grant depends on online/offline: the access cache is left alone
    expect(invalidations).toBe(0);
  });

  it('retries a failed offline mark (bounded), so the edge is not left online', async () => {
    const [a] = edges as [(typeof edges)[0]];
    const { edges: registry, mirror, database } = t.cloud.services;
    let failures = 2;
    const flaky = new TunnelBatches({
      edges: {
        edgeIdsByTokens: (tokens) => registry.edgeIdsByTokens(tokens),
        markTunnels: (online, offline) =>
          failures-- > 0 ? Promise.reject(new Error('database unavailable')) : registry.markTunnels(online, offline),
      },
      mirror,
      dialect: database.dialect,
      retryMs: 1,
    });
    await flaky.markOnline(a.id).catch(() => {}); // the first failure
    await flaky.markOffline(a.id);
    expect((await row(a.id))?.status).toBe('offline');
    // a write that keeps failing is given up after four attempts, with its error
    failures = Infinity;
    await expect(flaky.markOffline(a.id)).rejects.toThrow('database unavailable');
    expect(flaky.runs.marks).toBe(1 + 2 + 4);
  });
});
