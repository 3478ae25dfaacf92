import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { tunnel } from '@smarthome/protocol';
import { UpgradeDispatcher, type ConnectionAdmission } from '@smarthome/protocol/server';
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
    applyDeltas: (edgeId, lastSeq, deltas, oldStates) => mirror.applyDeltas(edgeId, deltas, lastSeq, oldStates),
    markOnline: async () => {},
    markOffline: async () => {},
    ...overrides,
  });
}

/**
 * A test's own TunnelHub served over loopback (its new connections through `admission`, when
 * given, as the cloud's are): its ws:// URL, and close() stopping hub then server.
 */
export async function serveHub(
  hub: TunnelHub,
  admission?: ConnectionAdmission,
): Promise<{ url: string; close: () => Promise<void> }> {
  const upgrades = new UpgradeDispatcher(createLogger('test', { silent: true }), admission ?? null);
  const server = http.createServer(upgrades.serverOptions(), (_req, res) => res.writeHead(404).end());
  admission?.attach(server);
  upgrades.attach(server);
  hub.start(upgrades);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}${TUNNEL_PATH}`,
    close: async () => {
      await hub.stop();
      await new Promise((r) => {
        server.close(r);
        admission?.detach();
      });
    },
  };
}

/** An edge's hello as sent on the wire (resume_from: the last sequence it had acknowledged, or null). */
export const helloFrame = (resumeFrom: number | null) =>
  JSON.stringify({
    type: 'hello',
    protocol: tunnel.TUNNEL_PROTOCOL_VERSION,
    edge_version: 't',
    resume_from: resumeFrom,
  });

/**
 * A raw edge end at `url`: says hello (no resume) and resolves once welcomed; `acks` collects the
 * sequences the cloud acknowledges, `onMessage` sees every message the cloud sends.
 */
export async function rawEdge(
  url: string,
  token: string,
  onMessage: (msg: tunnel.CloudToEdge) => void = () => {},
): Promise<{ ws: WebSocket; acks: number[] }> {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const acks: number[] = [];
  let welcomed!: () => void;
  const welcome = new Promise<void>((r) => (welcomed = r));
  ws.on('message', (data) => {
    const msg = tunnel.CloudToEdge.parse(JSON.parse(String(data)));
    if (msg.type === 'welcome') welcomed();
    if (msg.type === 'ack') acks.push(msg.seq);
    onMessage(msg);
  });
  await once(ws, 'open');
  ws.send(helloFrame(null));
  await welcome;
  return { ws, acks };
}
