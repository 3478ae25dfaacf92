import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpgradeDispatcher } from '@smarthome/protocol/server';
import { createLogger } from '../log.ts';
import { TUNNEL_PATH, type TunnelHub } from '../tunnel/hub.ts';

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
