import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Redis } from 'ioredis';
import type { Logger } from '../log.ts';

/** Key prefix when REDIS_PREFIX is unset; every key and channel starts with "<prefix>:". */
export const DEFAULT_REDIS_PREFIX = 'smarthome';

/** REDIS_PREFIX lets several deployments (or test runs) share one Redis without colliding. */
export function redisPrefixFromEnv(env: NodeJS.ProcessEnv): string {
  return env.REDIS_PREFIX || DEFAULT_REDIS_PREFIX;
}

/** Every message between replicas: a type tag and the sending replica's id. */
export interface ClusterMessage {
  t: string;
  from: string;
  [field: string]: unknown;
}

export interface ClusterOptions {
  url: string;
  prefix?: string;
  /** unique per process; generated when omitted */
  replicaId?: string;
  log: Logger;
}

/**
 * This replica's membership in a group of cloud replicas sharing one Redis (REDIS_URL).
 * Two connections: one for commands and publishing, one in subscriber mode listening on
 * this replica's inbox channel and on the broadcast channel. Messages are JSON and carry
 * the sender's replica id; 'message' is emitted for each one received.
 *
 * Constructor assigns, start() connects, stop() quits.
 */
export class Cluster extends EventEmitter<{ message: [msg: ClusterMessage] }> {
  readonly url: string;
  readonly prefix: string;
  readonly replicaId: string;
  private readonly log: Logger;
  private commands: Redis | null = null;
  private subscriber: Redis | null = null;

  constructor(opts: ClusterOptions) {
    super();
    this.url = opts.url;
    this.prefix = opts.prefix ?? DEFAULT_REDIS_PREFIX;
    this.replicaId = opts.replicaId ?? `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.log = opts.log;
  }

  /** The command connection (not usable in subscriber mode). Throws before start(). */
  get redis(): Redis {
    if (!this.commands) throw new Error('cluster not started');
    return this.commands;
  }

  /** Both Redis connections are up: a replica without them cannot reach the other replicas' edges. */
  get healthy(): boolean {
    return this.commands?.status === 'ready' && this.subscriber?.status === 'ready';
  }

  /** "<prefix>:<part>:<part>…" */
  key(...parts: Array<string | number>): string {
    return [this.prefix, ...parts].join(':');
  }

  private inbox(replicaId: string): string {
    return this.key('replica', replicaId);
  }

  private get everyone(): string {
    return this.key('broadcast');
  }

  async start(): Promise<void> {
    // loaded here, not at the module's import: a cloud without REDIS_URL never initializes ioredis
    // (~0.7 MB of heap and ~24 ms of a start's CPU; README, "Cloud start-up notes")
    const { Redis } = await import('ioredis');
    const connect = (role: string) => {
      const client = new Redis(this.url, {
        lazyConnect: true,
        connectionName: `${this.prefix}:${this.replicaId}:${role}`,
        maxRetriesPerRequest: 3,
      });
      // ioredis reconnects by itself; without a listener it would print "Unhandled error event".
      client.on('error', (err: Error) => this.log.warn('redis connection error', { role, err: err.message }));
      return client;
    };
    this.commands = connect('commands');
    this.subscriber = connect('subscriber');
    try {
      await Promise.all([this.commands.connect(), this.subscriber.connect()]);
    } catch (err) {
      const where = new URL(this.url);
      throw new Error(`cannot connect to Redis at ${where.host}: ${(err as Error).message}`, { cause: err });
    }
    this.subscriber.on('message', (_channel: string, text: string) => this.receive(text));
    // ioredis re-subscribes after a reconnect (autoResubscribe).
    await this.subscriber.subscribe(this.inbox(this.replicaId), this.everyone);
  }

  private receive(text: string): void {
    let msg: ClusterMessage;
    try {
      msg = JSON.parse(text) as ClusterMessage;
    } catch {
      this.log.warn('malformed cluster message');
      return;
    }
    if (!msg || typeof msg.t !== 'string' || typeof msg.from !== 'string') return;
    this.emit('message', msg);
  }

  /**
   * Which of these replicas are alive: subscribed to their inbox right now. Redis drops a
   * subscription as soon as the replica's connection closes (a killed process), so this
   * knows before the replica's keys expire.
   */
  async liveReplicas(replicaIds: string[]): Promise<Set<string>> {
    const ids = [...new Set(replicaIds)];
    if (ids.length === 0) return new Set();
    // [channel, subscribers, channel, subscribers, …] in the order asked
    const reply = (await this.redis.call('PUBSUB', 'NUMSUB', ...ids.map((id) => this.inbox(id)))) as Array<
      string | number
    >;
    return new Set(ids.filter((_, i) => Number(reply[2 * i + 1]) > 0));
  }

  /** Publishes to one replica's inbox; resolves with how many subscribers got it (0: that replica is gone). */
  async send(replicaId: string, msg: { t: string; [field: string]: unknown }): Promise<number> {
    return this.redis.publish(this.inbox(replicaId), JSON.stringify({ ...msg, from: this.replicaId }));
  }

  /** Publishes to every replica, this one included (receivers skip their own by `from`). */
  async broadcast(msg: { t: string; [field: string]: unknown }): Promise<number> {
    return this.redis.publish(this.everyone, JSON.stringify({ ...msg, from: this.replicaId }));
  }

  async stop(): Promise<void> {
    const clients = [this.subscriber, this.commands].filter((c): c is Redis => c !== null);
    this.subscriber = null;
    this.commands = null;
    await Promise.all(
      clients.map(async (c) => {
        try {
          if (c.status === 'ready') await c.quit();
          else c.disconnect();
        } catch {
          c.disconnect();
        }
      }),
    );
  }
}
