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
