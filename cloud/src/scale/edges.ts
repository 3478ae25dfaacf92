import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { tunnel } from '@smarthome/protocol';
import type { Logger } from '../log.ts';
import { EdgeBusyError, EdgeOfflineError, EdgeTimeoutError, type RpcResult } from '../tunnel/connection.ts';
import type { EdgeEvent, RemoteTunnel, StateChanged, TriggerFired } from '../tunnel/hub.ts';
import type { Cluster, ClusterMessage } from './cluster.ts';

type Request = Omit<tunnel.TunnelRequest, 'type' | 'id'>;

/** What the bridge needs from this replica's TunnelHub (tunnels held here only). */
export interface LocalTunnels {
  on(event: 'state_committed', listener: (e: StateChanged) => void): unknown;
  on(event: 'edge_event', listener: (e: EdgeEvent) => void): unknown;
  on(event: 'ha_trigger', listener: (e: TriggerFired) => void): unknown;
  on(event: 'edge_online', listener: (edgeId: number) => void): unknown;
  off(event: 'state_committed', listener: (e: StateChanged) => void): unknown;
  off(event: 'edge_event', listener: (e: EdgeEvent) => void): unknown;
  off(event: 'ha_trigger', listener: (e: TriggerFired) => void): unknown;
  off(event: 'edge_online', listener: (edgeId: number) => void): unknown;
  requestLocal(edgeId: number, req: Request, timeoutMs?: number): Promise<RpcResult>;
  disconnectLocal(edgeId: number, reason: string, code?: number): void;
}

export interface ClusterEdgesOptions {
  /** how long an ownership key lives without a heartbeat (a dead replica's edges count as offline after this) */
  ownershipTtlMs?: number;
  /** extra wait on the caller's side beyond the edge's RPC timeout, for the two Redis hops */
  forwardMarginMs?: number;
  /**
   * Called after each heartbeat with the edges whose tunnel is held here and whose key is
   * ours: the holder asserts that they are online (a sweeper that saw them unowned, e.g.
   * while Redis had lost its keys, may have marked them offline).
   */
  onHeld?(edgeIds: number[]): Promise<void>;
}

