import { and, eq } from 'drizzle-orm';
import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { EntityState } from '@smarthome/protocol';
import type { CloudDatabase, Migration } from '../db/database.ts';

export const voiceExposure = sqliteTable(
  'voice_exposure',
  {
    userId: text('user_id').notNull(),
    entityId: text('entity_id').notNull(),
    exposed: integer('exposed', { mode: 'boolean' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.entityId] })],
);

export const voiceMigrations: Migration[] = [
  {
    id: 'voice-001-init',
    sql: `CREATE TABLE voice_exposure (
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    entity_id TEXT NOT NULL,
    exposed INTEGER NOT NULL,
    PRIMARY KEY (user_id, entity_id)
  );`,
  },
];

/** Like Home Assistant: controllable domains are exposed unless the user hides them. */
const EXPOSED_BY_DEFAULT = new Set([
  'light',
  'switch',
  'fan',
  'cover',
  'lock',
  'climate',
  'scene',
  'script',
  'media_player',
]);

export class VoiceExposure {
  private readonly database: CloudDatabase;
  constructor(database: CloudDatabase) {
    this.database = database;
  }
  async list(userId: string, states: EntityState[]) {
    const rows = await this.database.db.select().from(voiceExposure).where(eq(voiceExposure.userId, userId)).all();
    const chosen = new Map(rows.map((r) => [r.entityId, r.exposed]));
    return states.map((s) => ({
      entity_id: s.entity_id,
      name: s.name,
      domain: s.domain,
      state: s.state,
      attributes: s.attributes,
      exposed: chosen.get(s.entity_id) ?? EXPOSED_BY_DEFAULT.has(s.domain),
    }));
  }
  async set(userId: string, entityId: string, exposed: boolean): Promise<void> {
    const db = this.database.db;
    const existing = await db
      .select()
      .from(voiceExposure)
      .where(and(eq(voiceExposure.userId, userId), eq(voiceExposure.entityId, entityId)))
      .get();
    if (existing)
      await db
        .update(voiceExposure)
        .set({ exposed })
        .where(and(eq(voiceExposure.userId, userId), eq(voiceExposure.entityId, entityId)));
    else await db.insert(voiceExposure).values({ userId, entityId, exposed });
  }
}
