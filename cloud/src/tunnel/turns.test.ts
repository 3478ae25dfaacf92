import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { tunnel } from '@smarthome/protocol';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { helloFrame, mirrorHub, serveHub } from '../testing/tunnel-hub.ts';
import { sampleSnapshot, twoEdges } from '../testing/fixtures.ts';
import type { TunnelHub } from './hub.ts';
import { SnapshotTurns } from './turns.ts';

type Welcome = Extract<tunnel.CloudToEdge, { type: 'welcome' }>;

describe('SnapshotTurns', () => {
  it('grants turns up to its max, then first come first served; an aborted wait leaves the queue', async () => {
    const turns = new SnapshotTurns(2);
    const never = new AbortController().signal;
    const a = await turns.take(never);
    const b = await turns.take(never);
    expect(turns.active).toBe(2);
    const gone = new AbortController();
    const order: string[] = [];
    const c = turns.take(gone.signal).then((r) => (order.push('c'), r));
    const d = turns.take(never).then((r) => (order.push('d'), r));
    expect([turns.waiting, turns.waited]).toEqual([2, 2]);
    gone.abort();
    expect(await c).toBeNull();
    expect(turns.waiting).toBe(1);
    a!();
    a!(); // twice is harmless
    const dRelease = await d;
    expect(order).toEqual(['c', 'd']);
    expect([turns.active, turns.waiting]).toEqual([2, 0]);
    b!();
    dRelease!();
    expect(turns.active).toBe(0);
  });

  it('a turn comes back on its own after the timeout', async () => {
    const turns = new SnapshotTurns(1, 20);
    await turns.take(new AbortController().signal);
    const next = await turns.take(new AbortController().signal);
    expect(next).toBeTypeOf('function');
    expect(turns.waited).toBe(1);
  });
});

let t: TestCloud;
let edgeA: number;
let edgeB: number;
let edgeC: number;
let hub: TunnelHub;
let closeHub: () => Promise<void>;
let url: string;
/** edge A's snapshots wait in applySnapshot until this opens */
let gateA: Promise<void> = Promise.resolve();
beforeAll(async () => {
  t = await startTestCloud();
  ({ edgeA, edgeB } = await twoEdges(t));
  const owner = await t.user();
  edgeC = (await t.cloud.services.edges.create({ kind: 'personal', userId: owner.id, orgId: null }, { name: 'C' })).edge
    .id;
  const mirror = t.cloud.services.mirror;
  const tokens: Record<string, number> = { a: edgeA, b: edgeB, c: edgeC };
  hub = mirrorHub(mirror, tokens, {
    applySnapshot: async (edgeId, seq, snapshot) => {
      if (edgeId === edgeA) await gateA;
      await mirror.replaceSnapshot(edgeId, snapshot, seq);
    },
    // one edge at a time may be asked for its snapshot
    snapshotTurns: 1,
  });
  ({ url, close: closeHub } = await serveHub(hub));
});
afterAll(async () => {
  await closeHub();
  await t.stop();
});

/** A raw edge end that has said hello; `welcome` resolves with the cloud's welcome. */
async function connect(token: string, resumeFrom: number | null) {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const acks: number[] = [];
  let welcomed!: (w: Welcome) => void;
  const welcome = new Promise<Welcome>((r) => (welcomed = r));
  let isWelcomed = false;
  ws.on('message', (data) => {
    const msg = tunnel.CloudToEdge.parse(JSON.parse(String(data)));
    if (msg.type === 'welcome') {
      isWelcomed = true;
      welcomed(msg);
    }
    if (msg.type === 'ack') acks.push(msg.seq);
  });
  await once(ws, 'open');
  ws.send(helloFrame(resumeFrom));
  return { ws, acks, welcome, welcomed: () => isWelcomed };
}

const snapshotFrame = (seq: number) => JSON.stringify({ type: 'snapshot', seq, data: sampleSnapshot({ devices: 3 }) });

describe('TunnelHub: an edge that needs a snapshot is welcomed when it has a turn', () => {
  it('the second edge waits until the first one’s snapshot is stored; an edge that can resume is welcomed at once', async () => {
    const mirror = t.cloud.services.mirror;
    await mirror.replaceSnapshot(edgeC, sampleSnapshot({ devices: 1 }), 5);
    let open!: () => void;
    gateA = new Promise<void>((r) => (open = r));

    const a = await connect('a', null);
    expect((await a.welcome).acked_seq).toBeNull();
    a.ws.send(snapshotFrame(0));
    await expect.poll(() => hub.turns.active).toBe(1);

    const waits = once(hub.turns, 'wait');
    const b = await connect('b', null);
    await waits;
    expect(hub.turns.waiting).toBe(1);

    const c = await connect('c', 5); // its mirror is at 5: no snapshot, no turn
    expect((await c.welcome).acked_seq).toBe(5);
    expect(b.welcomed()).toBe(false);
    expect(hub.isOnline(edgeB)).toBe(true); // connected, read, waiting

    open(); // A's snapshot is stored: B gets the turn
    expect((await b.welcome).acked_seq).toBeNull();
    expect(a.acks).toEqual([0]);
    b.ws.send(snapshotFrame(3));
    await expect.poll(() => b.acks).toEqual([3]);
    expect(await mirror.lastSeq(edgeB)).toBe(3);
    await expect.poll(() => [hub.turns.active, hub.turns.waiting]).toEqual([0, 0]);
    for (const e of [a, b, c]) e.ws.close();
  });

  it('a waiting edge that goes away leaves the queue; a welcomed one that goes away gives its turn back', async () => {
    const a = await connect('a', null);
    await a.welcome;
    expect(hub.turns.active).toBe(1);
    const waits = once(hub.turns, 'wait');
    const gone = await connect('b', null);
    await waits;
    gone.ws.terminate();
    await expect.poll(() => hub.turns.waiting).toBe(0);
    expect(gone.welcomed()).toBe(false);

    const waitsAgain = once(hub.turns, 'wait');
    const b = await connect('b', null);
    await waitsAgain;
    a.ws.terminate(); // asked for its snapshot, it never sent one: B need not wait for the timeout
    expect((await b.welcome).acked_seq).toBeNull();
    b.ws.send(snapshotFrame(1));
    await expect.poll(() => b.acks).toEqual([1]);
    await expect.poll(() => hub.turns.active).toBe(0);
    b.ws.close();
  });
});
