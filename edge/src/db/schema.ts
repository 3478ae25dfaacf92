import { integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/** Drizzle view of the tables created by migrations.ts (keep both in step). */

export const configEntries = sqliteTable('config_entries', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  domain: text('domain').notNull(),
  title: text('title').notNull(),
  source: text('source').notNull(),
  state: text('state').notNull(),
  data: text('data', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
  createdAt: text('created_at').notNull(),
});

export const devices = sqliteTable('devices', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
  manufacturer: text('manufacturer'),
  model: text('model'),
  swVersion: text('sw_version'),
  identifiers: text('identifiers', { mode: 'json' }).$type<string[]>().notNull(),
  configEntryId: integer('config_entry_id'),
  userId: text('user_id'),
  createdAt: text('created_at').notNull(),
  updatedAt: text('updated_at').notNull(),
  viaDeviceId: integer('via_device_id'),
  areaId: text('area_id'),
});

export const areas = sqliteTable('areas', {
  areaId: text('area_id').primaryKey(),
  name: text('name').notNull(),
  createdAt: text('created_at').notNull(),
});

export const entities = sqliteTable(
  'entities',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    entityId: text('entity_id').notNull().unique(),
    uniqueId: text('unique_id').notNull(),
    platform: text('platform').notNull(),
    domain: text('domain').notNull(),
    name: text('name').notNull(),
    configEntryId: integer('config_entry_id'),
    deviceRegistryId: integer('device_registry_id'),
    /** platform-specific settings, e.g. the normalized MQTT discovery config */
    config: text('config', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: text('created_at').notNull(),
    /** HA's disabled_by: null (enabled), "integration", "user" */
    disabledBy: text('disabled_by'),
    /** HA's entity_category: null, "config", "diagnostic" (set by the integration) */
    entityCategory: text('entity_category'),
    /** the user's settings (HA's entity registry area_id, name, icon, hidden_by) */
    areaId: text('area_id'),
    nameByUser: text('name_by_user'),
    icon: text('icon'),
    hiddenBy: text('hidden_by'),
  },
  (t) => [uniqueIndex('entities_platform_unique').on(t.platform, t.uniqueId)],
);

export const states = sqliteTable('states', {
  entityId: text('entity_id').primaryKey(),
  state: text('state'),
  attributes: text('attributes', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
  lastChanged: text('last_changed'),
  lastUpdated: text('last_updated'),
});

export const mqttUsers = sqliteTable('mqtt_users', {
  username: text('username').primaryKey(),
  passwordHash: text('password_hash').notNull(),
  role: text('role', { enum: ['device', 'integration'] }).notNull(),
  createdAt: text('created_at').notNull(),
});

export const localTokens = sqliteTable('local_tokens', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  name: text('name').notNull(),
  tokenHash: text('token_hash').notNull().unique(),
  createdAt: text('created_at').notNull(),
  lastUsedAt: text('last_used_at'),
});

export const schema = { configEntries, devices, areas, entities, states, mqttUsers, localTokens };
