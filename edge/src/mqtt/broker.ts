import { createServer, type Server, type Socket } from 'node:net';
import { Aedes, type AuthenticateError, type Client, type PublishPacket } from 'aedes';
import { writeToStream } from 'mqtt-packet';
import type { Logger } from '../log.ts';
import { listen } from '../errors.ts';
import type { MqttAcl } from './acl.ts';
import type { AuthenticatedUser, MqttUserStore } from './users.ts';
import { RetainedOnDiskPersistence } from './retained-persistence.ts';
import { MAX_CONNECT_BYTES, guardConnectLength } from './connect-guard.ts';
import type { RetainedStore } from './retained-store.ts';

export interface BrokerOptions {
  port: number;
  host?: string;
  users: MqttUserStore;
  acl: MqttAcl;
  log: Logger;
  /** for discovery config publishes: the command topics the payload declares (ACL check) */
  declaredCommandTopics?: (topic: string, payload: Buffer) => string[];
  /** where retained messages outlive the process; in memory only when absent */
  retained?: RetainedStore;
}

export type MessageListener = (
  topic: string,
  payload: Buffer,
  user: AuthenticatedUser | null,
  packet: { retain: boolean; qos: number },
) => void;

const USER = Symbol('smarthome.user');
/** the username a client authenticated as, once that user was deleted (it has no USER then) */
const DELETED = Symbol('smarthome.deletedUser');
/** the client's publishes authorized but not yet through Aedes (see MqttBroker.unprocessed) */
const UNPROCESSED = Symbol('smarthome.unprocessed');
type UserClient = Client & { [USER]?: AuthenticatedUser; [DELETED]?: string; [UNPROCESSED]?: number };

/** Who a client is, for log lines. */
const who = (client: UserClient) => client[USER]?.username ?? (client[DELETED] ? `${client[DELETED]} (deleted)` : '?');

/** MQTT CONNACK return code 4 (bad user name or password) / 5 (not authorized). */
function authError(code: 4 | 5, message: string): AuthenticateError {
  return Object.assign(new Error(message), { returnCode: code }) as AuthenticateError;
}

/**
 * The embedded Aedes broker on a TCP port: authentication against MqttUserStore,
 * authorization through MqttAcl, QoS 0/1/2, retained messages (kept on disk with a
 * RetainedStore) and last wills. Lifecycle: start() listens, stop() disconnects everyone
 * (whoever owns the RetainedStore commits what it still holds: the edge's stop()).
 */
export class MqttBroker {
  private readonly options: BrokerOptions;
  private aedes: Aedes | null = null;
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly listeners: MessageListener[] = [];
  private boundPort = 0;
  /** false once stop() began: client publishes are refused (not acknowledged; the client sends them again later) */
  private accepting = false;
  /**
   * Publishes authorized but not yet through Aedes (which acknowledges QoS 1 before it processes
   * the message): counted per client (UNPROCESSED) and in all, rather than kept by packet, as a
   * Map entry per message cost the ingest's main thread ~1 % (#19). Aedes publishes a client's
   * authorized packet (or a will) with that client, and a client's own count is what its
   * disconnect takes back.
   */
  private unprocessed = 0;
  private onDrained: (() => void) | null = null;

  constructor(options: BrokerOptions) {
    this.options = options;
  }

  get port(): number {
    return this.boundPort;
  }

  get connectedClients(): number {
    return this.aedes?.connectedClients ?? 0;
  }

