import type { EventBus } from '../bus.ts';
import type { EdgeDatabase } from '../db/database.ts';
import { areas } from '../db/schema.ts';

export interface Area {
  area_id: string;
  name: string;
}

/** Ids as HA's area registry makes them: the slugified name, `_2`, `_3`… when taken. */
const slug = (name: string) =>
  name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '') || 'area';

/** The area registry: SQLite is the truth, an in-memory copy answers reads (load() reads it); new areas are announced on the bus. */
export class AreaRegistry {
  private readonly database: EdgeDatabase;
  private readonly bus: EventBus;
  private readonly byId = new Map<string, Area>();

  constructor(database: EdgeDatabase, bus: EventBus) {
    this.database = database;
    this.bus = bus;
  }

  load(): void {
    this.byId.clear();
    for (const row of this.database.db.select().from(areas).all())
      this.byId.set(row.areaId, { area_id: row.areaId, name: row.name });
  }

  list(): Area[] {
    return [...this.byId.values()];
  }

  get(areaId: string): Area | undefined {
    return this.byId.get(areaId);
  }

  /** The area of that name (compared as HA does: case and surrounding spaces ignored), created when missing. */
  getOrCreate(name: string): Area {
    const wanted = name.trim().toLowerCase();
    for (const a of this.byId.values()) if (a.name.trim().toLowerCase() === wanted) return a;
    const base = slug(name);
    let id = base;
    for (let i = 2; this.byId.has(id); i++) id = `${base}_${i}`;
    const area = { area_id: id, name: name.trim() };
    this.database.db.insert(areas).values({ areaId: id, name: area.name, createdAt: new Date().toISOString() }).run();
    this.byId.set(id, area);
    this.bus.emit('area_upsert', { area });
    return area;
  }
}
