import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { mirrorHub, rawEdge, serveHub } from '../testing/tunnel-hub.ts';
import { sampleSnapshot, twoEdges } from '../testing/fixtures.ts';
import { SnapshotBacklog, type Release, type Share } from './backlog.ts';
import type { TunnelHub } from './hub.ts';

describe('SnapshotBacklog', () => {
  it('admits frames within the budget at once, the others first come first served as releases make room', () => {
    const backlog = new SnapshotBacklog(100);
    const admitted: string[] = [];
    const releases = new Map<string, Release>();
    const shares = new Map<string, Share>();
    const enter = (name: string, bytes: number) =>
      backlog.enter(bytes, (share) => {
        admitted.push(name);
        releases.set(name, share.release);
        shares.set(name, share);
      });
    expect(enter('a', 60)).toBe(true);
    expect(enter('b', 40)).toBe(true);
    expect(enter('c', 30)).toBe(false);
    expect(enter('d', 1)).toBe(false); // it would fit, but c came first
    expect([backlog.bytes, backlog.waiting, backlog.waited]).toEqual([100, 2, 2]);
    releases.get('b')!();
    releases.get('b')!(); // twice is harmless
    expect(admitted).toEqual(['a', 'b', 'c', 'd']);
    expect(backlog.bytes).toBe(91);
    // a frame larger than the budget goes through when nothing else is admitted
    expect(enter('e', 500)).toBe(false);
    for (const name of ['a', 'c', 'd']) releases.get(name)!();
    expect(admitted.at(-1)).toBe('e');
    expect([backlog.bytes, backlog.waiting, backlog.peakBytes]).toEqual([500, 0, 500]);
    // a share admitted on an estimate takes its real size; a smaller one makes room
    expect(enter('f', 10)).toBe(false);
    shares.get('e')!.resize(80);
    expect(admitted.at(-1)).toBe('f');
    expect(backlog.bytes).toBe(90);
    releases.get('e')!();
    releases.get('f')!();
    expect(backlog.bytes).toBe(0);
  });
});

let t: TestCloud;
let edgeA: number;
let edgeB: number;
let hub: TunnelHub;
let closeHub: () => Promise<void>;
let url: string;
/** snapshots of edge A wait for this to be opened before they are stored */
let gateA: Promise<void> = Promise.resolve();
let storing: ((edgeId: number) => void) | null = null;
beforeAll(async () => {
  t = await startTestCloud();
  ({ edgeA, edgeB } = await twoEdges(t));
  const mirror = t.cloud.services.mirror;
  const tokens: Record<string, number> = { a: edgeA, b: edgeB };
  hub = mirrorHub(mirror, tokens, {
    applySnapshot: async (edgeId, seq, snapshot) => {
      storing?.(edgeId);
      if (edgeId === edgeA) await gateA;
      await mirror.replaceSnapshot(edgeId, snapshot, seq);
    },
    // one large frame at a time: any second one waits
    backlogBytes: 1,
  });
  ({ url, close: closeHub } = await serveHub(hub));
});
afterAll(async () => {
  await closeHub();
  await t.stop();
});

/** A raw edge end, welcomed; `acks` collects the sequences the cloud acknowledges. */
const hello = (token: string) => rawEdge(url, token);

/** a snapshot frame well over the connection's large-frame threshold (64 KB) */
const snapshotFrame = (seq: number, devices = 600) =>
  JSON.stringify({ type: 'snapshot', seq, data: sampleSnapshot({ devices }) });

const delta = (seq: number) =>
  JSON.stringify({
    type: 'delta',
    seq,
    delta: {
      kind: 'state',
      state: {
        entity_id: 'light.lamp_1',
        name: 'Lamp 1',
        domain: 'light',
        platform: 'demo',
        state: 'on',
        attributes: {},
      },
    },
  });

