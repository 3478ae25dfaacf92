import { eq } from 'drizzle-orm';
import type { Device } from '@smarthome/protocol';
import type { EventBus } from '../bus.ts';
import type { EdgeDatabase } from '../db/database.ts';
import { devices, entities } from '../db/schema.ts';
import type { AreaRegistry } from './areas.ts';
import { loadDeviceRows } from './load.ts';
import { toDevice, type DeviceInput, type DeviceLinks } from './records.ts';

const now = () => new Date().toISOString();

/**
 * The device registry: SQLite is the truth, an in-memory copy answers reads (load() reads it);
 * changes are announced on the bus. The Registry detaches a removed device's entities (remove()).
 */
export class DeviceRegistry {
  private readonly database: EdgeDatabase;
  private readonly bus: EventBus;
  private readonly areas: AreaRegistry;
  private readonly byId = new Map<number, Device>();
  private readonly byIdentifier = new Map<string, number>();
  private readonly links = new Map<number, DeviceLinks>();

  constructor(database: EdgeDatabase, bus: EventBus, areas: AreaRegistry) {
    this.database = database;
    this.bus = bus;
    this.areas = areas;
  }

  load(): void {
    this.byId.clear();
    this.byIdentifier.clear();
    this.links.clear();
    for (const row of loadDeviceRows(this.database.sqlite)) {
      this.index(toDevice(row));
      this.links.set(row.id, { via_device_id: row.viaDeviceId, area_id: row.areaId });
    }
  }

  list(): Device[] {
    return [...this.byId.values()];
  }

  get(id: number): Device | undefined {
    return this.byId.get(id);
  }

  find(identifiers: string[]): Device | undefined {
    for (const ident of identifiers) {
      const id = this.byIdentifier.get(ident);
      if (id !== undefined) return this.byId.get(id);
    }
    return undefined;
  }

  /** The device's parent (via_device) and area. */
  linksOf(id: number): DeviceLinks {
    return this.links.get(id) ?? { via_device_id: null, area_id: null };
  }

  /**
   * Matches an existing device by any identifier; updates it only when something changed. As HA's
   * device registry: `via_device` links it to the device with that identifier (created, named after
   * the identifier, when unknown); `suggested_area` puts it into that area while it has none.
   */
  upsert(input: DeviceInput): Device {
    const device = this.upsertRow(input);
    const links = this.linksOf(device.id);
    const next = { ...links };
    if (input.via_device && !(device.identifiers ?? []).includes(input.via_device)) {
      const parent =
        this.find([input.via_device]) ??
        this.upsertRow({
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

  private upsertRow(input: DeviceInput): Device {
    if (input.identifiers.length === 0) throw new Error('a device needs at least one identifier');
    const existing = this.find(input.identifiers);
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
      this.index(merged);
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
    this.index(device);
    this.bus.emit('device_upsert', { device });
    return device;
  }

  /**
   * Removes a device; its entities stay but lose their device link. `detachEntities` updates the
   * entity registry's copy; it runs after the children's announcements and before the device's
   * removal is announced (the order the events have always had).
   */
  remove(id: number, detachEntities: () => void): boolean {
    const device = this.byId.get(id);
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
      const child = this.byId.get(childId);
      if (child) this.bus.emit('device_upsert', { device: child });
    }
    detachEntities();
    this.byId.delete(id);
    for (const ident of device.identifiers ?? [])
      if (this.byIdentifier.get(ident) === id) this.byIdentifier.delete(ident);
    this.bus.emit('device_remove', { id });
    return true;
  }

  private index(device: Device): void {
    this.byId.set(device.id, device);
    for (const ident of device.identifiers ?? []) this.byIdentifier.set(ident, device.id);
  }
}
