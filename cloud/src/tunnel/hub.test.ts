import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { tunnel } from '@smarthome/protocol';
import { createLogger } from '../log.ts';
import { MirrorWriter } from '../mirror/writer.ts';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { helloFrame, mirrorHub, rawEdge, serveHub } from '../testing/tunnel-hub.ts';
import { sampleSnapshot, twoEdges } from '../testing/fixtures.ts';
import { until } from '../testing/until.ts';
import { TunnelHub } from './hub.ts';

let t: TestCloud;
let edgeA: number;
let edgeB: number;
let hub: TunnelHub;
let writer: MirrorWriter;
let closeHub: () => Promise<void>;
let url: string;
beforeAll(async () => {
  t = await startTestCloud();
  ({ edgeA, edgeB } = await twoEdges(t));
  const mirror = t.cloud.services.mirror;
  writer = new MirrorWriter(t.cloud.database, mirror);
  const tokens: Record<string, number> = { a: edgeA, b: edgeB };
  // the cloud's own mirror and database behind a hub of the test's, so the writer can be watched
  hub = mirrorHub(mirror, tokens, {
    applyDeltas: (edgeId, lastSeq, deltas, oldStates) => writer.applyDeltas(edgeId, deltas, lastSeq, oldStates),
  });
  ({ url, close: closeHub } = await serveHub(hub));
});
afterAll(async () => {
  await closeHub();
  await t.stop();
});

/** A raw edge end that has said hello and been welcomed; `messages` collects what the cloud sends (welcome included). */
async function hello(token: string, onAck: (seq: number) => void = () => {}) {
  const messages: tunnel.CloudToEdge[] = [];
  const waiting = new Map<number, () => void>();
  const { ws } = await rawEdge(url, token, (msg) => {
    messages.push(msg);
    if (msg.type !== 'ack') return;
    onAck(msg.seq);
    waiting.get(msg.seq)?.();
  });
  const acked = (seq: number) => new Promise<void>((r) => waiting.set(seq, r));
  return { ws, messages, acked };
}

/** A raw edge end: says hello, sends a snapshot at seq 0 and waits for its ack. */
async function edge(token: string, onAck: (seq: number) => void): Promise<WebSocket> {
  const { ws, acked } = await hello(token, onAck);
  const synced = acked(0);
  ws.send(JSON.stringify({ type: 'snapshot', seq: 0, data: sampleSnapshot({ devices: 1 }) }));
  await synced;
  return ws;
}

const delta = (seq: number, value: string) =>
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
        state: value,
        attributes: {},
      },
    },
  });

