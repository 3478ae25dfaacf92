import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { DEFAULT_BACKOFF, TunnelClient, backoffCeiling } from './client.ts';

describe('tunnel reconnect backoff', () => {
  it('doubles from 0.5 s and caps at 10 s, so an edge is back within 10 s of the cloud coming back', () => {
    const ceilings = Array.from({ length: 30 }, (_, attempt) => backoffCeiling(attempt));
    expect(ceilings.slice(0, 7)).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(Math.max(...ceilings)).toBe(10_000);
  });

  it('waits up to 30 s after the cloud refused the token (it will not get better by retrying often)', () => {
    expect(backoffCeiling(0, DEFAULT_BACKOFF, true)).toBe(30_000);
    // a custom backoff without a refused ceiling uses its maximum
    expect(backoffCeiling(0, { initialMs: 20, maxMs: 100 }, true)).toBe(100);
  });
});

/**
 * A cloud that answers the tunnel's upgrade with an HTTP error (503 while its database is away,
 * 404 from a replica shutting down) must not leave the edge waiting for good: ws keeps a refused
 * handshake open when someone listens for 'unexpected-response', so the edge never saw a close and
 * never tried again (#19). A real HTTP server on loopback refuses twice, then welcomes.
 */
describe('tunnel reconnect after a refused upgrade', () => {
  const servers: http.Server[] = [];
  const clients: TunnelClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.stop();
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  it('tries again after a 503 and a 404 and is welcomed on the third attempt', async () => {
    const answers: number[] = [];
    const refusals = [503, 404];
    const wss = new WebSocketServer({ noServer: true });
    const server = http.createServer();
    servers.push(server);
    server.on('upgrade', (req, socket, head) => {
      const status = refusals.shift();
      answers.push(status ?? 101);
      if (status) {
        socket.end(
          `HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
        );
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) =>
        ws.once('message', () =>
          ws.send(JSON.stringify({ type: 'welcome', protocol: 1, edge_id: 7, acked_seq: null, heartbeat_ms: 5000 })),
        ),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const warnings: unknown[] = [];
    const client = new TunnelClient({
      cloudUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      token: 'edge-token',
      edgeVersion: 'test',
      log: { info() {}, warn: (msg, fields) => warnings.push({ msg, ...fields }), error() {} },
      backoff: { initialMs: 20, maxMs: 100 },
      snapshot: () => ({ devices: [], entities: [], states: [], config_entries: [], automations: [] }),
      onDelta: () => () => {},
      handleRequest: async () => ({ status: 404, body: null }),
    });
    clients.push(client);
    client.start();
    await expect.poll(() => client.welcomed, { timeout: 5000 }).toBe(true);
    expect(answers).toEqual([503, 404, 101]);
    expect(client.edgeId).toBe(7);
    // each refusal logged once, with its status (not again as a socket error)
    expect(warnings).toEqual([
      { msg: 'cloud refused the tunnel', status: 503 },
      { msg: 'cloud refused the tunnel', status: 404 },
    ]);
  });
});
