import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { tunnel, type ws } from '@smarthome/protocol';
import { rejectUpgrade, toHttpError, type UpgradeRegistry } from '@smarthome/protocol/server';
import type { Logger } from '../log.ts';
import {
  EdgeConnection,
  EdgeOfflineError,
  defaultConnectionLimits,
  type ConnectionLimits,
  type RpcResult,
} from './connection.ts';
import type { EdgeEvent, RemoteTunnel, TriggerFired } from './hub-types.ts';
import { SnapshotBacklog, type Release } from './backlog.ts';
import { LoopSlices } from './slices.ts';
import { SnapshotTurns } from './turns.ts';
import { validateSnapshot, type TunnelMessage } from './snapshot.ts';
import { TunnelDeltas, type DeltaBatch, type DeltaDeps, type EdgeOrder } from './deltas.ts';

export type { EdgeEvent, RemoteTunnel, StateChanged, TriggerFired } from './hub-types.ts';

export const TUNNEL_PATH = '/v1/edge/connect';
/** a replica shutting down: the edge tries again (and a load balancer sends it to another replica) */
const refuseWhileStopping = (socket: Duplex) =>
  rejectUpgrade(socket, 503, { error: 'shutting_down' }, { 'Retry-After': '1' });
/** deltas applied in one unit at most (bounds a transaction's length) */
const MAX_DELTA_BATCH = 500;
/**
 * bytes of large frames (snapshots) being parsed, validated and stored at once: a 2,000-entity
 * snapshot is ~1.2 MB on the wire; storing is one transaction at a time on SQLite anyway
 */
export const DEFAULT_BACKLOG_BYTES = 16 * 1024 * 1024;

/** What the hub needs from the rest of the cloud (edge registry and mirror). */
export interface TunnelDeps extends DeltaDeps {
  log: Logger;
  /** resolves an edge token; null for unknown or revoked */
  authenticateEdge(token: string): Promise<{ id: number } | null>;
  /** the last sequence applied to the mirror for this edge, or null when it has no snapshot */
  lastSeq(edgeId: number): Promise<number | null>;
  applySnapshot(edgeId: number, seq: number, snapshot: tunnel.Snapshot): Promise<void>;
  markOnline(edgeId: number, hello: { edge_version: string; hostname?: string }): Promise<void>;
  markOffline(edgeId: number): Promise<void>;
  limits?: Partial<ConnectionLimits>;
  /** see SnapshotBacklog; DEFAULT_BACKLOG_BYTES when absent */
  backlogBytes?: number;
  /** see SnapshotTurns; DEFAULT_SNAPSHOT_TURNS when absent */
  snapshotTurns?: number;
}

/** What the hub keeps of one tunnel between its messages. */
interface Session extends EdgeOrder {
  greeted: boolean;
  /** aborted when the tunnel closes: a welcome waiting for its turn stops waiting */
  readonly closing: AbortController;
  /** the turn of an edge asked for its snapshot, given back once that is stored (or the tunnel ends) */
  turn: Release | null;
  /** the tunnel has opened: its hello answered, or waiting for a snapshot turn (idempotent) */
  readonly opened: () => void;
}

/**
 * The cloud end of every edge tunnel. Emits 'state_changed' (StateChanged) for the app
 * WebSocket (on arrival or after the mirror's commit: TunnelDeltas), 'state_committed' for each
 * once committed (other replicas), 'edge_event' (EdgeEvent) for the other events of edges' buses,
 * 'ha_trigger' (TriggerFired) for the HA API's trigger subscriptions, and 'edge_online' / 'edge_offline'.
 */
