/**
 * What the config-flow module needs from the edge core. The core wires its registry,
 * state machine and database to these ports; memory-ports.ts has in-memory versions
 * used by the tests (and usable as a reference for the adapters).
 *
 * Every method may answer synchronously (better-sqlite3) or with a promise.
 */
import type { ConfigEntry, Device, EntityRecord } from '@smarthome/protocol';

export type MaybePromise<T> = T | Promise<T>;

/** A config entry as stored: the wire shape plus the integration's private data (never sent to clients). */
export interface StoredConfigEntry extends ConfigEntry {
  data: Record<string, unknown>;
}

export interface NewConfigEntry {
  domain: string;
  title: string;
  data: Record<string, unknown>;
  /** how the entry was created: "user" for config flows */
  source: string;
}

export interface ConfigEntryStore {
  /** Persists a new entry with state "not_loaded" and a fresh integer id. */
  create(input: NewConfigEntry): MaybePromise<StoredConfigEntry>;
  list(): MaybePromise<StoredConfigEntry[]>;
  get(id: number): MaybePromise<StoredConfigEntry | undefined>;
  /** Changes state ("loaded", "setup_error", "not_loaded") and/or data (e.g. refreshed tokens). */
  update(id: number, patch: { state?: string; data?: Record<string, unknown>; title?: string }): MaybePromise<void>;
  /** true when an entry was removed */
  remove(id: number): MaybePromise<boolean>;
}

export interface DeviceInput {
  config_entry_id: number;
  name: string;
  manufacturer?: string | null;
  model?: string | null;
  sw_version?: string | null;
  /** stable identifiers; a device with the same config entry and first identifier is updated, not duplicated */
  identifiers: string[];
}

export interface EntityInput {
  config_entry_id: number;
  device_registry_id: number | null;
  /** integration domain that provides the entity (e.g. "demo") */
  platform: string;
  /** entity domain (light, switch, sensor, binary_sensor, cover, …) */
  domain: string;
  /** stable per platform; (platform, unique_id) identifies the entity across restarts */
  unique_id: string;
  name: string;
  /** object id wanted for the entity_id; the registry appends _2, _3… on collision */
  suggested_object_id: string;
}

export interface RemovedRegistryItems {
  device_ids: number[];
  entity_ids: string[];
}

export interface DeviceRegistryPort {
  /** Creates or updates the device matched by (config_entry_id, identifiers[0]). */
  upsertDevice(input: DeviceInput): MaybePromise<Device>;
  /** Creates or updates the entity matched by (platform, unique_id); returns it with its final entity_id. */
  upsertEntity(input: EntityInput): MaybePromise<EntityRecord>;
  /** Removes every device and entity linked to the config entry. */
  removeByConfigEntry(configEntryId: number): MaybePromise<RemovedRegistryItems>;
}

export interface StatePort {
  /** The entity's last published state (restored from storage after a restart), if any. */
  get(entityId: string): MaybePromise<{ state: string | null; attributes: Record<string, unknown> } | undefined>;
  /** Publishes a state (fires state_changed in the core). */
  set(entityId: string, state: string, attributes?: Record<string, unknown>): MaybePromise<void>;
  /** Forgets the state of a removed entity. */
  remove(entityId: string): MaybePromise<void>;
}

/**
 * An integration's answer to service calls for its own entities (those whose registry
 * `platform` is `platform`), like the MQTT platform does for discovered entities.
 */
export interface EntityServicePlatform {
  readonly platform: string;
  /** services offered for entities of `domain` (e.g. light → turn_on, turn_off, toggle) */
  supportedServices(domain: string): string[];
  /** Carries the service out (publishing the new state); throws ServiceError (→ 400) on bad data. */
  callService(entityId: string, service: string, data: Record<string, unknown>): MaybePromise<void>;
}

export interface ServicePlatformPort {
  /** Routes `domain.service` calls on the platform's entities to it; returns the unregister function. */
  register(platform: EntityServicePlatform): () => void;
}
