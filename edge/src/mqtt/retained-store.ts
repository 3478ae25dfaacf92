import type { EdgeDatabase } from '../db/database.ts';
import { WriteBehind } from '../db/write-behind.ts';

export interface RetainedMessage {
  topic: string;
  payload: Buffer;
  qos: 0 | 1 | 2;
  /** when the broker received it (epoch ms); null when unknown (rows kept before this was recorded) */
  receivedAt: number | null;
}

/**
 * Retained MQTT messages on disk (table mqtt_retained), so a device's retained state or
 * configuration is still there for subscribers after the edge restarts, as with Mosquitto's
 * persistence. Writes are behind (WriteBehind keyed by topic): a burst of retained publishes
 * costs one write per topic, not one per message; flush()/stop() write what is pending.
 * Each message keeps the time it was received, so that a consumer can tell it is older than
 * what it already knows (see MqttDiscovery's replay).
 */
export class RetainedStore {
  private readonly database: EdgeDatabase;
  private readonly messages: WriteBehind<RetainedMessage>;
  private readonly receivedTimes = new Map<string, number | null>();

  /** onWriteError: told of each failed background write (the messages are kept and retried) */
  constructor(database: EdgeDatabase, flushMs = 1000, onWriteError?: (err: unknown) => void) {
    this.database = database;
    this.messages = new WriteBehind({
      delayMs: flushMs,
      maxBatch: 1000,
      write: (batch) => this.write(batch),
      onError: onWriteError,
      gate: () => database.writeGate,
    });
  }

  /** Everything stored, for the broker to serve again; writing starts from here on. */
  load(): RetainedMessage[] {
    const rows = this.database.sqlite
      .prepare('SELECT topic, payload, qos, received_at FROM mqtt_retained ORDER BY topic')
      .all() as { topic: string; payload: Buffer; qos: number; received_at: string | null }[];
    this.messages.start();
    this.receivedTimes.clear();
    return rows.map((r) => {
      const receivedAt = r.received_at === null ? null : Date.parse(r.received_at);
      const message: RetainedMessage = {
        topic: r.topic,
        payload: Buffer.from(r.payload),
        qos: r.qos === 1 || r.qos === 2 ? r.qos : 0,
        receivedAt: Number.isNaN(receivedAt) ? null : receivedAt,
      };
      this.receivedTimes.set(message.topic, message.receivedAt);
      return message;
    });
  }

  /** Records a retained publish received now; an empty payload clears the topic (MQTT semantics). */
  put(message: Omit<RetainedMessage, 'receivedAt'>): void {
    if (message.payload.length === 0) {
      this.receivedTimes.delete(message.topic);
      this.messages.set(message.topic, null);
      return;
    }
    const receivedAt = Date.now();
    this.receivedTimes.set(message.topic, receivedAt);
    this.messages.set(message.topic, { ...message, payload: Buffer.from(message.payload), receivedAt });
  }

  /** When the retained message now on `topic` was received: epoch ms, null when unknown, undefined when there is none. */
  receivedAt(topic: string): number | null | undefined {
    return this.receivedTimes.get(topic);
  }

  get pending(): number {
    return this.messages.pending;
  }

  /** Writes what is pending now; throws what the database throws, keeping the rows. */
  flush(): void {
    this.messages.flush();
  }

  /** Writes what is pending; the broker calls it when it stops, before the database closes. */
  stop(): void {
    this.messages.stop();
  }

  private write(batch: ReadonlyMap<string, RetainedMessage | null>): void {
    const sqlite = this.database.sqlite;
    const upsert =
      sqlite.prepare(`INSERT INTO mqtt_retained (topic, payload, qos, updated_at, received_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (topic) DO UPDATE SET payload = excluded.payload, qos = excluded.qos, updated_at = excluded.updated_at, received_at = excluded.received_at`);
    const remove = sqlite.prepare('DELETE FROM mqtt_retained WHERE topic = ?');
    const at = new Date().toISOString();
    sqlite.transaction(() => {
      for (const [topic, m] of batch) {
        if (m)
          upsert.run(topic, m.payload, m.qos, at, m.receivedAt === null ? null : new Date(m.receivedAt).toISOString());
        else remove.run(topic);
      }
    })();
  }
}