export class TunnelHub extends EventEmitter {
  private readonly deps: TunnelDeps;
  private readonly limits: ConnectionLimits;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  private readonly connections = new Map<number, EdgeConnection>();
  /** tunnels attached that have not said hello yet (see adopt), by edge */
  private readonly greeting = new Map<number, Set<EdgeConnection>>();
  private readonly deltas: TunnelDeltas;
  /** every tunnel's heavy parsing and validation, a bounded amount per turn of the loop */
  private readonly slices = new LoopSlices();
  /** bounds the snapshots held at once (waiting ones stay raw, their sockets unread) */
  readonly backlog: SnapshotBacklog;
  /** bounds the edges asked for a snapshot not stored yet (their welcome waits for a turn) */
  readonly turns: SnapshotTurns;
  /** serialises each edge's mirror writes so deltas apply in order */
  private readonly queues = new Map<number, Promise<void>>();
  private upgrades: UpgradeRegistry | null = null;
  /** stop() has begun: upgrades are refused with 503 */
  private stopping = false;
  /** scale-out: other replicas' tunnels (see useRemote) */
  private remote: RemoteTunnel | null = null;
  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head);

  constructor(deps: TunnelDeps) {
    super();
    this.deps = deps;
    this.deltas = new TunnelDeltas(deps, (name, change) => this.emit(name, change));
    this.limits = { ...defaultConnectionLimits, ...deps.limits };
    this.backlog = new SnapshotBacklog(deps.backlogBytes ?? DEFAULT_BACKLOG_BYTES);
    this.turns = new SnapshotTurns(deps.snapshotTurns);
  }

  /** Takes the tunnel's WebSocket upgrades (TUNNEL_PATH) from the server's dispatcher. */
  start(upgrades: UpgradeRegistry): void {
    this.upgrades = upgrades;
    upgrades.register(TUNNEL_PATH, this.onUpgrade);
  }

  async stop(): Promise<void> {
    // Until the server stops accepting (after this), a reconnecting edge is told to try again
    // (503), not that the tunnel does not exist (404, had the path been unregistered first): on
    // PostgreSQL the edges' markOffline below take a while, and its edges come back within it (#19).
    this.stopping = true;
    for (const conn of [...this.connections.values(), ...[...this.greeting.values()].flatMap((w) => [...w])])
      conn.close(1001, 'cloud shutting down');
    await Promise.allSettled([...this.queues.values()]);
    this.upgrades?.unregister(TUNNEL_PATH);
    this.connections.clear();
    this.wss.close();
  }

  /** Scale-out: requests and disconnects for edges not connected here go to the other replicas. */
  useRemote(remote: RemoteTunnel | null): void {
    this.remote = remote;
  }

  /** Whether the edge's tunnel is held by this process. */
  isOnline(edgeId: number): boolean {
    return this.connections.has(edgeId);
  }

  /** Whether this process has stopped reading the edge's tunnel until the backlog has room (tests). */
  readingPaused(edgeId: number): boolean {
    return this.connections.get(edgeId)?.paused ?? false;
  }

  /**
   * Runs `work` in the edge's queue if its tunnel is still held here by then: ordered with
   * the markOnline/markOffline of its connections, so it cannot overtake a disconnect.
   */
  ifConnected(edgeId: number, work: () => Promise<unknown>): void {
    this.enqueue(edgeId, async () => {
      if (this.connections.has(edgeId)) await work();
    });
  }

  /** Drops an edge's tunnel at once (revocation), on whichever replica holds it. */
  disconnect(edgeId: number, reason = 'revoked'): void {
    this.disconnectLocal(edgeId, reason);
    this.remote?.disconnect(edgeId, reason);
  }

  /** Drops the edge's tunnel if this process holds it. */
  disconnectLocal(edgeId: number, reason = 'revoked', code = 4003): void {
    this.connections.get(edgeId)?.close(code, reason);
    for (const conn of this.greeting.get(edgeId) ?? []) conn.close(code, reason);
  }

  async request(
    edgeId: number,
    req: Omit<tunnel.TunnelRequest, 'type' | 'id'>,
    timeoutMs?: number,
  ): Promise<RpcResult> {
    if (!this.connections.has(edgeId) && this.remote)
      return this.remote.request(edgeId, req, timeoutMs ?? this.limits.rpcTimeoutMs);
    return this.requestLocal(edgeId, req, timeoutMs);
  }

  /** An RPC on a tunnel held by this process only. */
  async requestLocal(
    edgeId: number,
    req: Omit<tunnel.TunnelRequest, 'type' | 'id'>,
    timeoutMs?: number,
  ): Promise<RpcResult> {
    const conn = this.connections.get(edgeId);
    if (!conn) throw new EdgeOfflineError();
    return conn.request(req, timeoutMs);
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if (this.stopping) return refuseWhileStopping(socket);
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    let edge: { id: number } | null = null;
    try {
      edge = m ? await this.deps.authenticateEdge(m[1]) : null;
    } catch (err) {
      // the database away answers 503 database_unavailable (the edge retries), as on any route
      const answer = toHttpError(err);
      if (answer.status === 500) this.deps.log.error('edge authentication failed', err);
      rejectUpgrade(socket, answer.status, answer.body(), answer.headers);
      return;
    }
    if (!edge) {
      rejectUpgrade(socket, 401, { error: 'unauthorized' }, { 'WWW-Authenticate': 'Bearer' });
      return;
    }
    // again after the lookup: a tunnel attached after stop() closed the others would stay open
    if (this.stopping) return refuseWhileStopping(socket);
    const edgeId = edge.id;
    // Settles once the hello is answered (admission counts the tunnel as opening until then) or the
    // socket closes (a handshake ws refused never reaches attach).
    await new Promise<void>((opened) => {
      socket.once('close', () => opened());
      this.wss.handleUpgrade(req, socket, head, (ws) => this.attach(edgeId, ws, socket, opened));
    });
  }

  private attach(edgeId: number, ws: WebSocket, wire: Duplex, opened: () => void): void {
    const conn = new EdgeConnection(edgeId, ws, this.limits, this.slices, this.backlog, wire);
    const session: Session = { greeted: false, closing: new AbortController(), turn: null, late: 0, opened };
    conn.onProtocolError = (reason) => {
      this.deps.log.warn('tunnel protocol error', { edgeId, reason });
      conn.send({ type: 'error', code: 'protocol_error', message: reason });
    };
    // Deltas that arrive while earlier work of this edge is still queued join one batch, applied
    // as one unit and acknowledged once (acks are cumulative): a burst costs one commit. Any other
    // message closes the batch, so order is kept.
    let openBatch: DeltaBatch | null = null;
    // Once a message's work failed (the database away, a pool that gave no client in time), nothing
    // answers it (a hello unwelcomed, a snapshot or delta unacknowledged), and a later batch's ack,
    // being cumulative, would cover the lost one: the tunnel closes, later work of it is skipped, and
    // the edge reconnects and resends what it has no ack for (#19: a tenth of a PostgreSQL fleet sat
    // connected but never welcomed).
    let failed = false;
    const run = (work: () => Promise<void>, skipped: () => void = () => {}) =>
      this.enqueue(edgeId, async () => {
        if (failed) {
          skipped();
          return;
        }
        try {
          await work();
        } catch (err) {
          failed = true;
          conn.close(1011, 'tunnel message failed');
          throw err;
        }
      });
    conn.onMessage = (msg, release) => {
      if (!session.greeted && msg.type !== 'hello') {
        release();
        conn.close(4002, 'hello expected');
        return;
      }
      if (msg.type === 'hello') this.adopt(edgeId, conn);
      // an edge asked for a snapshot that sends something else first has no snapshot coming
      if (msg.type !== 'snapshot') giveTurnBack(session);
      if (msg.type === 'delta') {
        if (!openBatch || openBatch.messages.length >= MAX_DELTA_BATCH) {
          const { batch, done } = this.deltas.open(session);
          openBatch = batch;
          run(() => {
            if (openBatch === batch) openBatch = null;
            return this.deltas.apply(conn, batch).finally(done);
          }, done);
        }
        this.deltas.add(edgeId, session, openBatch, msg, !failed);
        return;
      }
      openBatch = null;
      session.late += 1;
      const done = () => {
        release();
        session.late -= 1;
      };
      run(() => this.handle(conn, msg, session).finally(done), done);
    };
    conn.onClose = () => {
      session.closing.abort();
      giveTurnBack(session);
      this.unadopted(edgeId, conn, false);
      if (this.connections.get(edgeId) !== conn) return;
      this.connections.delete(edgeId);
      this.enqueue(edgeId, () => this.deps.markOffline(edgeId));
      this.emit('edge_offline', edgeId);
    };
    this.unadopted(edgeId, conn, true);
    conn.start();
  }

  /**
   * The edge's tunnel from its hello on: a reconnecting edge replaces its stale tunnel then, not
   * once its upgrade is handed over. An attempt its edge gave up on (its handshake timed out while
   * the connection waited to be accepted or read: a first sync of 10,000 edges had 500–1,000) is
   * handed over late, and would cut the tunnel of the edge's reconnection; it never says hello.
   */
  private adopt(edgeId: number, conn: EdgeConnection): void {
    const current = this.connections.get(edgeId);
    if (current === conn) return;
    this.unadopted(edgeId, conn, false);
    current?.close(4000, 'replaced by a new connection');
    this.connections.set(edgeId, conn);
  }

  /** Keeps (or forgets) a tunnel that has not said hello yet, so that a revocation or a stop closes it too. */
  private unadopted(edgeId: number, conn: EdgeConnection, keep: boolean): void {
    const waiting = this.greeting.get(edgeId) ?? new Set<EdgeConnection>();
    if (keep) waiting.add(conn);
    else waiting.delete(conn);
    if (waiting.size > 0) this.greeting.set(edgeId, waiting);
    else this.greeting.delete(edgeId);
  }

  private enqueue(edgeId: number, work: () => Promise<void>): void {
    const prev = this.queues.get(edgeId) ?? Promise.resolve();
    const next = prev.then(work).catch((err) => this.deps.log.error('tunnel message failed', err, { edgeId }));
    this.queues.set(edgeId, next);
    void next.then(() => {
      if (this.queues.get(edgeId) === next) this.queues.delete(edgeId);
    });
  }

  /** Every message but deltas (TunnelDeltas takes those). */
  private async handle(conn: EdgeConnection, msg: TunnelMessage, session: Session): Promise<void> {
    const edgeId = conn.edgeId;
    switch (msg.type) {
      case 'hello': {
        if (msg.protocol !== tunnel.TUNNEL_PROTOCOL_VERSION) {
          conn.send({
            type: 'error',
            code: 'protocol_version',
            message: `cloud speaks protocol ${tunnel.TUNNEL_PROTOCOL_VERSION}`,
          });
          conn.close(4001, 'unsupported protocol version');
          return;
        }
        session.greeted = true;
        const last = await this.deps.lastSeq(edgeId);
        // Resume only when both sides agree on a point the mirror has reached.
        const acked = msg.resume_from !== null && last !== null && last >= msg.resume_from ? last : null;
        // An edge told acked_seq null sends its snapshot at once: it is welcomed when a snapshot may
        // come in (it waits connected, its socket read; an edge that can resume is welcomed at once).
        if (acked === null) {
          giveTurnBack(session); // a second hello on the same tunnel
          session.opened(); // SnapshotTurns bounds what comes next
          session.turn = await this.turns.take(session.closing.signal);
          if (!session.turn) return; // the tunnel closed while it waited
        }
        await this.deps.markOnline(edgeId, { edge_version: msg.edge_version, hostname: msg.hostname });
        conn.send({
          type: 'welcome',
          protocol: tunnel.TUNNEL_PROTOCOL_VERSION,
          edge_id: edgeId,
          acked_seq: acked,
          heartbeat_ms: this.limits.heartbeatMs,
        });
        session.opened();
        this.emit('edge_online', edgeId);
        return;
      }
      case 'snapshot': {
        try {
          const checked = await validateSnapshot(msg, this.slices);
          if ('error' in checked) {
            conn.onProtocolError(checked.error);
            return;
          }
          await this.deps.applySnapshot(edgeId, msg.seq, checked.data);
          conn.send({ type: 'ack', seq: msg.seq });
          this.emit('snapshot', edgeId);
          return;
        } finally {
          giveTurnBack(session);
        }
      }
      case 'event': {
        // state_changed comes as deltas (with the mirror's old state): an edge never sends it as an event
        if (msg.event_type === 'state_changed') return;
        const event: ws.BusEvent = {
          event_type: msg.event_type,
          data: msg.data,
          origin: msg.origin ?? 'LOCAL',
          time_fired: msg.time_fired ?? new Date().toISOString(),
          context: msg.context ?? { id: randomUUID(), parent_id: null, user_id: null },
        };
        const out: EdgeEvent = { edgeId, event };
        this.emit('edge_event', out);
        return;
      }
      case 'trigger': {
        const fired: TriggerFired = {
          edgeId,
          subscription: msg.subscription,
          variables: msg.variables,
          context: msg.context,
        };
        this.emit('ha_trigger', fired);
        return;
      }
      case 'error':
        this.deps.log.warn('edge reported an error', { edgeId, code: msg.code, message: msg.message });
        return;
      default:
        return;
    }
  }
}

function giveTurnBack(session: Session): void {
  session.turn?.();
  session.turn = null;
}
