import type { EdgeDatabase } from '../db/database.ts';
import type { Logger } from '../log.ts';

export interface RetainedMessage { topic: string; payload: Buffer; qos: 0 | 1 | 2 }

/**
 * Retained MQTT messages on disk (table mqtt_retained), so a device's retained state or
 * configuration is still there for subscribers after the edge restarts, as with Mosquitto's
 * persistence. Writes are behind: the latest message per topic is kept in memory and written
 * in one transaction every `flushMs` and at stop, so a burst of retained publishes costs one
 * write per topic, not one per message.
 */
export class RetainedStore {
  private readonly database: EdgeDatabase;
  private readonly log: Logger;
  private readonly flushMs: number;
  /** topic → message, or null for a cleared topic */
  private pending = new Map<string, RetainedMessage | null>();
  private timer: NodeJS.Timeout | null = null;

  constructor(database: EdgeDatabase, log: Logger, flushMs = 1000) {
    this.database = database;
    this.log = log;
    this.flushMs = flushMs;
  }

  /** Everything stored, for the broker to serve again. */
  load(): RetainedMessage[] {
    const rows = this.database.sqlite.prepare('SELECT topic, payload, qos FROM mqtt_retained ORDER BY topic').all() as { topic: string; payload: Buffer; qos: number }[];
    return rows.map((r) => ({ topic: r.topic, payload: Buffer.from(r.payload), qos: (r.qos === 1 || r.qos === 2 ? r.qos : 0) }));
  }

  /** Records a retained publish; an empty payload clears the topic (MQTT semantics). */
  put(message: RetainedMessage): void {
    this.pending.set(message.topic, message.payload.length === 0 ? null : { ...message, payload: Buffer.from(message.payload) });
    this.timer ??= setTimeout(() => { this.timer = null; this.flush(); }, this.flushMs);
    this.timer.unref?.();
  }

  flush(): void {
    if (this.pending.size === 0 || !this.database.isOpen) return;
    const batch = this.pending;
    this.pending = new Map();
    const sqlite = this.database.sqlite;
    const upsert = sqlite.prepare(`INSERT INTO mqtt_retained (topic, payload, qos, updated_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (topic) DO UPDATE SET payload = excluded.payload, qos = excluded.qos, updated_at = excluded.updated_at`);
    const remove = sqlite.prepare('DELETE FROM mqtt_retained WHERE topic = ?');
    const at = new Date().toISOString();
    try {
      sqlite.transaction(() => {
        for (const [topic, m] of batch) {
          if (m) upsert.run(topic, m.payload, m.qos, at);
          else remove.run(topic);
        }
      })();
    } catch (err) {
      this.log.error('retained messages: write failed', err, { topics: batch.size });
    }
  }

  /** Writes what is pending; the broker calls it when it stops, before the database closes. */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flush();
  }
}
