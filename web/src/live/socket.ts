import {
  ERR_CANNOT_CONNECT,
  ERR_INVALID_AUTH,
  type ConnectionOptions,
  type HaWebSocket,
} from 'home-assistant-js-websocket';
import type { HaAuth } from '@smarthome/protocol/ha/messages';
import { expired } from '../api/token.ts';

/**
 * The auth phase of `/api/websocket` for home-assistant-js-websocket's `createSocket` option. The
 * library's own createSocket sends `{type: "auth", access_token}` from an `Auth` whose refresh is
 * HA's OAuth (`/auth/token`, form-encoded); the portal needs its own bearer (the cloud's access
 * token or the edge's local session token), the cloud's `organization_id` (the scope, as
 * X-Organization-Id) and the cloud's refresh flow. Everything after auth_ok is the library's.
 */
export interface PortalAuth {
  /** ws(s)://host/api/websocket */
  wsUrl: string;
  /** the session's bearer now; null when signed out */
  accessToken(): string | null;
  /** the organization scope the portal selected; null: everything the user reaches */
  organizationId(): string | null;
  /** the portal's refresh flow (the cloud's refresh token); false when there is none or it failed */
  refresh(): Promise<boolean>;
}

/**
 * Same contract as the library's createSocket: resolves with a socket past auth_ok (haVersion set,
 * `supported_features` sent as id 1), retries every second `options.setupRetry` times (-1: forever),
 * rejects ERR_INVALID_AUTH (the library then stops reconnecting) or ERR_CANNOT_CONNECT.
 */
export function portalSocket(
  auth: PortalAuth,
  connectTimeout = 10_000,
): (options: ConnectionOptions) => Promise<HaWebSocket> {
  return (options) =>
    new Promise((resolve, reject) => {
      // one refresh per attempt to connect: a refreshed token refused again is not retried
      let refreshed = false;
      const refreshOnce = async () => {
        if (refreshed) return false;
        refreshed = true;
        return auth.refresh();
      };

      const connect = (triesLeft: number) => {
        // signed out (or the portal closed the live client) while retrying: no more sockets
        if (!auth.accessToken()) return reject(ERR_INVALID_AUTH);
        const socket = new WebSocket(auth.wsUrl) as HaWebSocket;
        let invalidAuth = false;
        /** after auth_invalid: whether a refreshed token is worth another try (the server closes meanwhile) */
        let retryAfterRefresh: Promise<boolean> | null = null;
        // a stalled connect emits neither open nor close
        const timer = setTimeout(() => socket.close(), connectTimeout);
        const onClose = () => {
          clearTimeout(timer);
          socket.removeEventListener('close', onClose);
          socket.removeEventListener('error', onClose);
          if (retryAfterRefresh)
            void retryAfterRefresh.then((ok) => (ok ? connect(triesLeft) : reject(ERR_INVALID_AUTH)));
          else if (invalidAuth) reject(ERR_INVALID_AUTH);
          else if (triesLeft === 0) reject(ERR_CANNOT_CONNECT);
          else setTimeout(() => connect(triesLeft === -1 ? -1 : triesLeft - 1), 1000);
        };
        const onOpen = () => void sendAuth();
        const sendAuth = async () => {
          clearTimeout(timer);
          let token = auth.accessToken();
          if (token && expired(token) && (await refreshOnce())) token = auth.accessToken();
          if (!token) {
            invalidAuth = true;
            socket.close();
            return;
          }
          const org = auth.organizationId();
          const message: HaAuth = { type: 'auth', access_token: token, ...(org ? { organization_id: org } : {}) };
          socket.send(JSON.stringify(message));
        };
        const onMessage = (event: MessageEvent) => {
          let message: { type?: unknown; ha_version?: unknown };
          try {
            message = JSON.parse(String(event.data)) as typeof message;
          } catch {
            return;
          }
          if (message.type === 'auth_invalid') {
            // expired since the check above, or rotated by a refresh elsewhere: once with a fresh token
            retryAfterRefresh = refreshOnce();
            socket.close();
          } else if (message.type === 'auth_ok') {
            socket.removeEventListener('open', onOpen);
            socket.removeEventListener('message', onMessage);
            socket.removeEventListener('close', onClose);
            socket.removeEventListener('error', onClose);
            socket.haVersion = String(message.ha_version);
            // the library counts command ids from 2: 1 is this one
            socket.send(JSON.stringify({ id: 1, type: 'supported_features', features: { coalesce_messages: 1 } }));
            resolve(socket);
          }
        };
        socket.addEventListener('open', onOpen);
        socket.addEventListener('message', onMessage);
        socket.addEventListener('close', onClose);
        socket.addEventListener('error', onClose);
      };
      connect(options.setupRetry);
    });
}
