import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { ws as proto, type EntityState } from '@smarthome/protocol';
import {
  HttpError,
  JsonTooDeepError,
  describeZodError,
  parseJson,
  type UpgradeRegistry,
} from '@smarthome/protocol/server';
import type { Logger } from '../log.ts';
import type { EdgeEvent, StateChanged, TunnelHub } from '../tunnel/hub.ts';
import { Audience, type Viewer } from './audience.ts';
import type { Visibility } from './interest.ts';
import { TOKEN_EXPIRED, type SessionCredential, type SessionEnd, type SessionRegistry } from './sessions.ts';

export type { Visibility } from './interest.ts';

export const APP_SOCKET_PATH = '/v1/websocket';
const HA_VERSION = '2026.11.0';

/** The app-facing operations the socket needs (the same ones the HTTP routes use). */
export interface AppApi {
  /** the token's user and credential, or null when it is not (or no longer) valid */
  authenticate(token: string): Promise<SessionCredential | null>;
  visibility(userId: string): Promise<Visibility>;
  states(userId: string): Promise<EntityState[]>;
  callService(userId: string, domain: string, service: string, data: Record<string, unknown>): Promise<unknown>;
}

interface Session extends Viewer {
  /** what the session authenticated with: checked again before every command */
  token: string | null;
  expiresAt: number | null;
  subscriptions: Map<number, string | undefined>;
  /** leaves the session registry (set once authenticated) */
  unregister: () => void;
}

/**
 * Home Assistant-style app WebSocket: auth, subscribe_events (state_changed filtered to
 * what the caller may view), unsubscribe_events, get_states, call_service, ping.
 */
