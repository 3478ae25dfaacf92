import { eq } from 'drizzle-orm';
import type { ConfigEntry, Device, EntityRecord } from '@smarthome/protocol';
import type { EventBus } from '../bus.ts';
import type { EdgeDatabase } from '../db/database.ts';
import { entities } from '../db/schema.ts';
import { AreaRegistry } from './areas.ts';
import { DeviceRegistry } from './devices.ts';
import { loadEntityRows } from './load.ts';
import { ConfigEntryRegistry, type ConfigEntryInput, type StoredConfigEntry } from './config-entries.ts';
import {
  toEntity,
  toRecord,
  type DeviceInput,
  type DeviceLinks,
  type DisabledBy,
  type EntityInput,
  type EntitySettings,
  type RegistryEntity,
  slugify,
} from './records.ts';

export * from './records.ts';
export type { ConfigEntryInput, StoredConfigEntry } from './config-entries.ts';

const now = () => new Date().toISOString();

/**
 * Device registry, entity registry and config entries: SQLite is the truth, an in-memory
 * copy answers reads. Every change is announced on the bus (for tunnel deltas).
 * Lifecycle: load() reads everything; there is nothing to stop.
 */
export class Registry {
  private readonly database: EdgeDatabase;
  private readonly bus: EventBus;
  private readonly entityById = new Map<string, RegistryEntity>();
  private readonly entityByUnique = new Map<string, string>();
  readonly areas: AreaRegistry;
  private readonly configEntries: ConfigEntryRegistry;
  private readonly devices: DeviceRegistry;

  constructor(database: EdgeDatabase, bus: EventBus) {
    this.database = database;
    this.bus = bus;
    this.areas = new AreaRegistry(database, bus);
    this.configEntries = new ConfigEntryRegistry(database, bus);
    this.devices = new DeviceRegistry(database, bus, this.areas);
  }

  load(): void {
    const sqlite = this.database.sqlite;
    this.entityById.clear();
    this.entityByUnique.clear();
    this.areas.load();
    this.configEntries.load();
    this.devices.load();
    for (const row of loadEntityRows(sqlite)) this.indexEntity(toEntity(row));
  }

  // ---- config entries (config-entries.ts) ----

  listConfigEntries(): ConfigEntry[] {
    return this.configEntries.list();
  }

  getConfigEntry(id: number): StoredConfigEntry | undefined {
    return this.configEntries.get(id);
  }

  addConfigEntry(input: ConfigEntryInput): ConfigEntry {
    return this.configEntries.add(input);
  }

  updateConfigEntry(id: number, patch: { state?: string; data?: Record<string, unknown>; title?: string }): boolean {
    return this.configEntries.update(id, patch);
  }

  /** The entry of a built-in integration (e.g. mqtt), created once. */
  ensureConfigEntry(domain: string, title: string, source = 'system'): ConfigEntry {
    return this.configEntries.ensure(domain, title, source);
  }

  /** Removes the entry with its devices and entities. */
  removeConfigEntry(id: number): boolean {
    if (!this.configEntries.get(id)) return false;
    for (const e of [...this.entityById.values()]) if (e.config_entry_id === id) this.removeEntity(e.entity_id);
    for (const d of this.devices.list()) if (d.config_entry_id === id) this.removeDevice(d.id);
    return this.configEntries.remove(id);
  }

  // ---- devices (devices.ts) ----

  listDevices(): Device[] {
    return this.devices.list();
  }

  getDevice(id: number): Device | undefined {
    return this.devices.get(id);
  }

  findDevice(identifiers: string[]): Device | undefined {
    return this.devices.find(identifiers);
  }

  /** The device's parent (via_device) and area. */
  deviceLinks(id: number): DeviceLinks {
    return this.devices.linksOf(id);
  }

  /**
   * Matches an existing device by any identifier; updates it only when something changed. As HA's
   * device registry: `via_device` links it to the device with that identifier (created, named after
   * the identifier, when unknown); `suggested_area` puts it into that area while it has none.
   */
  upsertDevice(input: DeviceInput): Device {
    return this.devices.upsert(input);
  }

  /** Removes a device; its entities stay but lose their device link. */
  removeDevice(id: number): boolean {
    return this.devices.remove(id, () => {
      for (const e of this.entityById.values()) {
        if (e.device_registry_id === id) {
          e.device_registry_id = null;
          this.bus.emit('entity_upsert', { entity: toRecord(e) });
        }
      }
    });
  }

  // ---- entities ----

  listEntities(): EntityRecord[] {
    return [...this.entityById.values()].map(toRecord);
  }

  /** Registry rows including platform config (internal use). */
  entitiesWithConfig(platform?: string): RegistryEntity[] {
    const all = [...this.entityById.values()];
    return platform ? all.filter((e) => e.platform === platform) : all;
  }

  getEntity(entityId: string): RegistryEntity | undefined {
    return this.entityById.get(entityId);
  }

  getEntityByUniqueId(platform: string, uniqueId: string): RegistryEntity | undefined {
    const entityId = this.entityByUnique.get(`${platform}\u0000${uniqueId}`);
    return entityId ? this.entityById.get(entityId) : undefined;
  }

  entitiesOfDevice(deviceId: number): EntityRecord[] {
    return [...this.entityById.values()].filter((e) => e.device_registry_id === deviceId).map(toRecord);
  }