  /** Every message that passed authorization (client publishes, wills and the edge's own). */
  onMessage(listener: MessageListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  async start(): Promise<number> {
    const { users, acl, log } = this.options;
    // aedes' encoder (mqtt-packet, one per process) otherwise fills a table of 65,536 two-byte
    // Buffers at the first packet it writes, to reuse for packet ids and lengths: 6.6 MB of heap
    // (#19: a fifth of the edge's heap at 1,000 entities); without it each such number gets a
    // two-byte Buffer when written
    writeToStream.cacheNumbers = false;
    const persistence = this.options.retained ? new RetainedOnDiskPersistence(this.options.retained) : undefined;
    const aedes = await Aedes.createBroker({
      id: 'smarthome-edge',
      heartbeatInterval: 60_000,
      connectTimeout: 15_000,
      ...(persistence ? { persistence } : {}),
    });
    aedes.authenticate = (client: UserClient, username, password, done) => {
      users.authenticate(username, password).then(
        (user) => {
          if (!user) return done(authError(4, 'bad user name or password'), false);
          client[USER] = user;
          client[UNPROCESSED] = 0;
          done(null, true);
        },
        (err) => {
          log.error('mqtt authentication failed', err);
          done(authError(5, 'not authorized'), false);
        },
      );
    };
    // A refused publish is acknowledged as its QoS requires and then dropped, rather than
    // closing the connection (aedes' answer to an authorizePublish error): MQTT 3.1.1 allows
    // either (MQTT-3.3.5-2), and a device whose one publish is refused (a config owned by
    // someone else) keeps working instead of reconnecting and re-publishing in a loop.
    const refused = new WeakSet<object>();
    // refusals added and not yet met again: while none is, a publish needs no look-up (#19)
    let refusals = 0;
    // aedes calls publish(packet, client, done) for client publishes and wills, the edge publish(packet, done)
    type AnyPublish = (packet: PublishPacket, client?: unknown, done?: unknown) => void;
    const publish = (aedes.publish as AnyPublish).bind(aedes);
    (aedes as unknown as { publish: AnyPublish }).publish = (packet, client, done) => {
      if (refusals === 0 || !refused.has(packet)) return publish(packet, client, done);
      refused.delete(packet);
      refusals--;
      const callback = typeof client === 'function' ? client : done;
      if (typeof callback === 'function') (callback as () => void)();
    };
    aedes.authorizePublish = (client: UserClient | null, packet, done) => {
      if (!client) return done(null); // a will published after its client is gone
      const isWill = packet === (client as Client & { will?: unknown }).will;
      if (!this.accepting && !isWill) {
        log.debug(`mqtt: refused publish to ${packet.topic}: the broker is stopping`);
        return done(new Error('broker is stopping'));
      }
      const user = client[USER];
      const declared = this.options.declaredCommandTopics;
      const refusal = acl.publishRefusal(
        user,
        packet.topic,
        declared ? () => declared(packet.topic, toBuffer(packet.payload)) : undefined,
      );
      if (refusal !== null) {
        log.warn(`mqtt: refused publish to ${packet.topic} by ${who(client)}: ${refusal}`);
        refused.add(packet);
        refusals++;
        return done(null);
      }
      client[UNPROCESSED] = (client[UNPROCESSED] ?? 0) + 1;
      this.unprocessed++;
      done(null);
    };
    aedes.authorizeSubscribe = (client: UserClient, sub, done) => {
      const refusal = acl.subscribeRefusal(client[USER], sub.topic);
      if (refusal === null) return done(null, sub);
      log.warn(`mqtt: refused subscription to ${sub.topic} by ${who(client)}: ${refusal}`);
      done(null, null); // granted 0x80 (failure); the connection stays
    };
    aedes.authorizeForward = (client: UserClient, packet) =>
      acl.canReceive(client[USER], packet.topic) ? packet : null;
    aedes.on('publish', (packet, client: UserClient | null) => {
      try {
        if (packet.topic.startsWith('$SYS') || this.listeners.length === 0) return;
        const user = client ? (client[USER] ?? null) : null;
        const payload = toBuffer(packet.payload);
        for (const l of this.listeners) {
          try {
            l(packet.topic, payload, user, packet); // its retain and qos, without a copy per message
          } catch (err) {
            log.error(`mqtt: handler for ${packet.topic} failed`, err);
          }
        }
      } finally {
        const pending = client?.[UNPROCESSED];
        if (pending) {
          client[UNPROCESSED] = pending - 1;
          if (--this.unprocessed === 0) this.onDrained?.();
        }
      }
    });
    // a publish whose client went away before Aedes took it further will never come through
    aedes.on('clientDisconnect', (client: UserClient) => {
      this.unprocessed -= client[UNPROCESSED] ?? 0;
      client[UNPROCESSED] = 0;
      if (this.unprocessed === 0) this.onDrained?.();
    });
    aedes.on('clientError', (client, err) => log.debug(`mqtt client ${client?.id} error: ${err.message}`));
    aedes.on('connectionError', (client, err) => log.debug(`mqtt connection ${client?.id} error: ${err.message}`));
    this.aedes = aedes;
    this.unprocessed = 0;
    this.accepting = true;

    const server = createServer((socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      aedes.handle(socket);
      guardConnectLength(socket, MAX_CONNECT_BYTES, () =>
        log.warn(`mqtt: closed a connection whose CONNECT declared more than ${MAX_CONNECT_BYTES} bytes`),
      );
    });
    this.server = server;
    try {
      this.boundPort = await listen(server, this.options.port, this.options.host, 'MQTT', '--mqtt-port');
    } catch (err) {
      this.server = null;
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      this.aedes = null;
      throw err;
    }
    return this.boundPort;
  }

  /** Resolves once no accepted publish is left unprocessed, or after `ms`. */
  private async drain(ms: number): Promise<void> {
    // a publish authorized in this very turn is added to the set before Aedes goes on
    await new Promise((resolve) => setImmediate(resolve));
    if (this.unprocessed === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      this.onDrained = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
    this.onDrained = null;
    this.unprocessed = 0;
  }

  /** Publishes as the edge itself (no ACL; retained and QoS honoured). */
  publish(topic: string, payload: string | Buffer, options: { qos?: 0 | 1 | 2; retain?: boolean } = {}): Promise<void> {
    const aedes = this.aedes;
    if (!aedes) return Promise.reject(new Error('broker is not running'));
    const packet: PublishPacket = {
      cmd: 'publish',
      topic,
      payload: typeof payload === 'string' ? Buffer.from(payload) : payload,
      qos: options.qos ?? 0,
      retain: options.retain ?? false,
      dup: false,
    };
    return new Promise((resolve, reject) => aedes.publish(packet, (err) => (err ? reject(err) : resolve())));
  }

  /** The retained message on a topic, if any, with when it was received (epoch ms; null when unknown). */
  async retained(topic: string): Promise<{ payload: Buffer; receivedAt: number | null } | undefined> {
    const aedes = this.aedes as
      (Aedes & { persistence?: { createRetainedStream(p: string): AsyncIterable<PublishPacket> } }) | null;
    if (!aedes?.persistence) return undefined;
    let found: Buffer | undefined;
    for await (const packet of aedes.persistence.createRetainedStream(topic)) {
      if (packet.topic === topic) found = toBuffer(packet.payload);
    }
    return found === undefined
      ? undefined
      : { payload: found, receivedAt: this.options.retained?.receivedAt(topic) ?? null };
  }

  /**
   * Disconnects every client authenticated as `username` (after its credentials were deleted).
   * They lose their identity first, so nothing more from them passes the ACL, not even a will.
   */
  disconnectUser(username: string): number {
    const aedes = this.aedes as (Aedes & { clients?: Record<string, UserClient> }) | null;
    let n = 0;
    for (const client of Object.values(aedes?.clients ?? {})) {
      if (client[USER]?.username !== username) continue;
      client[DELETED] = username;
      delete client[USER];
      client.close();
      n++;
    }
    return n;
  }

  /**
   * Takes no new connection and refuses new publishes, lets every publish already accepted (and
   * so perhaps acknowledged) reach the listeners (bounded: 1 s), then disconnects everyone.
   */
  async stop(): Promise<void> {
    const server = this.server;
    const aedes = this.aedes;
    this.accepting = false;
    this.server = null;
    this.aedes = null;
    if (server) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await this.drain(1000);
      if (aedes) await new Promise<void>((resolve) => aedes.close(() => resolve()));
      for (const s of this.sockets) s.destroy();
      this.sockets.clear();
      await closed;
    } else if (aedes) {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
    }
  }
}

function toBuffer(payload: PublishPacket['payload']): Buffer {
  return typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
}
