import type Database from 'better-sqlite3';
import type { devices, entities } from '../db/schema.ts';

/**
 * The start-up reads of the registry (every device and entity) as raw prepared statements: rows
 * come back as arrays and are shaped here, in the column order of the SELECT. Through drizzle
 * the same reads spent most of their time in its generic row mapping (mapResultRow); the shape
 * and the JSON parsing are the same as drizzle's for these columns (schema.ts, mode 'json').
 */
type DeviceRow = typeof devices.$inferSelect;
type EntityRow = typeof entities.$inferSelect;

const DEVICE_COLUMNS =
  'id, name, manufacturer, model, sw_version, identifiers, config_entry_id, user_id, created_at, updated_at, via_device_id, area_id';

export function loadDeviceRows(sqlite: Database.Database): DeviceRow[] {
  const rows = sqlite.prepare(`SELECT ${DEVICE_COLUMNS} FROM devices`).raw().all() as unknown[][];
  return rows.map((r): DeviceRow => ({
    id: r[0] as number,
    name: r[1] as string,
    manufacturer: r[2] as string | null,
    model: r[3] as string | null,
    swVersion: r[4] as string | null,
    identifiers: JSON.parse(r[5] as string) as string[],
    configEntryId: r[6] as number | null,
    userId: r[7] as string | null,
    createdAt: r[8] as string,
    updatedAt: r[9] as string,
    viaDeviceId: r[10] as number | null,
    areaId: r[11] as string | null,
  }));
}

const ENTITY_COLUMNS =
  'id, entity_id, unique_id, platform, domain, name, config_entry_id, device_registry_id, config, created_at, disabled_by, entity_category, area_id, name_by_user, icon, hidden_by';

export function loadEntityRows(sqlite: Database.Database): EntityRow[] {
  const rows = sqlite.prepare(`SELECT ${ENTITY_COLUMNS} FROM entities`).raw().all() as unknown[][];
  return rows.map((r): EntityRow => ({
    id: r[0] as number,
    entityId: r[1] as string,
    uniqueId: r[2] as string,
    platform: r[3] as string,
    domain: r[4] as string,
    name: r[5] as string,
    configEntryId: r[6] as number | null,
    deviceRegistryId: r[7] as number | null,
    config: JSON.parse(r[8] as string) as Record<string, unknown>,
    createdAt: r[9] as string,
    disabledBy: r[10] as string | null,
    entityCategory: r[11] as string | null,
    areaId: r[12] as string | null,
    nameByUser: r[13] as string | null,
    icon: r[14] as string | null,
    hiddenBy: r[15] as string | null,
  }));
}