// Compare-and-delete: the key goes only if it still names us. 1 = ours or nobody's, 0 = another replica's.
const RELEASE = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
if not v then return 1 end
return 0`;

// Heartbeat: for each key, re-set (with TTL) when it is ours or expired; 0 where another replica took it.
const REFRESH = `
local out = {}
for i, k in ipairs(KEYS) do
  local v = redis.call('GET', k)
  if v == ARGV[1] or not v then
    redis.call('SET', k, ARGV[1], 'PX', ARGV[2])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out`;

const ERROR_CODES = new Map<string, () => Error>([
  ['offline', () => new EdgeOfflineError()],
  ['timeout', () => new EdgeTimeoutError()],
  ['busy', () => new EdgeBusyError()],
]);

function errorCode(err: unknown): string {
  if (err instanceof EdgeOfflineError) return 'offline';
  if (err instanceof EdgeTimeoutError) return 'timeout';
  if (err instanceof EdgeBusyError) return 'busy';
  return 'internal';
}

interface Pending {
  resolve: (r: RpcResult) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/**
 * Edge tunnels across replicas, through Redis:
 * - ownership: `<prefix>:edge:<id>` names the replica holding the edge's tunnel; set on hello
 *   (claim), refreshed by a heartbeat (TTL), deleted on disconnect only while still ours (release).
 *   A replica that dies stops refreshing: its keys expire and those edges count as offline.
 * - RPC: a request for an edge not connected here goes to the owner's inbox with a correlation
 *   id; the owner runs it on its local tunnel and publishes the result to the caller's inbox.
 * - disconnect (revocation) is broadcast; whoever holds the tunnel drops it.
 * - state_changed of local tunnels is broadcast once committed ('state_committed': a replica that
 *   hears of it then reads the mirror's new state); remote ones are re-emitted as 'state_changed'
 *   (never our own, which the app socket already got from the hub directly). The edges' other
 *   bus events (custom events, automation_triggered, call_service) go the same way as 'edge_event',
 *   and so do HA trigger subscriptions' fires ('ha_trigger': the socket may be on any replica) and
 *   an edge's hello ('edge_online': subscriptions made from other replicas are made again).
 */
export class ClusterEdges
  extends EventEmitter<{
    state_changed: [e: StateChanged];
    edge_event: [e: EdgeEvent];
    ha_trigger: [e: TriggerFired];
    edge_online: [edgeId: number];
  }>
  implements RemoteTunnel
{
  private readonly cluster: Cluster;
  private readonly local: LocalTunnels;
  private readonly log: Logger;
  private readonly ttlMs: number;
  private readonly marginMs: number;
  private readonly onHeld: ((edgeIds: number[]) => Promise<void>) | undefined;
  /** edges whose tunnel is held here and whose key we keep alive */
  private readonly owned = new Set<number>();
  private readonly pending = new Map<string, Pending>();
  private heartbeat: NodeJS.Timeout | null = null;
  private readonly onMessage = (msg: ClusterMessage) =>
    void this.receive(msg).catch((err) => this.log.error('cluster message failed', err, { t: msg.t }));
  private readonly onStateChanged = (e: StateChanged) => this.publish({ t: 'state', e }, 'state_changed');
  private readonly onEdgeEvent = (e: EdgeEvent) => this.publish({ t: 'event', e }, 'edge event');
  private readonly onTrigger = (e: TriggerFired) => this.publish({ t: 'trigger', e }, 'trigger');
  private readonly onEdgeOnline = (edgeId: number) => this.publish({ t: 'online', edgeId }, 'edge online');

  constructor(deps: { cluster: Cluster; local: LocalTunnels; log: Logger } & ClusterEdgesOptions) {
    super();
    this.cluster = deps.cluster;
    this.local = deps.local;
    this.log = deps.log;
    this.ttlMs = deps.ownershipTtlMs ?? 15_000;
    this.marginMs = deps.forwardMarginMs ?? 2_000;
    this.onHeld = deps.onHeld;
  }

  private edgeKey(edgeId: number): string {
    return this.cluster.key('edge', edgeId);
  }

  /** Call after cluster.start(). */
  start(): void {
    this.cluster.on('message', this.onMessage);
    this.local.on('state_committed', this.onStateChanged);
    this.local.on('edge_event', this.onEdgeEvent);
    this.local.on('ha_trigger', this.onTrigger);
    this.local.on('edge_online', this.onEdgeOnline);
    this.heartbeat = setInterval(() => void this.refresh(), Math.max(100, Math.floor(this.ttlMs / 3)));
    this.heartbeat.unref();
  }

  /** Call before cluster.stop(): releases what we still own and fails calls in flight. */
  async stop(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    this.cluster.off('message', this.onMessage);
    this.local.off('state_committed', this.onStateChanged);
    this.local.off('edge_event', this.onEdgeEvent);
    this.local.off('ha_trigger', this.onTrigger);
    this.local.off('edge_online', this.onEdgeOnline);
    await Promise.allSettled([...this.owned].map((id) => this.release(id)));
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new EdgeOfflineError());
      this.pending.delete(id);
    }
  }

  /** The edge said hello here: we own its tunnel now. A previous owner still holding a stale tunnel is told to drop it. */
  async claim(edgeId: number): Promise<void> {
    this.owned.add(edgeId);
    try {
      const previous = await this.cluster.redis.set(
        this.edgeKey(edgeId),
        this.cluster.replicaId,
        'PX',
        this.ttlMs,
        'GET',
      );
      if (previous && previous !== this.cluster.replicaId) await this.cluster.send(previous, { t: 'drop', edgeId });
    } catch (err) {
      // The heartbeat sets the key once Redis answers again; until then other replicas see the edge offline.
      this.log.warn('claiming edge ownership failed', { edgeId, err: (err as Error).message });
    }
  }

  /**
   * The edge's tunnel here closed. True when the key was ours (now deleted) or nobody's: the
   * caller may mark the edge offline. False when another replica owns it (the edge moved there).
   */
  async release(edgeId: number): Promise<boolean> {
    this.owned.delete(edgeId);
    try {
      return (await this.cluster.redis.eval(RELEASE, 1, this.edgeKey(edgeId), this.cluster.replicaId)) === 1;
    } catch (err) {
      this.log.warn('releasing edge ownership failed', { edgeId, err: (err as Error).message });
      return true;
    }
  }

  /** The replica holding the edge's tunnel, or null (offline everywhere, or its replica died). */
  async ownerOf(edgeId: number): Promise<string | null> {
    return this.cluster.redis.get(this.edgeKey(edgeId));
  }

  /** For TunnelHub.request when the edge is not connected here. */
  async request(edgeId: number, req: Request, timeoutMs: number): Promise<RpcResult> {
    const owner = await this.ownerOf(edgeId);
    // No owner, or ourselves (the tunnel just closed here and the key is about to go).
    if (!owner || owner === this.cluster.replicaId) throw new EdgeOfflineError();
    const id = randomUUID();
    return new Promise<RpcResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new EdgeTimeoutError());
      }, timeoutMs + this.marginMs);
      this.pending.set(id, { resolve, reject, timer });
      const fail = (err: Error) => {
        const p = this.pending.get(id);
        if (!p) return;
        clearTimeout(p.timer);
        this.pending.delete(id);
        p.reject(err);
      };
      this.cluster.send(owner, { t: 'rpc', id, edgeId, req, timeoutMs }).then(
        // Nobody listens on that inbox: the owner died and its key has not expired yet.
        (receivers) => {
          if (receivers === 0) fail(new EdgeOfflineError());
        },
        (err: Error) => {
          this.log.warn('rpc forward failed', { edgeId, err: err.message });
          fail(new EdgeOfflineError());
        },
      );
    });
  }

  /** Revocation anywhere: every replica drops the edge's tunnel if it holds it. */
  disconnect(edgeId: number, reason: string): void {
    this.cluster
      .broadcast({ t: 'disconnect', edgeId, reason })
      .catch((err) => this.log.error('broadcasting a disconnect failed', err, { edgeId }));
  }

  /** A local event for the other replicas; a failed publish is logged, never thrown into the emitter. */
  private publish(msg: { t: string; [field: string]: unknown }, what: string): void {
    this.cluster
      .broadcast(msg)
      .catch((err) => this.log.warn(`${what} publish failed`, { err: (err as Error).message }));
  }

  private async receive(msg: ClusterMessage): Promise<void> {
    const me = this.cluster.replicaId;
    switch (msg.t) {
      case 'rpc': {
        const { id, edgeId, req, timeoutMs } = msg as unknown as {
          id: string;
          edgeId: number;
          req: Request;
          timeoutMs: number;
        };
        let reply: { t: string; [field: string]: unknown };
        try {
          reply = { t: 'rpc_reply', id, ok: true, result: await this.local.requestLocal(edgeId, req, timeoutMs) };
        } catch (err) {
          const code = errorCode(err);
          if (code === 'internal') this.log.error('forwarded rpc failed', err, { edgeId });
          reply = {
            t: 'rpc_reply',
            id,
            ok: false,
            error: code,
            message: code === 'internal' ? 'internal error' : undefined,
          };
        }
        await this.cluster.send(msg.from, reply);
        return;
      }
      case 'rpc_reply': {
        const p = this.pending.get(msg.id as string);
        if (!p) return; // late answer after our timeout
        clearTimeout(p.timer);
        this.pending.delete(msg.id as string);
        if (msg.ok) p.resolve(msg.result as RpcResult);
        else
          p.reject(
            ERROR_CODES.get(msg.error as string)?.() ?? new Error(String(msg.message ?? 'forwarded rpc failed')),
          );
        return;
      }
      case 'disconnect':
        this.local.disconnectLocal(msg.edgeId as number, String(msg.reason ?? 'revoked'));
        return;
      case 'drop': {
        // Another replica got this edge's hello after us: our tunnel is stale, unless the edge came back here since.
        const edgeId = msg.edgeId as number;
        if ((await this.ownerOf(edgeId)) === me) return;
        this.owned.delete(edgeId);
        this.local.disconnectLocal(edgeId, 'replaced by a new connection', 4000);
        return;
      }
      case 'state':
        if (msg.from === me) return; // delivered locally by the hub already
        this.emit('state_changed', msg.e as StateChanged);
        return;
      case 'event':
        if (msg.from === me) return; // delivered locally by the hub already
        this.emit('edge_event', msg.e as EdgeEvent);
        return;
      case 'trigger':
        if (msg.from === me) return; // delivered locally by the hub already
        this.emit('ha_trigger', msg.e as TriggerFired);
        return;
      case 'online':
        if (msg.from === me) return;
        this.emit('edge_online', msg.edgeId as number);
        return;
      default:
        return;
    }
  }

  /** Heartbeat: keep our keys alive; drop tunnels whose edge has since said hello elsewhere. */
  private async refresh(): Promise<void> {
    const ids = [...this.owned];
    for (let i = 0; i < ids.length; i += 500) {
      const batch = ids.slice(i, i + 500);
      let out: number[];
      try {
        out = (await this.cluster.redis.eval(
          REFRESH,
          batch.length,
          ...batch.map((id) => this.edgeKey(id)),
          this.cluster.replicaId,
          this.ttlMs,
        )) as number[];
      } catch (err) {
        this.log.warn('edge ownership heartbeat failed', { err: (err as Error).message });
        return;
      }
      const held: number[] = [];
      batch.forEach((edgeId, j) => {
        if (!this.owned.has(edgeId)) return;
        if (out[j] === 1) {
          held.push(edgeId);
          return;
        }
        this.owned.delete(edgeId);
        this.local.disconnectLocal(edgeId, 'replaced by a new connection', 4000);
      });
      if (held.length && this.onHeld) {
        await this.onHeld(held).catch((err: Error) =>
          this.log.warn('asserting held edges online failed', { err: err.message }),
        );
      }
    }
  }
}
