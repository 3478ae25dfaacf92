import { WebSocketServer, type WebSocket } from 'ws';
import type { UpgradeRegistry } from '@smarthome/protocol/server';
import { z } from 'zod';
import { HaSession, command, type HaCommands } from '@smarthome/protocol/server/ha/index';
import type { Logger } from '../log.ts';
import type { EdgeEvent, StateChanged, TriggerFired, TunnelHub } from '../tunnel/hub.ts';
import type { SessionRegistry } from '../websocket/sessions.ts';
import type { CloudHaBackend, CloudHaPrincipal } from './backend.ts';

export const HA_WEBSOCKET_PATH = '/api/websocket';

/**
 * Home Assistant's WebSocket API on the cloud: one HaSession per socket on `/api/websocket`.
 * Authenticated sessions join the SessionRegistry, like the app socket's: revoking the PAT or
 * the refresh family, a password change or the token's expiry ends them at once (auth_invalid,
 * close 4001), even while the client sends nothing.
 */
export class CloudHaSocketServer {
  private readonly backend: CloudHaBackend;
  private readonly log: Logger;
  private readonly registry: SessionRegistry;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  private readonly sockets = new Map<WebSocket, { session: HaSession<CloudHaPrincipal>; unregister: () => void }>();
  private readonly hub: TunnelHub;
  /** auth/current_user names the cloud user (the shared command answers for an anonymous API token) */
  private readonly commands: HaCommands<CloudHaPrincipal> = {
    'auth/current_user': command(z.object({ id: z.number().int(), type: z.literal('auth/current_user') }), (session) =>
      this.backend.currentUser(session.principal as CloudHaPrincipal),
    ) as HaCommands<CloudHaPrincipal>[string],
  };
  private upgrades: UpgradeRegistry | null = null;
  private readonly onStateChanged = (e: StateChanged) => {
    this.backend.fanOut(e).catch((err) => this.log.error('ha state_changed fan-out failed', err));
  };
  private readonly onEdgeEvent = (e: EdgeEvent) => {
    this.backend.fanOutEvent(e).catch((err) => this.log.error('ha edge event fan-out failed', err));
  };
  private readonly onTrigger = (e: TriggerFired) => {
    this.backend.triggerFired(e).catch((err) => this.log.error('ha trigger fan-out failed', err));
  };
  private readonly onEdgeOnline = (edgeId: number) => {
    this.backend.edgeOnline(edgeId).catch((err) => this.log.error('ha trigger re-arming failed', err));
  };

  /** deps.hub: this replica's tunnels (the other replicas' events reach the backend's fanOut* through the cluster) */
  constructor(deps: { backend: CloudHaBackend; hub: TunnelHub; log: Logger; sessions: SessionRegistry }) {
    this.backend = deps.backend;
    this.hub = deps.hub;
    this.log = deps.log;
    this.registry = deps.sessions;
  }

  start(upgrades: UpgradeRegistry): void {
    this.upgrades = upgrades;
    this.backend.start();
    this.hub.on('state_changed', this.onStateChanged);
    this.hub.on('edge_event', this.onEdgeEvent);
    this.hub.on('ha_trigger', this.onTrigger);
    this.hub.on('edge_online', this.onEdgeOnline);
    upgrades.register(HA_WEBSOCKET_PATH, (req, socket, head) => {
      socket.on('error', () => socket.destroy());
      this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws));
    });
  }

  stop(): void {
    this.upgrades?.unregister(HA_WEBSOCKET_PATH);
    this.upgrades = null;
    this.hub.off('state_changed', this.onStateChanged);
    this.hub.off('edge_event', this.onEdgeEvent);
    this.hub.off('ha_trigger', this.onTrigger);
    this.hub.off('edge_online', this.onEdgeOnline);
    for (const [socket, entry] of this.sockets) {
      entry.unregister();
      entry.session.close();
      socket.close(1001, 'going away');
    }
    this.sockets.clear();
    this.backend.stop();
    this.wss.close();
  }

  private attach(socket: WebSocket): void {
    const send = (text: string) => {
      if (socket.readyState === socket.OPEN) socket.send(text);
    };
    const session = new HaSession<CloudHaPrincipal>({
      backend: this.backend,
      log: this.log,
      commands: this.commands,
      transport: { send, close: (code, reason) => socket.close(code, reason) },
    });
    const entry = { session, unregister: () => {} };
    this.sockets.set(socket, entry);
    socket.on('close', () => {
      entry.unregister();
      session.close();
      this.sockets.delete(socket);
    });
    socket.on('error', () => socket.terminate());
    let registered = false;
    socket.on(
      'message',
      (data) =>
        void session
          .receive(data.toString())
          .then(() => {
            // the auth phase ended with a principal: from now on revocation and expiry end the session
            if (registered || !session.authenticated || socket.readyState !== socket.OPEN) return;
            registered = true;
            const p = session.principal;
            entry.unregister = this.registry.add(
              { userId: p.userId, credential: p.credential, expiresAt: p.expiresAt },
              {
                end: (why) => {
                  session.close();
                  // after what the session already queued (its auth_ok or last result)
                  setImmediate(() => {
                    send(JSON.stringify({ type: 'auth_invalid', message: why.message }));
                    socket.close(4001, why.reason);
                  });
                },
                // its event listeners' scope is indexed (events.ts): dropped now, reloaded for the next event
                accessChanged: () => this.backend.accessChanged(p),
              },
            );
          })
          .catch((err) => this.log.error('ha websocket: message failed', err)),
    );
    // HA gives an unauthenticated socket 10 s
    setTimeout(() => {
      if (!session.authenticated && socket.readyState === socket.OPEN) socket.close(4001, 'auth timeout');
    }, 10_000).unref();
    session.open();
  }
}
