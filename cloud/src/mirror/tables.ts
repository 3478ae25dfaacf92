import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import type { Migration } from '../db/database.ts';

/**
 * The cloud's read mirror of what each edge owns, filled by the tunnel (snapshot, then
 * deltas) through MirrorStore. Every row is keyed by its edge; rows go with the edge.
 */
export const mirrorDevices = sqliteTable(
  'mirror_devices',
  {
    edgeId: integer('edge_id').notNull(),
    id: integer('id').notNull(),
    name: text('name').notNull(),
    manufacturer: text('manufacturer'),
    model: text('model'),
    swVersion: text('sw_version'),
    /** JSON string[] */
    identifiers: text('identifiers').notNull().default('[]'),
    configEntryId: integer('config_entry_id'),
    userId: text('user_id'),
    /** the device it connects through (HA's via_device_id), by id on the same edge */
    viaDeviceId: integer('via_device_id'),
    /** its area (HA's area_id), an area of the same edge */
    areaId: text('area_id'),
  },
  (t) => [primaryKey({ columns: [t.edgeId, t.id] })],
);

/** Registry record and current state in one row; a state may arrive for an entity without a record (id null). */
export const mirrorEntities = sqliteTable(
  'mirror_entities',
  {
    edgeId: integer('edge_id').notNull(),
    entityId: text('entity_id').notNull(),
    id: integer('id'),
    name: text('name').notNull(),
    domain: text('domain').notNull(),
    platform: text('platform').notNull(),
    uniqueId: text('unique_id'),
    configEntryId: integer('config_entry_id'),
    deviceRegistryId: integer('device_registry_id'),
    /** false when only a state is known (no registry record) */
    registered: integer('registered', { mode: 'boolean' }).notNull(),
    state: text('state'),
    /** JSON object */
    attributes: text('attributes').notNull().default('{}'),
    lastChanged: text('last_changed'),
    lastUpdated: text('last_updated'),
    /** HA's disabled_by from the edge's record; a disabled entity has no state and is in no state listing */
    disabledBy: text('disabled_by'),
    /** JSON: HA's entity registry settings of the record (entity_category, area_id, name_by_user, icon, hidden_by); only shown, never queried */
    settings: text('settings'),
  },
  (t) => [primaryKey({ columns: [t.edgeId, t.entityId] })],
);

/** The edges' area registries (HA's area ids are per edge). */
export const mirrorAreas = sqliteTable(
  'mirror_areas',
  {
    edgeId: integer('edge_id').notNull(),
    areaId: text('area_id').notNull(),
    name: text('name').notNull(),
  },
  (t) => [primaryKey({ columns: [t.edgeId, t.areaId] })],
);

export const mirrorConfigEntries = sqliteTable(
  'mirror_config_entries',
  {
    edgeId: integer('edge_id').notNull(),
    id: integer('id').notNull(),
    domain: text('domain').notNull(),
    title: text('title').notNull(),
    source: text('source').notNull(),
    state: text('state').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.edgeId, t.id] })],
);

export const mirrorAutomations = sqliteTable(
  'mirror_automations',
  {
    edgeId: integer('edge_id').notNull(),
    id: text('id').notNull(),
    alias: text('alias').notNull(),
    enabled: integer('enabled', { mode: 'boolean' }).notNull(),
    mode: text('mode').notNull(),
    webhookId: text('webhook_id'),
  },
  (t) => [primaryKey({ columns: [t.edgeId, t.id] })],
);

/** Sync position per edge: the last sequence applied (for resume after a reconnect). */
export const mirrorSync = sqliteTable('mirror_sync', {
  edgeId: integer('edge_id').primaryKey(),
  seq: integer('seq'),
  snapshotAt: text('snapshot_at'),
  updatedAt: text('updated_at').notNull(),
  /** bumped by every write to the edge's mirror: readers on any replica can tell their cached copy is current */
  version: integer('version').notNull().default(0),
});

