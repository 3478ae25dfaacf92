import type { EdgeDatabase } from '../db/database.ts';
import { WriteBehind } from '../db/write-behind.ts';

export interface RetainedMessage { topic: string; payload: Buffer; qos: 0 | 1 | 2 }

/**
 * Retained MQTT messages on disk (table mqtt_retained), so a device's retained state or
 * configuration is still there for subscribers after the edge restarts, as with Mosquitto's
 * persistence. Writes are behind (WriteBehind keyed by topic): a burst of retained publishes
 * costs one write per topic, not one per message; stop() writes what is pending.
 */
export class RetainedStore {
  private readonly database: EdgeDatabase;
  private readonly messages: WriteBehind<RetainedMessage>;

  constructor(database: EdgeDatabase, flushMs = 1000) {
    this.database = database;
    this.messages = new WriteBehind({ delayMs: flushMs, maxBatch: 1000, write: (batch) => this.write(batch) });
  }

  /** Everything stored, for the broker to serve again; writing starts from here on. */
  load(): RetainedMessage[] {
    const rows = this.database.sqlite.prepare('SELECT topic, payload, qos FROM mqtt_retained ORDER BY topic').all() as { topic: string; payload: Buffer; qos: number }[];
    this.messages.start();
    return rows.map((r) => ({ topic: r.topic, payload: Buffer.from(r.payload), qos: (r.qos === 1 || r.qos === 2 ? r.qos : 0) }));
  }

  /** Records a retained publish; an empty payload clears the topic (MQTT semantics). */
  put(message: RetainedMessage): void {
    this.messages.set(message.topic, message.payload.length === 0 ? null : { ...message, payload: Buffer.from(message.payload) });
  }

  /** Writes what is pending; the broker calls it when it stops, before the database closes. */
  stop(): void {
    this.messages.stop();
  }

  private write(batch: ReadonlyMap<string, RetainedMessage | null>): void {
    const sqlite = this.database.sqlite;
    const upsert = sqlite.prepare(`INSERT INTO mqtt_retained (topic, payload, qos, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (topic) DO UPDATE SET payload = excluded.payload, qos = excluded.qos, updated_at = excluded.updated_at`);
    const remove = sqlite.prepare('DELETE FROM mqtt_retained WHERE topic = ?');
    const at = new Date().toISOString();
    sqlite.transaction(() => {
      for (const [topic, m] of batch) {
        if (m) upsert.run(topic, m.payload, m.qos, at);
        else remove.run(topic);
      }
    })();
  }
}
