import type Database from 'better-sqlite3';

/**
 * Ordered, append-only schema migrations. PRAGMA user_version records how many ran;
 * start() applies the missing ones in one transaction. Never edit a shipped entry.
 */
export const MIGRATIONS: string[] = [
  `CREATE TABLE config_entries (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     domain TEXT NOT NULL, title TEXT NOT NULL, source TEXT NOT NULL, state TEXT NOT NULL,
     data TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL);
   CREATE TABLE devices (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     name TEXT NOT NULL, manufacturer TEXT, model TEXT, sw_version TEXT,
     identifiers TEXT NOT NULL DEFAULT '[]', config_entry_id INTEGER, user_id TEXT,
     created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
   CREATE TABLE entities (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     entity_id TEXT NOT NULL UNIQUE, unique_id TEXT NOT NULL, platform TEXT NOT NULL, domain TEXT NOT NULL,
     name TEXT NOT NULL, config_entry_id INTEGER, device_registry_id INTEGER,
     config TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL);
   CREATE UNIQUE INDEX entities_platform_unique ON entities(platform, unique_id);
   CREATE TABLE states (
     entity_id TEXT PRIMARY KEY, state TEXT, attributes TEXT NOT NULL DEFAULT '{}',
     last_changed TEXT, last_updated TEXT);
   CREATE TABLE mqtt_users (
     username TEXT PRIMARY KEY, password_hash TEXT NOT NULL, role TEXT NOT NULL, created_at TEXT NOT NULL);
   CREATE TABLE local_tokens (
     id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL, last_used_at TEXT);`,
  // Retained MQTT messages survive a restart, as with Mosquitto's persistence (mqtt/retained-store.ts).
  `CREATE TABLE mqtt_retained (
     topic TEXT PRIMARY KEY, payload BLOB NOT NULL, qos INTEGER NOT NULL, updated_at TEXT NOT NULL);`,
  // When the broker received each retained message, so that replaying it (discovery) never rolls a newer
  // stored state back; null for rows written before (treated as older than any stored state).
  `ALTER TABLE mqtt_retained ADD COLUMN received_at TEXT;`,
  // Recorder (recorder/): state history and events. Times are epoch seconds (REAL), as HA's *_ts
  // columns; last_changed is NULL when it equals last_updated (a real state change), which is
  // also what "significant" means. Entity ids and attribute sets are shared rows, so a history
  // row stays a few integers wide (attributes dedup by hash, like HA's state_attributes, but per
  // entity: sets are hardly ever shared across entities, and purge can then drop an entity's
  // orphaned sets without an index on recorder_states.attributes_id).
  `CREATE TABLE recorder_entities (
     metadata_id INTEGER PRIMARY KEY, entity_id TEXT NOT NULL UNIQUE);
   CREATE TABLE recorder_attributes (
     attributes_id INTEGER PRIMARY KEY, metadata_id INTEGER NOT NULL, hash INTEGER NOT NULL, shared TEXT NOT NULL);
   CREATE INDEX recorder_attributes_entity_hash ON recorder_attributes(metadata_id, hash);
   CREATE TABLE recorder_states (
     state_id INTEGER PRIMARY KEY, metadata_id INTEGER NOT NULL, state TEXT, attributes_id INTEGER,
     last_updated REAL NOT NULL, last_changed REAL, context_id TEXT);
   -- covering: a history query reads the index alone (10x faster than a row lookup per state)
   CREATE INDEX recorder_states_entity_time ON recorder_states(metadata_id, last_updated, state, attributes_id, last_changed);
   CREATE TABLE recorder_events (
     event_id INTEGER PRIMARY KEY, event_type TEXT NOT NULL, data TEXT NOT NULL,
     time_fired REAL NOT NULL, context_id TEXT);
   CREATE INDEX recorder_events_time ON recorder_events(time_fired);
   CREATE TABLE recorder_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  // Local accounts of the portal (edge/src/accounts): scrypt hashes; usernames compare case-insensitively.
  `CREATE TABLE local_accounts (
     id INTEGER PRIMARY KEY AUTOINCREMENT, username TEXT NOT NULL UNIQUE COLLATE NOCASE,
     password_hash TEXT NOT NULL, role TEXT NOT NULL, created_at TEXT NOT NULL);`,
  // Disabled entities (HA's entity registry disabled_by: "integration", "user"): no state, no services.
  // MQTT entities created with enabled_by_default: false kept the flag in their config until now.
  `ALTER TABLE entities ADD COLUMN disabled_by TEXT;
   UPDATE entities SET disabled_by = 'integration' WHERE json_extract(config, '$.disabled') = 1;`,
  // Device links as HA's device registry keeps them: the device a device connects through (MQTT
  // device.via_device) and its area (created from device.suggested_area); areas by id (a slug of the name).
  `ALTER TABLE devices ADD COLUMN via_device_id INTEGER;
   ALTER TABLE devices ADD COLUMN area_id TEXT;
   CREATE TABLE areas (area_id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL);`,
  // Recorder history in (last_updated, state_id) order straight from the index: without state_id
  // among its columns SQLite sorted each entity's rows in a temp b-tree (EXPLAIN QUERY PLAN
  // "USE TEMP B-TREE FOR LAST TERM OF ORDER BY"); a day of 1,000 entities read about 1.5-2x faster.
  `DROP INDEX recorder_states_entity_time;
   CREATE INDEX recorder_states_entity_time ON recorder_states(metadata_id, last_updated, state_id, state, attributes_id, last_changed);`,
  // HA's entity registry settings: entity_category is the integration's (MQTT discovery's, which
  // was only in the stored config until now); area, name, icon and hidden_by are the user's.
  `ALTER TABLE entities ADD COLUMN entity_category TEXT;
   ALTER TABLE entities ADD COLUMN area_id TEXT;
   ALTER TABLE entities ADD COLUMN name_by_user TEXT;
   ALTER TABLE entities ADD COLUMN icon TEXT;
   ALTER TABLE entities ADD COLUMN hidden_by TEXT;
   UPDATE entities SET entity_category = json_extract(config, '$.cfg.entity_category')
     WHERE json_extract(config, '$.cfg.entity_category') IN ('config', 'diagnostic');`,
  // The home's own dashboards (edge/src/dashboards): the cloud's ui-dashboard shape, editable offline.
  `CREATE TABLE ui_dashboards (
     id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, type TEXT NOT NULL, title TEXT NOT NULL,
     icon TEXT NOT NULL, url TEXT, config TEXT NOT NULL, user_id TEXT NOT NULL,
     created_at TEXT NOT NULL, updated_at TEXT NOT NULL);`,
  // Recorder attribute sets indexed by entity only: a new set's entry lands at the end of its
  // entity's range (rowids grow) instead of at a random hash position, so a batch dirties a few
  // index pages instead of one per set (a quarter less CPU per row when every message brings a new
  // set); the recorder finds a set by its hash in memory (recorder/store.ts).
  `DROP INDEX recorder_attributes_entity_hash;
   CREATE INDEX recorder_attributes_entity ON recorder_attributes(metadata_id);`,
  // Recorder attribute sets without an index by entity: a new set is one append to the table, not
  // also an entry in the index that every batch dirtied at ~200 places (its SQL took 4.0 -> 3.2 us
  // a row when every row brings a new set). An entity's known sets are found through its latest
  // rows (the states' covering index), the purge's orphans among the sets of the rows it deleted.
  `DROP INDEX recorder_attributes_entity;`,
  // A recorder row whose attribute set is new carries the set's text itself (attributes_id = minus
  // its own state_id; later rows with the same set point at it the same way): one insert per row
  // instead of a row in recorder_attributes as well (the writer's SQL 3.6 -> 3.1 us a row with a
  // new small set each row, 6.4 -> 5.5 with 350-byte sets). Sets written before (attributes_id > 0)
  // stay in recorder_attributes, where the purge also moves a set whose carrier row it deletes.
  `ALTER TABLE recorder_states ADD COLUMN shared TEXT;`,
  // Recorder blocks (recorder/blocks.ts): an entity's many states of one batch in one row
  // (attributes_id = 0), its states in `data` and their sets in `shared`: a row and an index entry
  // per block instead of per state. Plain rows stay as they are, and readers expand blocks.
  `ALTER TABLE recorder_states ADD COLUMN data TEXT;`,
];

export function migrate(sqlite: Database.Database): number {
  const current = sqlite.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`database schema version ${current} is newer than this edge (${MIGRATIONS.length})`);
  }
  if (current === MIGRATIONS.length) return current;
  sqlite.transaction(() => {
    for (let v = current; v < MIGRATIONS.length; v++) sqlite.exec(MIGRATIONS[v]);
    sqlite.pragma(`user_version = ${MIGRATIONS.length}`);
  })();
  return MIGRATIONS.length;
}
