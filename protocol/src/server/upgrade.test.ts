import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { UpgradeDispatcher, rejectUpgrade } from './upgrade.ts';
import { probeUpgrade } from './upgrade-probe.ts';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0))
    await new Promise<void>((r) => {
      s.closeAllConnections();
      s.close(() => r());
    });
});

/** A server owned by a dispatcher; `tellNode: false` is a Node that cannot be told which upgrades to take (before 24.9). */
async function serve(dispatcher: UpgradeDispatcher, tellNode: boolean): Promise<string> {
  const server = http.createServer(tellNode ? dispatcher.serverOptions() : {}, (_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ served: true }));
  });
  dispatcher.attach(server);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const errors: unknown[] = [];
const log = {
  error: (_msg: string, err: unknown) => {
    errors.push(err);
  },
};

describe('UpgradeDispatcher', () => {
  it('gives a WebSocket upgrade on a registered path to its handler, and only that', async () => {
    const d = new UpgradeDispatcher(log);
    const seen: string[] = [];
    d.register('/ws', (req, socket) => {
      seen.push(req.url!);
      rejectUpgrade(socket, 403, { error: 'forbidden' });
    });
    const url = await serve(d, true);
    const res = await probeUpgrade(url, '/ws?x=1', { upgrade: 'websocket' });
    expect([res.status, res.body, res.closed]).toEqual([403, { error: 'forbidden' }, true]);
    expect(seen).toEqual(['/ws?x=1']);
    // h2c on the same path, and a WebSocket upgrade elsewhere, are plain requests, closed after the answer
    for (const [path, upgrade] of [
      ['/ws', 'h2c'],
      ['/other', 'websocket'],
    ] as const) {
      const plain = await probeUpgrade(url, path, { upgrade });
      expect([plain.status, plain.body, plain.headers.connection, plain.closed]).toEqual([
        200,
        { served: true },
        'close',
        true,
      ]);
    }
    expect(seen).toHaveLength(1);
    d.unregister('/ws');
    expect((await probeUpgrade(url, '/ws', { upgrade: 'websocket' })).body).toEqual({ served: true });
  });

  it('answers 404 and closes what reaches it unclaimed where Node cannot be told (before 24.9)', async () => {
    const d = new UpgradeDispatcher(log);
    d.register('/ws', (_req, socket) => rejectUpgrade(socket, 401, { error: 'unauthorized' }));
    const url = await serve(d, false);
    for (const [path, upgrade] of [
      ['/healthz', 'websocket'],
      ['/ws', 'h2c'],
      ['/nope', 'h2c'],
    ] as const) {
      const res = await probeUpgrade(url, path, { upgrade });
      expect([path, res.status, res.body, res.closed]).toEqual([path, 404, { message: 'not found' }, true]);
    }
    expect((await probeUpgrade(url, '/ws', { upgrade: 'websocket' })).status).toBe(401);
  });

  it('answers 500 {error} and closes when a handler fails, and logs why', async () => {
    const d = new UpgradeDispatcher(log);
    d.register('/sync', () => {
      throw new Error('sync failure');
    });
    d.register('/async', async () => {
      throw new Error('async failure');
    });
    const url = await serve(d, true);
    for (const path of ['/sync', '/async']) {
      const res = await probeUpgrade(url, path, { upgrade: 'websocket' });
      expect([res.status, res.body, res.closed]).toEqual([500, { error: 'internal_error' }, true]);
    }
    expect(errors.map((e) => (e as Error).message)).toEqual(['sync failure', 'async failure']);
  });
});
