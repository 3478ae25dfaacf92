import { WebSocketServer, type WebSocket } from 'ws';
import type { UpgradeRegistry } from '@smarthome/protocol/server';
import { HaSession, type HaBackend } from '@smarthome/protocol/server/ha/index';
import type { Logger } from '../log.ts';

export const HA_WEBSOCKET_PATH = '/api/websocket';

/** Home Assistant's WebSocket API on the edge: one HaSession per socket, on `/api/websocket`. */
export class HaWebSocketServer<P> {
  private readonly backend: HaBackend<P>;
  private readonly log: Logger;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  private readonly sockets = new Map<WebSocket, HaSession<P>>();
  private upgrades: UpgradeRegistry | null = null;

  constructor(deps: { backend: HaBackend<P>; log: Logger }) {
    this.backend = deps.backend;
    this.log = deps.log;
  }

  start(upgrades: UpgradeRegistry): void {
    this.upgrades = upgrades;
    upgrades.register(HA_WEBSOCKET_PATH, (req, socket, head) => {
      socket.on('error', () => socket.destroy());
      this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws));
    });
  }

  stop(): void {
    this.upgrades?.unregister(HA_WEBSOCKET_PATH);
    this.upgrades = null;
    for (const [socket, session] of this.sockets) {
      session.close();
      socket.close(1001, 'going away');
    }
    this.sockets.clear();
    this.wss.close();
  }

  private attach(socket: WebSocket): void {
    const session = new HaSession<P>({
      backend: this.backend,
      log: this.log,
      transport: {
        send: (text) => {
          if (socket.readyState === socket.OPEN) socket.send(text);
        },
        close: (code, reason) => socket.close(code, reason),
      },
    });
    this.sockets.set(socket, session);
    socket.on('close', () => {
      session.close();
      this.sockets.delete(socket);
    });
    socket.on('error', () => socket.terminate());
    socket.on(
      'message',
      (data) =>
        void session.receive(data.toString()).catch((err) => this.log.error('ha websocket: message failed', err)),
    );
    // HA gives an unauthenticated socket 10 s
    setTimeout(() => {
      if (!session.authenticated && socket.readyState === socket.OPEN) socket.close(4001, 'auth timeout');
    }, 10_000).unref();
    session.open();
  }
}