export const mirrorMigrations: Migration[] = [
  {
    id: 'mirror-001-init',
    sql: `
      CREATE TABLE mirror_devices (
        edge_id INTEGER NOT NULL REFERENCES edges(id) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        name TEXT NOT NULL,
        manufacturer TEXT,
        model TEXT,
        sw_version TEXT,
        identifiers TEXT NOT NULL DEFAULT '[]',
        config_entry_id INTEGER,
        user_id TEXT,
        PRIMARY KEY (edge_id, id)
      );
      CREATE TABLE mirror_entities (
        edge_id INTEGER NOT NULL REFERENCES edges(id) ON DELETE CASCADE,
        entity_id TEXT NOT NULL,
        id INTEGER,
        name TEXT NOT NULL,
        domain TEXT NOT NULL,
        platform TEXT NOT NULL,
        unique_id TEXT,
        config_entry_id INTEGER,
        device_registry_id INTEGER,
        registered INTEGER NOT NULL,
        state TEXT,
        attributes TEXT NOT NULL DEFAULT '{}',
        last_changed TEXT,
        last_updated TEXT,
        PRIMARY KEY (edge_id, entity_id)
      );
      CREATE INDEX mirror_entities_device ON mirror_entities(edge_id, device_registry_id);
      CREATE INDEX mirror_entities_registry_id ON mirror_entities(edge_id, id);
      CREATE TABLE mirror_config_entries (
        edge_id INTEGER NOT NULL REFERENCES edges(id) ON DELETE CASCADE,
        id INTEGER NOT NULL,
        domain TEXT NOT NULL,
        title TEXT NOT NULL,
        source TEXT NOT NULL,
        state TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (edge_id, id)
      );
      CREATE TABLE mirror_automations (
        edge_id INTEGER NOT NULL REFERENCES edges(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        alias TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        mode TEXT NOT NULL,
        webhook_id TEXT,
        PRIMARY KEY (edge_id, id)
      );
      CREATE TABLE mirror_sync (
        edge_id INTEGER PRIMARY KEY REFERENCES edges(id) ON DELETE CASCADE,
        seq INTEGER,
        snapshot_at TEXT,
        updated_at TEXT NOT NULL
      );
    `,
  },
  {
    // Webhook lookups (AutomationDirectory.findWebhook) go by webhook_id. IF NOT EXISTS: earlier
    // releases created this index at runtime, so databases that already have it migrate cleanly.
    id: 'mirror-002-webhook-index',
    sql: 'CREATE INDEX IF NOT EXISTS mirror_automations_webhook ON mirror_automations(webhook_id);',
  },
  {
    id: 'mirror-003-version',
    sql: 'ALTER TABLE mirror_sync ADD COLUMN version INTEGER NOT NULL DEFAULT 0;',
  },
];

/** Disabled entities (the edge's disabled_by) and devices' via_device_id: appended at the end of the module list. */
export const mirrorDisabledMigrations: Migration[] = [
  { id: 'mirror-004-disabled-by', sql: 'ALTER TABLE mirror_entities ADD COLUMN disabled_by TEXT;' },
  { id: 'mirror-005-via-device', sql: 'ALTER TABLE mirror_devices ADD COLUMN via_device_id INTEGER;' },
];

/** Areas, devices' and entities' area_id, and entities' other registry settings: appended after mirrorDisabledMigrations. */
export const mirrorRegistryMigrations: Migration[] = [
  {
    id: 'mirror-006-registry-settings',
    sql: `
      ALTER TABLE mirror_entities ADD COLUMN settings TEXT;
      ALTER TABLE mirror_devices ADD COLUMN area_id TEXT;
      CREATE TABLE mirror_areas (
        edge_id INTEGER NOT NULL REFERENCES edges(id) ON DELETE CASCADE,
        area_id TEXT NOT NULL,
        name TEXT NOT NULL,
        PRIMARY KEY (edge_id, area_id)
      );
    `,
  },
];
