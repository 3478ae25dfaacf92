/**
 * One copy of each short string that thousands of rows repeat ("sensor", "mqtt", "temperature",
 * "°C", the MQTT user that owns the configs): JSON.parse and SQLite give every row its own copy,
 * ~30 bytes each (a heap snapshot at 10,000 entities: "temperature" 20,001 times). Only for
 * fields with few distinct values: the pool keeps the strings it is given, so it stops taking new
 * ones at POOL_LIMIT (an edge whose configs keep changing names must not grow it for good).
 */
const pool = new Map<string, string>();
export const POOL_LIMIT = 50_000;

export function intern(s: string): string {
  const pooled = pool.get(s);
  if (pooled !== undefined) return pooled;
  if (pool.size < POOL_LIMIT) pool.set(s, s);
  return s;
}

/** Strings pooled so far (tests). */
export const pooledCount = (): number => pool.size;

/** Keys whose values differ per entity (topics, ids): not pooled. */
const UNIQUE_KEY = /topic$|^unique_id$|^object_id$|^default_entity_id$/;

/** Pools a config's top-level string values in place (device_class, unit_of_measurement, name, templates …). */
export function internValues(cfg: Record<string, unknown>): void {
  for (const key of Object.keys(cfg)) {
    const value = cfg[key];
    if (typeof value === 'string' && value.length <= 256 && !UNIQUE_KEY.test(key)) cfg[key] = intern(value);
  }
}
