import { eq } from 'drizzle-orm';
import type { ConfigEntry } from '@smarthome/protocol';
import type { EventBus } from '../bus.ts';
import type { EdgeDatabase } from '../db/database.ts';
import { configEntries } from '../db/schema.ts';

export interface ConfigEntryInput {
  domain: string;
  title: string;
  source: string;
  state?: string;
  data?: Record<string, unknown>;
}

/** A config entry with its integration's data (never on the wire). */
export type StoredConfigEntry = ConfigEntry & { data: Record<string, unknown> };

const publicEntry = (e: ConfigEntry): ConfigEntry => ({
  id: e.id,
  domain: e.domain,
  title: e.title,
  source: e.source,
  state: e.state,
  created_at: e.created_at,
});

const toStored = (row: typeof configEntries.$inferSelect): StoredConfigEntry => ({
  id: row.id,
  domain: row.domain,
  title: row.title,
  source: row.source,
  state: row.state,
  created_at: row.createdAt,
  data: row.data,
});

/**
 * Config entries: SQLite is the truth, an in-memory copy answers reads; changes are announced
 * on the bus. The Registry removes an entry's devices and entities before remove().
 */
export class ConfigEntryRegistry {
  private readonly database: EdgeDatabase;
  private readonly bus: EventBus;
  private readonly entries = new Map<number, StoredConfigEntry>();

  constructor(database: EdgeDatabase, bus: EventBus) {
    this.database = database;
    this.bus = bus;
  }

  load(): void {
    this.entries.clear();
    for (const row of this.database.db.select().from(configEntries).all()) this.entries.set(row.id, toStored(row));
  }

  list(): ConfigEntry[] {
    return [...this.entries.values()].map(publicEntry);
  }

  get(id: number): StoredConfigEntry | undefined {
    return this.entries.get(id);
  }

  add(input: ConfigEntryInput): ConfigEntry {
    const row = this.database.db
      .insert(configEntries)
      .values({
        domain: input.domain,
        title: input.title,
        source: input.source,
        state: input.state ?? 'loaded',
        data: input.data ?? {},
        createdAt: new Date().toISOString(),
      })
      .returning()
      .get();
    const entry = toStored(row);
    this.entries.set(entry.id, entry);
    this.bus.emit('config_entry_upsert', { entry: publicEntry(entry) });
    return publicEntry(entry);
  }

  update(id: number, patch: { state?: string; data?: Record<string, unknown>; title?: string }): boolean {
    const entry = this.entries.get(id);
    if (!entry) return false;
    const next = { ...entry, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) };
    this.database.db
      .update(configEntries)
      .set({ state: next.state, data: next.data, title: next.title })
      .where(eq(configEntries.id, id))
      .run();
    this.entries.set(id, next);
    this.bus.emit('config_entry_upsert', { entry: publicEntry(next) });
    return true;
  }

  /** The entry of a built-in integration (e.g. mqtt), created once. */
  ensure(domain: string, title: string, source: string): ConfigEntry {
    for (const e of this.entries.values()) if (e.domain === domain && e.source === source) return publicEntry(e);
    return this.add({ domain, title, source });
  }

  remove(id: number): boolean {
    if (!this.entries.has(id)) return false;
    this.database.db.delete(configEntries).where(eq(configEntries.id, id)).run();
    this.entries.delete(id);
    this.bus.emit('config_entry_remove', { id });
    return true;
  }
}
