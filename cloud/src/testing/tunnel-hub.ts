import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpgradeDispatcher } from '@smarthome/protocol/server';
import { createLogger } from '../log.ts';
import type { MirrorStore } from '../mirror/store.ts';
import { TUNNEL_PATH, TunnelHub, type TunnelDeps } from '../tunnel/hub.ts';

/**
 * A TunnelHub of the test's own over the test cloud's mirror: edges authenticate by the tokens
 * given (token → edge id), snapshots and deltas go to the mirror, online/offline marks do nothing;
 * `overrides` replace any of these (a gate before a snapshot is stored, a failure, a budget).
 */
export function mirrorHub(mirror: MirrorStore, tokens: Record<string, number>, overrides: Partial<TunnelDeps> = {}) {
  return new TunnelHub({
    log: createLogger('test', { silent: true }),
    authenticateEdge: async (token) => (tokens[token] ? { id: tokens[token] } : null),
    lastSeq: (edgeId) => mirror.lastSeq(edgeId),
    applySnapshot: (edgeId, seq, snapshot) => mirror.replaceSnapshot(edgeId, snapshot, seq),
    applyDeltas: (edgeId, lastSeq, deltas) => mirror.applyDeltas(edgeId, deltas, lastSeq),
    markOnline: async () => {},
    markOffline: async () => {},
    ...overrides,
  });
}

/** A test's own TunnelHub served over loopback: its ws:// URL, and close() stopping hub then server. */
export async function serveHub(hub: TunnelHub): Promise<{ url: string; close: () => Promise<void> }> {
  const upgrades = new UpgradeDispatcher(createLogger('test', { silent: true }));
  const server = http.createServer(upgrades.serverOptions(), (_req, res) => res.writeHead(404).end());
  upgrades.attach(server);
  hub.start(upgrades);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}${TUNNEL_PATH}`,
    close: async () => {
      await hub.stop();
      await new Promise((r) => server.close(r));
    },
  };
}
