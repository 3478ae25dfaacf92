import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { tunnel } from '@smarthome/protocol';
import { TunnelClient } from '@smarthome/edge/tunnel/client';
import { DatabaseUnavailable } from '../db/database.ts';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { mirrorHub, serveHub } from '../testing/tunnel-hub.ts';
import { sampleSnapshot, twoEdges } from '../testing/fixtures.ts';
import type { TunnelHub } from './hub.ts';

/**
 * A tunnel whose database work fails (PostgreSQL away, or its pool giving no client within its
 * 5 s: what the fleet bench's first sync of 1,000 edges hit, #19). The hub runs on the test
 * cloud's own mirror (SQLite or PostgreSQL) with one failure injected; the edge is the real
 * TunnelClient. Before, the failure was only logged: a hello stayed unanswered with the socket
 * open (the edge waited for good), and a failed delta batch was covered by the next batch's
 * cumulative ack (the mirror lost it).
 */
let t: TestCloud;
let edgeId: number;
let hub: TunnelHub;
let url: string;
let closeHub: () => Promise<void>;
/** what to fail next, once */
const failNext = { markOnline: false, applyDeltas: false };

beforeAll(async () => {
  t = await startTestCloud();
  edgeId = (await twoEdges(t)).edgeA;
  const mirror = t.cloud.services.mirror;
  const unavailable = () => new DatabaseUnavailable({ cause: new Error('timeout exceeded when trying to connect') });
  hub = mirrorHub(
    mirror,
    { edge: edgeId },
    {
      applyDeltas: async (id, lastSeq, deltas) => {
        if (failNext.applyDeltas) {
          failNext.applyDeltas = false;
          throw unavailable();
        }
        return mirror.applyDeltas(id, deltas, lastSeq);
      },
      markOnline: async () => {
        if (failNext.markOnline) {
          failNext.markOnline = false;
          throw unavailable();
        }
      },
    },
  );
  ({ url, close: closeHub } = await serveHub(hub));
});
afterAll(async () => {
  await closeHub();
  await t.stop();
});

const clients: TunnelClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.stop();
});

/** The real edge client over a home of two lamps; `set` changes a lamp (a delta). */
function edge() {
  const snapshot = sampleSnapshot({ devices: 2 });
  let emit: ((d: tunnel.Delta) => void) | null = null;
  const client = new TunnelClient({
    cloudUrl: url.replace(/^ws/, 'http').replace(/\/v1\/edge\/connect$/, ''),
    token: 'edge',
    edgeVersion: 'test',
    log: { info() {}, warn() {}, error() {} },
    backoff: { initialMs: 20, maxMs: 100 },
    snapshot: () => snapshot,
    onDelta: (listener) => {
      emit = listener;
      return () => {
        emit = null;
      };
    },
    handleRequest: async () => ({ status: 404, body: null }),
  });
  clients.push(client);
  const set = (entityId: string, state: string) => {
    const i = snapshot.states.findIndex((s) => s.entity_id === entityId);
    snapshot.states[i] = { ...snapshot.states[i]!, state };
    emit?.({ kind: 'state', state: snapshot.states[i]! });
  };
  return { client, set };
}

describe('a tunnel whose database work fails', () => {
  it('a hello whose markOnline fails closes the tunnel; the edge reconnects and is welcomed', async () => {
    failNext.markOnline = true;
    let offline = 0;
    const counted = () => (offline += 1);
    hub.on('edge_offline', counted);
    const { client } = edge();
    client.start();
    await expect.poll(() => client.synced).toBe(true);
    hub.off('edge_offline', counted);
    // the failed hello's tunnel was closed by the cloud (it went offline once), the second was welcomed
    expect(offline).toBe(1);
    expect(failNext.markOnline).toBe(false);
    expect(hub.isOnline(edgeId)).toBe(true);
  });

  it("a failed delta batch is not covered by the next batch's ack: the edge resends it and the mirror has both", async () => {
    const mirror = t.cloud.services.mirror;
    const { client, set } = edge();
    client.start();
    await expect.poll(() => client.synced).toBe(true);
    expect((await mirror.state([edgeId], 'light.lamp_1'))?.state).toBe('off');
    failNext.applyDeltas = true;
    set('light.lamp_1', 'on'); // its write fails
    await expect.poll(() => failNext.applyDeltas).toBe(false);
    set('light.lamp_2', 'on'); // a later batch of the same tunnel
    await expect.poll(() => client.synced).toBe(true);
    expect((await mirror.state([edgeId], 'light.lamp_1'))?.state).toBe('on');
    expect((await mirror.state([edgeId], 'light.lamp_2'))?.state).toBe('on');
  });
});