  /** Creates or updates by (platform, unique_id); entity_id is assigned once and kept. */
  upsertEntity(input: EntityInput): RegistryEntity {
    const db = this.database.db;
    const existing = this.getEntityByUniqueId(input.platform, input.unique_id);
    const config = input.config ?? {};
    if (existing) {
      const next: RegistryEntity = {
        ...existing,
        name: input.name,
        config_entry_id: input.config_entry_id ?? null,
        device_registry_id: input.device_registry_id ?? null,
        config,
        entity_category: input.entity_category ?? null,
      };
      if (JSON.stringify(next) === JSON.stringify(existing)) return existing;
      db.update(entities)
        .set({
          name: next.name,
          configEntryId: next.config_entry_id,
          deviceRegistryId: next.device_registry_id,
          config,
          entityCategory: next.entity_category,
        })
        .where(eq(entities.id, existing.id))
        .run();
      this.indexEntity(next);
      this.bus.emit('entity_upsert', { entity: toRecord(next) });
      return next;
    }
    const entityId = this.freeEntityId(input.domain, input.suggested_object_id);
    const row = db
      .insert(entities)
      .values({
        entityId,
        uniqueId: input.unique_id,
        platform: input.platform,
        domain: input.domain,
        name: input.name,
        configEntryId: input.config_entry_id ?? null,
        deviceRegistryId: input.device_registry_id ?? null,
        config,
        createdAt: now(),
        disabledBy: input.disabled_by ?? null,
        entityCategory: input.entity_category ?? null,
      })
      .returning()
      .get();
    const entity = toEntity(row);
    this.indexEntity(entity);
    this.bus.emit('entity_upsert', { entity: toRecord(entity) });
    return entity;
  }

  /**
   * Replaces the platform config of existing entities, all in one transaction (no event: the
   * config is not part of the wire record). Unknown entity ids are skipped.
   */
  setEntityConfigs(changes: { entity_id: string; config: Record<string, unknown> }[]): void {
    const known = changes.filter((c) => this.entityById.has(c.entity_id));
    this.database.db.transaction((tx) => {
      for (const c of known)
        tx.update(entities).set({ config: c.config }).where(eq(entities.entityId, c.entity_id)).run();
    });
    for (const c of known)
      this.indexEntity({ ...(this.entityById.get(c.entity_id) as RegistryEntity), config: c.config });
  }

  /** Enables (null) or disables an entity; announced as an entity_upsert. False when unknown. */
  setDisabledBy(entityId: string, disabledBy: DisabledBy | null): boolean {
    const entity = this.entityById.get(entityId);
    if (!entity) return false;
    if (entity.disabled_by === disabledBy) return true;
    this.database.db.update(entities).set({ disabledBy }).where(eq(entities.entityId, entityId)).run();
    const next = { ...entity, disabled_by: disabledBy };
    this.indexEntity(next);
    this.bus.emit('entity_upsert', { entity: toRecord(next) });
    return true;
  }

  /**
   * The user's settings of an entity (HA's config/entity_registry/update): given keys replace,
   * null clears; announced as an entity_upsert. False when the entity is unknown.
   */
  setEntitySettings(entityId: string, settings: EntitySettings): boolean {
    const entity = this.entityById.get(entityId);
    if (!entity) return false;
    const given = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
    const next: RegistryEntity = { ...entity, ...given };
    if (JSON.stringify(next) === JSON.stringify(entity)) return true;
    this.database.db
      .update(entities)
      .set({ nameByUser: next.name_by_user, icon: next.icon, areaId: next.area_id, hiddenBy: next.hidden_by })
      .where(eq(entities.entityId, entityId))
      .run();
    this.indexEntity(next);
    this.bus.emit('entity_upsert', { entity: toRecord(next) });
    return true;
  }

  /**
   * HA's rename (new_entity_id): the entity keeps its row, unique_id and settings under the new id;
   * announced as the old id removed and the new one added (what the cloud's mirror follows).
   * Returns HA's refusal message, or null when renamed.
   */
  renameEntity(entityId: string, newEntityId: string): string | null {
    const entity = this.entityById.get(entityId);
    if (!entity) return 'Entity not found';
    if (newEntityId === entityId) return null;
    if (this.entityById.has(newEntityId)) return 'Entity with this ID is already registered';
    if (!/^(?!_)[\da-z_]+(?<!_)\.(?!_)[\da-z_]+(?<!_)$/.test(newEntityId)) return 'Invalid entity ID';
    if (newEntityId.split('.')[0] !== entity.domain) return 'New entity ID should be same domain';
    this.database.db.update(entities).set({ entityId: newEntityId }).where(eq(entities.entityId, entityId)).run();
    this.entityById.delete(entityId);
    const next = { ...entity, entity_id: newEntityId };
    this.indexEntity(next);
    this.bus.emit('entity_remove', { entity_id: entityId });
    this.bus.emit('entity_upsert', { entity: toRecord(next) });
    return null;
  }

  removeEntity(entityId: string): boolean {
    const entity = this.entityById.get(entityId);
    if (!entity) return false;
    this.database.db.delete(entities).where(eq(entities.entityId, entityId)).run();
    this.entityById.delete(entityId);
    this.entityByUnique.delete(`${entity.platform}\u0000${entity.unique_id}`);
    this.bus.emit('entity_remove', { entity_id: entityId });
    return true;
  }

  private freeEntityId(domain: string, objectId: string): string {
    const base = `${domain}.${slugify(objectId)}`;
    if (!this.entityById.has(base)) return base;
    for (let i = 2; ; i++) {
      const candidate = `${base}_${i}`;
      if (!this.entityById.has(candidate)) return candidate;
    }
  }

  private indexEntity(entity: RegistryEntity): void {
    this.entityById.set(entity.entity_id, entity);
    this.entityByUnique.set(`${entity.platform}\u0000${entity.unique_id}`, entity.entity_id);
  }
}