/** Holds edge A's next snapshot in applySnapshot until the returned function is called. */
async function holdA(): Promise<{ open: () => void; ws: WebSocket; acks: number[] }> {
  let open!: () => void;
  gateA = new Promise<void>((r) => (open = r));
  const a = await hello('a');
  const stored = new Promise<void>((r) => (storing = (id) => id === edgeA && r()));
  a.ws.send(snapshotFrame(0, 400));
  await stored;
  return { open, ...a };
}

describe('TunnelHub: the snapshot backlog', () => {
  it('a frame over the budget stops its tunnel being read until the backlog drains; order and acks hold', async () => {
    const a = await holdA();
    expect(hub.backlog.bytes).toBeGreaterThan(64 * 1024);
    const b = await hello('b');
    const waited = once(hub.backlog, 'wait');
    const frame = snapshotFrame(0, 2000);
    b.ws.send(frame);
    b.ws.send(delta(1)); // small: parsed at once unless a frame before it waits, as here
    const [bytes] = (await waited) as [number];
    // it took its place in the backlog before it was read whole: the rest waits in the kernel
    expect(bytes).toBeGreaterThanOrEqual(64 * 1024);
    expect(bytes).toBeLessThan(frame.length);
    expect(hub.readingPaused(edgeB)).toBe(true);
    expect(hub.readingPaused(edgeA)).toBe(false);
    expect([hub.backlog.waiting, hub.backlog.waited]).toEqual([1, 1]);
    expect(b.acks).toEqual([]);

    const admitted = once(hub.backlog, 'admit');
    a.open();
    await admitted; // A's snapshot stored and released: B's comes in, and its socket is read again
    expect(hub.readingPaused(edgeB)).toBe(false);
    await expect.poll(() => [a.acks, b.acks]).toEqual([[0], [0, 1]]);
    await expect.poll(() => hub.backlog.bytes).toBe(0);
    const mirror = t.cloud.services.mirror;
    expect(await mirror.counts([edgeA, edgeB])).toMatchObject({ devices: 2400 });
    expect(await mirror.lastSeq(edgeB)).toBe(1);
    expect((await mirror.state([edgeB], 'light.lamp_1'))?.state).toBe('on');
    a.ws.close();
    b.ws.close();
  });

  it('a tunnel replaced while its snapshot waits: that snapshot is not stored, and its room is given back', async () => {
    const a = await holdA();
    const old = await hello('b');
    const before = await t.cloud.services.mirror.lastSeq(edgeB);
    const waited = once(hub.backlog, 'wait');
    old.ws.send(snapshotFrame(7, 2000));
    await waited;
    const b = await hello('b'); // the edge reconnected: the waiting tunnel is closed
    a.open();
    await expect.poll(() => a.acks).toEqual([0]);
    await expect.poll(() => [hub.backlog.bytes, hub.backlog.waiting]).toEqual([0, 0]);
    expect(await t.cloud.services.mirror.lastSeq(edgeB)).toBe(before);
    expect(old.acks).toEqual([]);
    a.ws.close();
    b.ws.close();
    old.ws.terminate();
  });

  it('a snapshot of tens of KB takes room too (a home of 100 entities is ~58 KB): the next one waits for it', async () => {
    let open!: () => void;
    gateA = new Promise<void>((r) => (open = r));
    const a = await hello('a');
    const stored = new Promise<void>((r) => (storing = (id) => id === edgeA && r()));
    a.ws.send(snapshotFrame(0, 80)); // 30 KB
    await stored;
    expect(hub.backlog.bytes).toBeGreaterThan(16 * 1024);
    const b = await hello('b');
    const waited = once(hub.backlog, 'wait');
    b.ws.send(snapshotFrame(0, 80));
    await waited;
    expect(hub.readingPaused(edgeB)).toBe(true);
    open();
    await expect.poll(() => [a.acks, b.acks]).toEqual([[0], [0]]);
    await expect.poll(() => hub.backlog.bytes).toBe(0);
    a.ws.close();
    b.ws.close();
  });
});
