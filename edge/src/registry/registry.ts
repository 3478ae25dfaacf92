import { eq } from 'drizzle-orm';
import type { ConfigEntry, Device, EntityRecord } from '@smarthome/protocol';
import type { EventBus } from '../bus.ts';
import type { EdgeDatabase } from '../db/database.ts';
import { configEntries, devices, entities } from '../db/schema.ts';
import { AreaRegistry } from './areas.ts';

/** An entity registry row: the wire record plus the platform's own settings. */
export interface RegistryEntity extends EntityRecord {
  config: Record<string, unknown>;
  /** HA's disabled_by: null when enabled; a disabled entity has no state */
  disabled_by: DisabledBy | null;
}

export type DisabledBy = 'integration' | 'user';

export interface DeviceInput {
  identifiers: string[];
  name: string;
  manufacturer?: string | null;
  model?: string | null;
  sw_version?: string | null;
  config_entry_id?: number | null;
  /** an identifier of the device this one connects through (HA's via_device; created when unknown) */
  via_device?: string | null;
  /** HA's suggested_area: the device goes into that area (created when missing) while it has none */
  suggested_area?: string | null;
}

/** What HA's device registry keeps besides the wire Device: the parent device and the area. */
export interface DeviceLinks {
  via_device_id: number | null;
  area_id: string | null;
}

export interface EntityInput {
  platform: string;
  unique_id: string;
  domain: string;
  name: string;
  /** object id to derive entity_id from on creation (slugified); entity_id never changes afterwards */
  suggested_object_id: string;
  config_entry_id?: number | null;
  device_registry_id?: number | null;
  config?: Record<string, unknown>;
  /** only when the entity is created (HA's enabled_by_default); afterwards setDisabledBy decides */
  disabled_by?: DisabledBy | null;
}

export interface ConfigEntryInput {
  domain: string;
  title: string;
  source: string;
  state?: string;
  data?: Record<string, unknown>;
}

export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return slug || 'unnamed';
}

const now = () => new Date().toISOString();

/**
 * Device registry, entity registry and config entries: SQLite is the truth, an in-memory
 * copy answers reads. Every change is announced on the bus (for tunnel deltas).
 * Lifecycle: load() reads everything; there is nothing to stop.
 */
export class Registry {
  private readonly database: EdgeDatabase;
  private readonly bus: EventBus;
  private readonly deviceById = new Map<number, Device>();
  private readonly deviceByIdentifier = new Map<string, number>();
  private readonly entityById = new Map<string, RegistryEntity>();
  private readonly entityByUnique = new Map<string, string>();
  private readonly entries = new Map<number, ConfigEntry & { data: Record<string, unknown> }>();
  private readonly links = new Map<number, DeviceLinks>();
  readonly areas: AreaRegistry;

  constructor(database: EdgeDatabase, bus: EventBus) {
    this.database = database;
    this.bus = bus;
    this.areas = new AreaRegistry(database);
  }

  load(): void {
    const db = this.database.db;
    this.deviceById.clear();
    this.deviceByIdentifier.clear();
    this.entityById.clear();
    this.entityByUnique.clear();
    this.entries.clear();
    this.links.clear();
    this.areas.load();
    for (const row of db.select().from(configEntries).all()) {
      this.entries.set(row.id, {
        id: row.id,
        domain: row.domain,
        title: row.title,
        source: row.source,
        state: row.state,
        created_at: row.createdAt,
        data: row.data,
      });
    }
    for (const row of db.select().from(devices).all()) {
      this.indexDevice(toDevice(row));
      this.links.set(row.id, { via_device_id: row.viaDeviceId, area_id: row.areaId });
    }
    for (const row of db.select().from(entities).all()) this.indexEntity(toEntity(row));
  }

  // ---- config entries ----

  listConfigEntries(): ConfigEntry[] {
    return [...this.entries.values()].map(publicEntry);
  }

  getConfigEntry(id: number): (ConfigEntry & { data: Record<string, unknown> }) | undefined {
    return this.entries.get(id);
  }

