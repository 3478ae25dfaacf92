import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { tunnel } from '@smarthome/protocol';
import { ConnectionAdmission } from '@smarthome/protocol/server';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { helloFrame, mirrorHub, serveHub } from '../testing/tunnel-hub.ts';
import { until } from '../testing/until.ts';
import { sampleSnapshot, twoEdges } from '../testing/fixtures.ts';

let t: TestCloud;
let edgeA: number;
let edgeB: number;
let admission: ConnectionAdmission;
let url: string;
let close: () => Promise<void>;
beforeAll(async () => {
  t = await startTestCloud();
  ({ edgeA, edgeB } = await twoEdges(t));
  await t.cloud.services.mirror.replaceSnapshot(edgeA, sampleSnapshot({ devices: 1 }), 5);
  // one tunnel opening at a time, and no release by time within the test
  admission = new ConnectionAdmission({ maxOpening: 1, holdMs: 60_000 });
  ({ url, close } = await serveHub(mirrorHub(t.cloud.services.mirror, { a: edgeA, b: edgeB }), admission));
});
afterAll(async () => {
  await close();
  await t.stop();
});

/** A tunnel whose cloud messages are collected; `first(type)` resolves with the first of that type. */
function tunnelTo(token: string) {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const messages: tunnel.CloudToEdge[] = [];
  const waiters: { type: string; resolve: (m: tunnel.CloudToEdge) => void }[] = [];
  ws.on('message', (data) => {
    const msg = tunnel.CloudToEdge.parse(JSON.parse(String(data)));
    messages.push(msg);
    for (const w of waiters.filter((x) => x.type === msg.type)) w.resolve(msg);
  });
  const first = (type: string) =>
    new Promise<tunnel.CloudToEdge>((resolve) => {
      const seen = messages.find((m) => m.type === type);
      if (seen) resolve(seen);
      else waiters.push({ type, resolve });
    });
  const hello = (resumeFrom: number | null) => ws.send(helloFrame(resumeFrom));
  return { ws, first, hello };
}

describe('the tunnel under admission at accept (#19)', () => {
  it('counts a tunnel as opening until its hello is answered; the next waits unread until then', async () => {
    const a = tunnelTo('a');
    await once(a.ws, 'open');
    expect(admission.openingCount).toBe(1);
    const b = tunnelTo('b');
    let bOpen = false;
    b.ws.once('open', () => (bOpen = true));
    await until(() => admission.queued >= 1, 2000);
    await new Promise((r) => setTimeout(r, 100));
    expect([admission.queued, bOpen]).toEqual([1, false]);
    // a resumes (its mirror is at seq 5): welcomed, it has opened, and b is read
    a.hello(5);
    expect(await a.first('welcome')).toMatchObject({ type: 'welcome', edge_id: edgeA, acked_seq: 5 });
    await once(b.ws, 'open');
    expect(admission.queued).toBe(0);
    // b has no mirror: welcomed with acked_seq null (a snapshot asked for), which opens it too
    b.hello(null);
    expect(await b.first('welcome')).toMatchObject({ type: 'welcome', edge_id: edgeB, acked_seq: null });
    await until(() => admission.openingCount === 0, 2000);
    expect(admission.openingCount).toBe(0);
    a.ws.close();
    b.ws.close();
  });

  it("keeps the edge's tunnel when an attempt it gave up on is handed over later; a tunnel that says hello replaces it", async () => {
    // the attempt given up on: accepted first, its request read late (under a storm: accepted late
    // after a full listen queue, or read after newer ones), after the edge's reconnection was welcomed
    const { port, pathname } = new URL(url);
    const stale = net.connect(Number(port), '127.0.0.1');
    await once(stale, 'connect');
    const staleBytes: Buffer[] = [];
    stale.on('data', (chunk: Buffer) => staleBytes.push(chunk));
    const fresh = tunnelTo('a');
    await once(fresh.ws, 'open');
    fresh.hello(5);
    expect(await fresh.first('welcome')).toMatchObject({ type: 'welcome', edge_id: edgeA });
    let freshClosed: number | null = null;
    fresh.ws.once('close', (code) => (freshClosed = code));
    stale.write(
      `GET ${pathname} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer a\r\n\r\n',
    );
    // switched, but it says no hello: the edge's tunnel is still the reconnection's, open and served
    await until(() => Buffer.concat(staleBytes).toString('latin1').startsWith('HTTP/1.1 101 '), 5000);
    await new Promise((r) => setTimeout(r, 200));
    expect(freshClosed).toBeNull();
    expect(fresh.ws.readyState).toBe(WebSocket.OPEN);
    stale.destroy();

    // a reconnection that says hello does replace the tunnel it finds (a stale one, after a NAT drop)
    const next = tunnelTo('a');
    await once(next.ws, 'open');
    next.hello(5);
    expect(await next.first('welcome')).toMatchObject({ type: 'welcome', edge_id: edgeA });
    await until(() => freshClosed !== null, 2000);
    expect(freshClosed).toBe(4000);
    next.ws.close();
  });
});