describe('TunnelHub with the mirror writer', () => {
  it("acknowledges a delta only after the commit that holds it (acknowledged means durable), for every edge's acks", async () => {
    const events: string[] = [];
    const name = (id: number) => (id === edgeA ? 'A' : 'B');
    writer.on('commit', (edges: number[]) => events.push(...edges.map((e) => `commit ${name(e)}`)));
    const lastAck = new Map<string, number>();
    const acks = (label: string) => (seq: number) => {
      if (seq === 0) return;
      events.push(`ack ${label}`);
      lastAck.set(label, seq);
    };
    const a = await edge('a', acks('A'));
    const b = await edge('b', acks('B'));
    for (let seq = 1; seq <= 20; seq++) {
      a.send(delta(seq, seq % 2 ? 'on' : 'off'));
      b.send(delta(seq, seq % 2 ? 'off' : 'on'));
    }
    await expect.poll(() => [lastAck.get('A'), lastAck.get('B')]).toEqual([20, 20]);
    // each ack follows a commit of its edge that it has not already been matched with
    const open = { A: 0, B: 0 };
    for (const ev of events) {
      const [what, who] = ev.split(' ') as ['commit' | 'ack', 'A' | 'B'];
      if (what === 'commit') open[who] += 1;
      else {
        expect(open[who], `${ev} before its commit in ${events.join(', ')}`).toBeGreaterThan(0);
        open[who] -= 1;
      }
    }
    expect(await t.cloud.services.mirror.lastSeq(edgeA)).toBe(20);
    expect(await t.cloud.services.mirror.lastSeq(edgeB)).toBe(20);
    expect((await t.cloud.services.mirror.state([edgeB], 'light.lamp_1'))?.state).toBe('on');
    a.close();
    b.close();
  });

  it('closes a tunnel that has not said hello yet when its edge is revoked, and never counts it online', async () => {
    hub.disconnect(edgeB, 'revoked'); // the earlier tests' tunnels of edge B
    await until(() => !hub.isOnline(edgeB));
    const silent = new WebSocket(url, { headers: { authorization: 'Bearer b' } });
    await new Promise((r) => silent.once('open', r));
    const closed = new Promise<number>((r) => silent.once('close', (code) => r(code)));
    expect(hub.isOnline(edgeB)).toBe(false);
    hub.disconnect(edgeB, 'revoked');
    expect(await closed).toBe(4003);
  });

  it('a snapshot with a bad item is refused with a protocol error naming the item; the mirror keeps what it had', async () => {
    const mirror = t.cloud.services.mirror;
    const before = await mirror.lastSeq(edgeA);
    const { ws, messages } = await hello('a');
    const snapshot = sampleSnapshot({ devices: 600 });
    const bad = { ...snapshot, states: snapshot.states.map((s, i) => (i === 550 ? { ...s, state: 1 } : s)) };
    ws.send(JSON.stringify({ type: 'snapshot', seq: 99, data: bad }));
    await expect
      .poll(() => messages.find((m) => m.type === 'error'))
      .toMatchObject({
        code: 'protocol_error',
        message: expect.stringMatching(/^data\.states\[550\]\.state: /),
      });
    expect(messages.some((m) => m.type === 'ack')).toBe(false);
    expect(await mirror.lastSeq(edgeA)).toBe(before);
    // the same edge's valid snapshot of that size is taken; a small delta sent right after it (parsed
    // at once, where the large frame waits for a slice) still applies after it
    ws.send(JSON.stringify({ type: 'snapshot', seq: 100, data: snapshot }));
    ws.send(delta(101, 'on'));
    await expect
      .poll(() => messages.filter((m) => m.type === 'ack'))
      .toEqual([
        { type: 'ack', seq: 100 },
        { type: 'ack', seq: 101 },
      ]);
    expect(await mirror.counts([edgeA])).toMatchObject({ devices: 600, entities: 600 });
    expect((await mirror.state([edgeA], 'light.lamp_1'))?.state).toBe('on');
    expect(await mirror.lastSeq(edgeA)).toBe(101);
    ws.close();
  });
});

describe('TunnelHub stopping', () => {
  it('answers an edge reconnecting while it stops 503 shutting_down (try again), not 404', async () => {
    // markOffline slow, as on PostgreSQL with many edges: stop() waits for it
    let releaseOffline!: () => void;
    const offline = new Promise<void>((r) => (releaseOffline = r));
    const stopping = new TunnelHub({
      log: createLogger('test', { silent: true }),
      authenticateEdge: async (token) => (token === 'a' ? { id: edgeA } : null),
      lastSeq: async () => null,
      applySnapshot: async () => {},
      applyDeltas: async () => [],
      markOnline: async () => {},
      markOffline: () => offline,
    });
    const served = await serveHub(stopping);
    const connect = () => new WebSocket(served.url, { headers: { authorization: 'Bearer a' } });
    const first = connect();
    await new Promise((r) => first.once('open', r));
    // connected: welcomed after its hello (an upgrade that never says hello is not the edge's tunnel yet)
    const welcomed = new Promise((r) => first.once('message', r));
    first.send(helloFrame(null));
    await welcomed;
    const closed = new Promise<number>((r) => first.once('close', (code) => r(code)));
    const stopped = stopping.stop();
    expect(await closed).toBe(1001);

    const again = connect();
    again.on('error', () => {}); // terminating the refused handshake reports one
    const answer = await new Promise<{ status: number; body: string; retryAfter: unknown }>((resolve) =>
      again.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body, retryAfter: res.headers['retry-after'] }));
      }),
    );
    again.terminate();
    expect(answer).toEqual({ status: 503, body: '{"error":"shutting_down"}', retryAfter: '1' });
    releaseOffline();
    await stopped;
    await served.close();
  });
});