  addConfigEntry(input: ConfigEntryInput): ConfigEntry {
    const row = this.database.db
      .insert(configEntries)
      .values({
        domain: input.domain,
        title: input.title,
        source: input.source,
        state: input.state ?? 'loaded',
        data: input.data ?? {},
        createdAt: now(),
      })
      .returning()
      .get();
    const entry = {
      id: row.id,
      domain: row.domain,
      title: row.title,
      source: row.source,
      state: row.state,
      created_at: row.createdAt,
      data: row.data,
    };
    this.entries.set(entry.id, entry);
    this.bus.emit('config_entry_upsert', { entry: publicEntry(entry) });
    return publicEntry(entry);
  }

  updateConfigEntry(id: number, patch: { state?: string; data?: Record<string, unknown>; title?: string }): boolean {
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
  ensureConfigEntry(domain: string, title: string, source = 'system'): ConfigEntry {
    for (const e of this.entries.values()) if (e.domain === domain && e.source === source) return publicEntry(e);
    return this.addConfigEntry({ domain, title, source });
  }

  /** Removes the entry with its devices and entities. */
  removeConfigEntry(id: number): boolean {
    if (!this.entries.has(id)) return false;
    for (const e of [...this.entityById.values()]) if (e.config_entry_id === id) this.removeEntity(e.entity_id);
    for (const d of [...this.deviceById.values()]) if (d.config_entry_id === id) this.removeDevice(d.id);
    this.database.db.delete(configEntries).where(eq(configEntries.id, id)).run();
    this.entries.delete(id);
    this.bus.emit('config_entry_remove', { id });
    return true;
  }

  // ---- devices ----

  listDevices(): Device[] {
    return [...this.deviceById.values()];
  }

  getDevice(id: number): Device | undefined {
    return this.deviceById.get(id);
  }

  findDevice(identifiers: string[]): Device | undefined {
    for (const ident of identifiers) {
      const id = this.deviceByIdentifier.get(ident);
      if (id !== undefined) return this.deviceById.get(id);
    }
    return undefined;
  }

  /** The device's parent (via_device) and area. */
  deviceLinks(id: number): DeviceLinks {
    return this.links.get(id) ?? { via_device_id: null, area_id: null };
  }

  /**
   * Matches an existing device by any identifier; updates it only when something changed. As HA's
   * device registry: `via_device` links it to the device with that identifier (created, named after
   * the identifier, when unknown); `suggested_area` puts it into that area while it has none.
   */
  upsertDevice(input: DeviceInput): Device {
    const device = this.upsertDeviceRow(input);
    const links = this.deviceLinks(device.id);
    const next = { ...links };
    if (input.via_device && !(device.identifiers ?? []).includes(input.via_device)) {
      const parent =
        this.findDevice([input.via_device]) ??
        this.upsertDeviceRow({
          identifiers: [input.via_device],
          name: input.via_device,
          config_entry_id: input.config_entry_id,
        });
      next.via_device_id = parent.id;
    }
    if (input.suggested_area?.trim() && next.area_id === null)
      next.area_id = this.areas.getOrCreate(input.suggested_area).area_id;
    if (next.via_device_id === links.via_device_id && next.area_id === links.area_id) return device;
    this.database.db
      .update(devices)
      .set({ viaDeviceId: next.via_device_id, areaId: next.area_id, updatedAt: now() })
      .where(eq(devices.id, device.id))
      .run();
    this.links.set(device.id, next);
    this.bus.emit('device_upsert', { device });
    return device;
  }

  private upsertDeviceRow(input: DeviceInput): Device {
    if (input.identifiers.length === 0) throw new Error('a device needs at least one identifier');
    const existing = this.findDevice(input.identifiers);
    const db = this.database.db;
    if (existing) {
      const merged: Device = {
        ...existing,
        name: input.name || existing.name,
        manufacturer: input.manufacturer ?? existing.manufacturer,
        model: input.model ?? existing.model,
        sw_version: input.sw_version ?? existing.sw_version ?? null,
        identifiers: [...new Set([...(existing.identifiers ?? []), ...input.identifiers])],
        config_entry_id: input.config_entry_id ?? existing.config_entry_id,
      };
      if (JSON.stringify(merged) === JSON.stringify(existing)) return existing;
      db.update(devices)
        .set({
          name: merged.name,
          manufacturer: merged.manufacturer,
          model: merged.model,
          swVersion: merged.sw_version ?? null,
          identifiers: merged.identifiers ?? [],
          configEntryId: merged.config_entry_id,
          updatedAt: now(),
        })
        .where(eq(devices.id, existing.id))
        .run();
      this.indexDevice(merged);
      this.bus.emit('device_upsert', { device: merged });
      return merged;
    }
    const ts = now();
    const row = db
      .insert(devices)
      .values({
        name: input.name,
        manufacturer: input.manufacturer ?? null,
        model: input.model ?? null,
        swVersion: input.sw_version ?? null,
        identifiers: input.identifiers,
        configEntryId: input.config_entry_id ?? null,
        userId: null,
        createdAt: ts,
        updatedAt: ts,
      })
      .returning()
      .get();
    const device = toDevice(row);
    this.indexDevice(device);
    this.bus.emit('device_upsert', { device });
    return device;
  }

  /** Removes a device; its entities stay but lose their device link. */
  removeDevice(id: number): boolean {
    const device = this.deviceById.get(id);
    if (!device) return false;
    const db = this.database.db;
    db.transaction((tx) => {
      tx.update(entities).set({ deviceRegistryId: null }).where(eq(entities.deviceRegistryId, id)).run();
      // as HA: the devices connected through it lose the link
      tx.update(devices).set({ viaDeviceId: null }).where(eq(devices.viaDeviceId, id)).run();
      tx.delete(devices).where(eq(devices.id, id)).run();
    });
    this.links.delete(id);
    for (const [childId, l] of this.links) {
      if (l.via_device_id !== id) continue;
      l.via_device_id = null;
      // the cloud's mirror keeps the link until it hears the child again
      const child = this.deviceById.get(childId);
      if (child) this.bus.emit('device_upsert', { device: child });
    }
    for (const e of this.entityById.values()) {
      if (e.device_registry_id === id) {
        e.device_registry_id = null;
        this.bus.emit('entity_upsert', { entity: toRecord(e) });
      }
    }
    this.deviceById.delete(id);
    for (const ident of device.identifiers ?? [])
      if (this.deviceByIdentifier.get(ident) === id) this.deviceByIdentifier.delete(ident);
    this.bus.emit('device_remove', { id });
    return true;
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
      };
      if (JSON.stringify(next) === JSON.stringify(existing)) return existing;
      db.update(entities)
        .set({
          name: next.name,
          configEntryId: next.config_entry_id,
          deviceRegistryId: next.device_registry_id,
          config,
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

  private indexDevice(device: Device): void {
    this.deviceById.set(device.id, device);
    for (const ident of device.identifiers ?? []) this.deviceByIdentifier.set(ident, device.id);
  }

  private indexEntity(entity: RegistryEntity): void {
    this.entityById.set(entity.entity_id, entity);
    this.entityByUnique.set(`${entity.platform}\u0000${entity.unique_id}`, entity.entity_id);
  }
}

function publicEntry(e: ConfigEntry): ConfigEntry {
  return { id: e.id, domain: e.domain, title: e.title, source: e.source, state: e.state, created_at: e.created_at };
}

function toDevice(row: typeof devices.$inferSelect): Device {
  return {
    id: row.id,
    name: row.name,
    manufacturer: row.manufacturer,
    model: row.model,
    sw_version: row.swVersion,
    identifiers: row.identifiers,
    config_entry_id: row.configEntryId,
    user_id: row.userId,
  };
}

function toEntity(row: typeof entities.$inferSelect): RegistryEntity {
  return {
    id: row.id,
    entity_id: row.entityId,
    name: row.name,
    domain: row.domain,
    platform: row.platform,
    unique_id: row.uniqueId,
    config_entry_id: row.configEntryId,
    device_registry_id: row.deviceRegistryId,
    config: row.config,
    disabled_by: row.disabledBy === 'integration' || row.disabledBy === 'user' ? row.disabledBy : null,
  };
}

export function toRecord(e: RegistryEntity): EntityRecord {
  return {
    id: e.id,
    entity_id: e.entity_id,
    name: e.name,
    domain: e.domain,
    platform: e.platform,
    unique_id: e.unique_id,
    config_entry_id: e.config_entry_id,
    device_registry_id: e.device_registry_id,
    // only when disabled: an enabled record keeps its old shape (absent means enabled)
    ...(e.disabled_by ? { disabled_by: e.disabled_by } : {}),
  };
}
