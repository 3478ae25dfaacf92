import type { Lifecycle } from '@smarthome/protocol/server';
import type { FailureStore } from '../auth/throttle.ts';
import type { WebhookRateLimiter } from '../automations/rate-limit.ts';
import type { EdgeRegistry } from '../edges/registry.ts';
import type { Logger } from '../log.ts';
import type { EdgeEvent, StateChanged, TriggerFired, TunnelHub } from '../tunnel/hub.ts';
import { Cluster } from './cluster.ts';
import { ClusterEdges } from './edges.ts';
import { RedisFailureStore } from './failure-store.ts';
import { StaleEdgeSweeper } from './sweeper.ts';
import { RedisWebhookRateLimiter } from './webhook-limiter.ts';

/** cluster message: some replica wrote a table the access cache derives from */
const ACCESS_CHANGED = 'access_changed';

/** Sockets of this replica that deliver the edges' live events to apps. */
export interface FanOutTarget {
  fanOut(e: StateChanged): Promise<void>;
  fanOutEvent(e: EdgeEvent): Promise<void>;
  /** HA trigger subscriptions: a fire, and an edge back online (subscriptions are made again) */
  triggerFired?(e: TriggerFired): Promise<void>;
  edgeOnline?(edgeId: number): Promise<void>;
}

/**
 * Scale-out (REDIS_URL set): this replica's link to the others, wired into the cloud's parts
 * (tunnels, state_changed and edge events, login throttling, webhook limits, access changes).
 * Constructor assigns; start() connects and registers each undo in the cloud's lifecycle.
 */
export class ScaleOut {
  readonly cluster: Cluster;
  private readonly log: Logger;
  private edges: ClusterEdges | null = null;
  private sweeper: StaleEdgeSweeper | null = null;
  private announcingAccess = false;

  constructor(opts: { url: string; prefix: string; log: Logger }) {
    this.cluster = new Cluster(opts);
    this.log = opts.log;
  }

  /** false while Redis is lost: the replica answers /healthz 503 and caches no access */
  get healthy(): boolean {
    return this.cluster.healthy;
  }

  failureStore(): FailureStore {
    return new RedisFailureStore(this.cluster);
  }

  webhookLimiter(rate: { perSecond: number; burst: number }): WebhookRateLimiter {
    return new RedisWebhookRateLimiter(this.cluster, rate);
  }

  /** Claims the edge's ownership key (before the edge is marked online). */
  async claim(edgeId: number): Promise<void> {
    await this.edges?.claim(edgeId);
  }

  /** Releases the edge's key; false when another replica holds it (the edge said hello there). */
  async release(edgeId: number): Promise<boolean> {
    return this.edges ? this.edges.release(edgeId) : true;
  }

  /**
   * Requests and revocations for edges whose tunnel is on another replica go through Redis;
   * edges left 'online' by a replica that died without marking them offline are swept.
   */
  linkEdges(tunnel: TunnelHub, registry: EdgeRegistry): void {
    this.edges = new ClusterEdges({
      cluster: this.cluster,
      local: tunnel,
      log: this.log,
      // What this replica holds is online, whatever a sweeper concluded while Redis could not tell.
      onHeld: async (edgeIds) => {
        for (const id of await registry.offlineAmong(edgeIds)) tunnel.ifConnected(id, () => registry.markOnline(id));
      },
    });
    tunnel.useRemote(this.edges);
    this.sweeper = new StaleEdgeSweeper({
      cluster: this.cluster,
      log: this.log,
      listOnline: () => registry.onlineIds(),
      markOffline: (edgeId) => registry.markOffline(edgeId),
      markOnline: (edgeId) => registry.markOnline(edgeId),
    });
  }

  /** state_changed and edge events from tunnels on other replicas reach this replica's sockets. */
  fanOutTo(targets: { logPrefix: string; target: FanOutTarget }[]): void {
    this.edges?.on('state_changed', (e) => {
      for (const { logPrefix, target } of targets)
        target.fanOut(e).catch((err) => this.log.error(`${logPrefix}state_changed fan-out failed`, err));
    });
    this.edges?.on('edge_event', (e) => {
      for (const { logPrefix, target } of targets)
        target.fanOutEvent(e).catch((err) => this.log.error(`${logPrefix}edge event fan-out failed`, err));
    });
    this.edges?.on('ha_trigger', (e) => {
      for (const { logPrefix, target } of targets)
        target.triggerFired?.(e).catch((err) => this.log.error(`${logPrefix}trigger fan-out failed`, err));
    });
    this.edges?.on('edge_online', (edgeId) => {
      for (const { logPrefix, target } of targets)
        target.edgeOnline?.(edgeId).catch((err) => this.log.error(`${logPrefix}edge online handling failed`, err));
    });
  }

  /** Tells the other replicas that an access table was written (one broadcast per tick). */
  accessChanged(): void {
    if (this.announcingAccess) return;
    this.announcingAccess = true;
    setImmediate(() => {
      this.announcingAccess = false;
      this.cluster
        .broadcast({ t: ACCESS_CHANGED })
        .catch((err) => this.log.warn('access change broadcast failed', { err: (err as Error).message }));
    });
  }

  /** Calls back when another replica wrote an access table. */
  onAccessChanged(listener: () => void): void {
    this.cluster.on('message', (msg) => {
      if (msg.t === ACCESS_CHANGED && msg.from !== this.cluster.replicaId) listener();
    });
  }

  /**
   * Joins the other replicas; the stop releases the edges still owned here, then leaves Redis.
   * No edge can be online before we listen unless another replica holds its tunnel: status
   * left 'online' by a crash is swept now, not when the edge happens to reconnect.
   */
  async start(life: Lifecycle): Promise<void> {
    await this.cluster.start();
    life.defer('leaving Redis', () => this.cluster.stop());
    const { edges, sweeper } = this;
    if (edges) {
      edges.start();
      life.defer('releasing edges held here', () => edges.stop());
    }
    if (sweeper) {
      await sweeper.start();
      life.defer('stopping the stale-edge sweeper', () => sweeper.stop());
    }
  }
}