export class AppSocketServer {
  private readonly hub: TunnelHub;
  private readonly api: AppApi;
  private readonly log: Logger;
  private readonly registry: SessionRegistry;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 256 * 1024 });
  private readonly sessions = new Map<WebSocket, Session>();
  /** authenticated sessions by what they may see: a state change visits only those concerned */
  private readonly audience: Audience<Session, WebSocket>;
  private upgrades: UpgradeRegistry | null = null;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head);
  private readonly onStateChanged = (e: StateChanged) => {
    this.fanOut(e).catch((err) => this.log.error('state_changed fan-out failed', err));
  };
  private readonly onEdgeEvent = (e: EdgeEvent) => {
    this.fanOutEvent(e).catch((err) => this.log.error('edge event fan-out failed', err));
  };

  /**
   * deps.sessions: where authenticated sessions register (ended on revocation and expiry, told of grant changes);
   * visibilityTtlMs: how often a session's visibility is reloaded in the background, a bound for
   * when no change notice reaches it (a notice empties it at once).
   */
  constructor(deps: { hub: TunnelHub; api: AppApi; log: Logger; sessions: SessionRegistry; visibilityTtlMs?: number }) {
    this.hub = deps.hub;
    this.api = deps.api;
    this.log = deps.log;
    this.registry = deps.sessions;
    this.audience = new Audience({
      visibility: (session) => deps.api.visibility(session.userId!),
      log: deps.log,
      ttlMs: deps.visibilityTtlMs ?? 5000,
    });
  }

  start(upgrades: UpgradeRegistry): void {
    this.upgrades = upgrades;
    upgrades.register(APP_SOCKET_PATH, this.onUpgrade);
    this.hub.on('state_changed', this.onStateChanged);
    this.hub.on('edge_event', this.onEdgeEvent);
    this.audience.start();
  }

  stop(): void {
    this.upgrades?.unregister(APP_SOCKET_PATH);
    this.hub.off('state_changed', this.onStateChanged);
    this.hub.off('edge_event', this.onEdgeEvent);
    this.audience.stop();
    for (const [socket, session] of this.sessions) {
      session.unregister();
      socket.close(1001, 'going away');
    }
    this.sessions.clear();
    this.wss.close();
  }

  /**
   * Subscribers from other replicas publish here too (see scale-out). Visits the sessions that
   * see the edge or the entity (the index), and those whose visibility a grant change emptied.
   */
  async fanOut(e: StateChanged): Promise<void> {
    const text = new Map<number, string>();
    let eventJson: string | null = null;
    const deliver = (socket: WebSocket, session: Session) => {
      for (const [id, eventType] of session.subscriptions) {
        if (eventType && eventType !== 'state_changed') continue;
        // The event is serialized once for all its sessions (when one wants it), and each message
        // around it once per subscription id (sessions mostly subscribe with the same ids).
        let out = text.get(id);
        if (out === undefined) {
          eventJson ??= JSON.stringify({
            event_type: 'state_changed',
            data: { entity_id: e.entity_id, old_state: e.old_state, new_state: e.new_state },
            time_fired: new Date().toISOString(),
          });
          text.set(id, (out = `{"id":${JSON.stringify(id)},"type":"event","event":${eventJson}}`));
        }
        this.sendText(socket, out);
      }
    };
    for (const [session, socket] of this.audience.entity(e.edgeId, e.entity_id)) {
      if (session.subscriptions.size > 0) deliver(socket, session);
    }
    this.audience.forUnknown(
      (session) => session.subscriptions.size > 0,
      (vis) => vis.edges.has(e.edgeId) || vis.entities.has(`${e.edgeId}:${e.entity_id}`),
      deliver,
    );
  }

  /**
   * An edge's other bus events (custom events, automation_triggered, call_service) go to the
   * subscribers of that event type or of all events who may view the whole edge; viewers of
   * single shared entities do not get them (they are not about one entity). Scale-out: events
   * from tunnels on other replicas are published here too.
   */
  async fanOutEvent(e: EdgeEvent): Promise<void> {
    const ids = (session: Session) =>
      [...session.subscriptions].filter(([, type]) => !type || type === e.event.event_type).map(([id]) => id);
    const deliver = (socket: WebSocket, session: Session) => {
      for (const id of ids(session)) this.send(socket, { id, type: 'event', event: e.event });
    };
    for (const [session, socket] of this.audience.wholeEdge(e.edgeId)) deliver(socket, session);
    this.audience.forUnknown(
      (session) => ids(session).length > 0,
      (vis) => vis.edges.has(e.edgeId),
      deliver,
    );
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(ws));
  }

  private attach(socket: WebSocket): void {
    const session: Session = {
      userId: null,
      token: null,
      expiresAt: null,
      ended: false,
      subscriptions: new Map(),
      visibility: null,
      loadedAt: 0,
      loading: null,
      visibilityGeneration: 0,
      unregister: () => {},
    };
    this.sessions.set(socket, session);
    socket.on('close', () => {
      session.unregister();
      this.sessions.delete(socket);
      this.audience.leave(session);
    });
    socket.on('error', () => socket.terminate());
    socket.on(
      'message',
      (data) =>
        void this.receive(socket, session, data.toString()).catch((err) => {
          this.log.error('app socket message failed', err);
        }),
    );
    // An unauthenticated socket gets 10 s to authenticate.
    setTimeout(() => {
      if (!session.userId) socket.close(4001, 'auth timeout');
    }, 10_000).unref();
    this.send(socket, { type: 'auth_required', ha_version: HA_VERSION });
  }

  /** The credential is gone: say why (auth_invalid), close with 4001 and the reason, serve nothing more. */
  private end(socket: WebSocket, session: Session, why: SessionEnd): void {
    if (session.ended) return;
    session.ended = true;
    session.unregister();
    this.audience.leave(session);
    session.subscriptions.clear();
    this.send(socket, { type: 'auth_invalid', message: why.message });
    socket.close(4001, why.reason);
  }

  /**
   * Before a command: is the credential still good? The registry ends sessions on revocation
   * already; this also covers a notice that has not arrived (yet) from another replica.
   */
  private async stillValid(socket: WebSocket, session: Session): Promise<boolean> {
    const principal = await this.api.authenticate(session.token!);
    if (session.ended) return false;
    if (principal?.userId === session.userId) return true;
    const expired = session.expiresAt !== null && session.expiresAt <= Date.now();
    this.end(socket, session, expired ? TOKEN_EXPIRED : { reason: 'token revoked', message: 'credential revoked' });
    return false;
  }

  private send(socket: WebSocket, msg: proto.WsServerMessage): void {
    this.sendText(socket, JSON.stringify(msg));
  }

  private sendText(socket: WebSocket, text: string): void {
    if (socket.readyState === socket.OPEN) socket.send(text);
  }

  private async receive(socket: WebSocket, session: Session, text: string): Promise<void> {
    if (session.ended) return;
    let raw: unknown;
    try {
      raw = parseJson(text);
    } catch (err) {
      this.send(socket, {
        id: 0,
        type: 'result',
        success: false,
        error: { code: 'invalid_format', message: err instanceof JsonTooDeepError ? err.message : 'malformed JSON' },
      });
      return;
    }
    const parsed = proto.WsClientMessage.safeParse(raw);
    const id = typeof (raw as { id?: unknown })?.id === 'number' ? (raw as { id: number }).id : 0;
    if (!parsed.success) {
      if (!session.userId) {
        this.send(socket, { type: 'auth_invalid', message: describeZodError(parsed.error) });
        socket.close(4001, 'auth invalid');
        return;
      }
      this.send(socket, {
        id,
        type: 'result',
        success: false,
        error: { code: 'invalid_format', message: describeZodError(parsed.error) },
      });
      return;
    }
    const msg = parsed.data;
    if (!session.userId) {
      if (msg.type !== 'auth') {
        this.send(socket, { type: 'auth_invalid', message: 'authenticate first' });
        socket.close(4001, 'auth required');
        return;
      }
      const principal = await this.api.authenticate(msg.access_token);
      if (!principal) {
        this.send(socket, { type: 'auth_invalid', message: 'invalid access token' });
        socket.close(4001, 'auth invalid');
        return;
      }
      // The client left, or a second auth message won, while we checked.
      if (socket.readyState !== socket.OPEN || session.userId) return;
      session.userId = principal.userId;
      session.token = msg.access_token;
      session.expiresAt = principal.expiresAt;
      this.send(socket, { type: 'auth_ok', ha_version: HA_VERSION });
      session.unregister = this.registry.add(
        { userId: principal.userId, credential: principal.credential, expiresAt: principal.expiresAt },
        {
          end: (why) => this.end(socket, session, why),
          accessChanged: () => this.audience.forget(session),
        },
      );
      // In the fan-out from now on (unless the registry ended it already); its visibility loads
      // with the first event that may concern it.
      if (!session.ended) this.audience.join(session, socket);
      return;
    }
    switch (msg.type) {
      case 'auth':
        this.send(socket, {
          id,
          type: 'result',
          success: false,
          error: { code: 'already_authenticated', message: 'already authenticated' },
        });
        return;
      case 'subscribe_events':
        session.subscriptions.set(msg.id, msg.event_type);
        this.send(socket, { id: msg.id, type: 'result', success: true, result: null });
        return;
      case 'unsubscribe_events': {
        const existed = session.subscriptions.delete(msg.subscription);
        this.send(
          socket,
          existed
            ? { id: msg.id, type: 'result', success: true, result: null }
            : {
                id: msg.id,
                type: 'result',
                success: false,
                error: { code: 'not_found', message: 'subscription not found' },
              },
        );
        return;
      }
      case 'get_states':
        if (!(await this.stillValid(socket, session))) return;
        this.send(socket, { id: msg.id, type: 'result', success: true, result: await this.api.states(session.userId) });
        return;
      case 'call_service': {
        if (!(await this.stillValid(socket, session))) return;
        const data: Record<string, unknown> = { ...msg.service_data };
        if (msg.target?.entity_id !== undefined) data.entity_id = msg.target.entity_id;
        try {
          const result = await this.api.callService(session.userId, msg.domain, msg.service, data);
          this.send(socket, { id: msg.id, type: 'result', success: true, result });
        } catch (err) {
          const e = err instanceof HttpError ? err : null;
          if (!e) this.log.error('call_service failed', err);
          const code = e
            ? e.status === 403
              ? 'unauthorized'
              : e.status === 404
                ? 'not_found'
                : e.status === 503
                  ? 'edge_offline'
                  : e.status === 504
                    ? 'timeout'
                    : 'invalid_format'
            : 'unknown_error';
          this.send(socket, {
            id: msg.id,
            type: 'result',
            success: false,
            error: { code, message: e ? e.expose : 'internal error' },
          });
        }
        return;
      }
      case 'ping':
        this.send(socket, { id: msg.id, type: 'pong' });
        return;
    }
  }
}
