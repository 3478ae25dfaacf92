import type { Area, ConfigEntry, Device, EntityRecord, EntityState } from '@smarthome/protocol';
import { toDevice, toEntityRecord, toEntityState } from './rows.ts';
import { AnnouncedWrites } from './announced.ts';
import { SQL } from './sql.ts';
import { MirrorWrites } from './writes.ts';

type Row = Record<string, any>;

export interface MirrorCounts {
  devices: number;
  entities: number;
  config_entries: number;
  automations: number;
}

/** `edge_id IN (?, ?, …)`; callers return early for an empty list (an empty IN list is not valid SQL everywhere). */
const inEdges = (edgeIds: readonly number[]) => `edge_id IN (${edgeIds.map(() => '?').join(', ')})`;

/**
 * The read mirror of each edge's registries and states. The tunnel calls replaceSnapshot on
 * (re)connect and applyDelta for each change; reads never go to the edge. Writes of one
 * snapshot or delta are one transaction (writes.ts, MirrorWrites). SQL here is portable (SQLite
 * and PostgreSQL).
 */
export class MirrorStore extends MirrorWrites {
  /** writes announced before their commit: states(), state() and versions() wait for an edge's */
  readonly announced = new AnnouncedWrites();

  /** Last sequence recorded for the edge, or null (no snapshot yet, or none given). */
  async lastSeq(edgeId: number): Promise<number | null> {
    const row = await this.database.one<{ seq: number | null }>(SQL.getSeq, [edgeId]);
    return row?.seq ?? null;
  }

  /** lastSeq of many edges in one query (a reconnect storm's hellos of one tick). */
  async lastSeqs(edgeIds: readonly number[]): Promise<Map<number, number | null>> {
    const out = new Map<number, number | null>(edgeIds.map((id) => [id, null]));
    if (edgeIds.length === 0) return out;
    for (const r of await this.database.query<{ edge_id: number; seq: number | null }>(
      `SELECT edge_id, seq FROM mirror_sync WHERE ${inEdges(edgeIds)}`,
      edgeIds,
    ))
      out.set(r.edge_id, r.seq ?? null);
    return out;
  }

  /** The mirror version of each given edge (0 for an edge never mirrored). */
  async versions(edgeIds: number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>(edgeIds.map((id) => [id, 0]));
    if (edgeIds.length === 0) return out;
    await this.announced.settled(edgeIds);
    for (const r of await this.database.query<{ edge_id: number; version: number }>(
      `SELECT edge_id, version FROM mirror_sync WHERE ${inEdges(edgeIds)}`,
      edgeIds,
    )) {
      out.set(r.edge_id, r.version);
    }
    return out;
  }

  /** Totals over the given edges. */
  async counts(edgeIds: number[]): Promise<MirrorCounts> {
    if (edgeIds.length === 0) return { devices: 0, entities: 0, config_entries: 0, automations: 0 };
    const where = inEdges(edgeIds);
    const row = await this.database.one<MirrorCounts>(
      `SELECT
      (SELECT COUNT(*) FROM mirror_devices WHERE ${where}) AS devices,
      (SELECT COUNT(*) FROM mirror_entities WHERE ${where}) AS entities,
      (SELECT COUNT(*) FROM mirror_config_entries WHERE ${where}) AS config_entries,
      (SELECT COUNT(*) FROM mirror_automations WHERE ${where}) AS automations`,
      [...edgeIds, ...edgeIds, ...edgeIds, ...edgeIds],
    );
    return row!;
  }

  /** Device and entity counts per edge (edges without rows are absent). */
  async countsByEdge(edgeIds: number[]): Promise<Map<number, { devices: number; entities: number }>> {
    const out = new Map<number, { devices: number; entities: number }>();
    if (edgeIds.length === 0) return out;
    const at = (id: number) => {
      let v = out.get(id);
      if (!v) {
        v = { devices: 0, entities: 0 };
        out.set(id, v);
      }
      return v;
    };
    const where = inEdges(edgeIds);
    for (const r of await this.database.query<Row>(
      `SELECT edge_id, COUNT(*) AS n FROM mirror_devices WHERE ${where} GROUP BY edge_id`,
      edgeIds,
    ))
      at(r.edge_id).devices = r.n;
    for (const r of await this.database.query<Row>(
      `SELECT edge_id, COUNT(*) AS n FROM mirror_entities WHERE ${where} GROUP BY edge_id`,
      edgeIds,
    ))
      at(r.edge_id).entities = r.n;
    return out;
  }

  async devices(edgeIds: number[]): Promise<Device[]> {
    if (edgeIds.length === 0) return [];
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_devices WHERE ${inEdges(edgeIds)} ORDER BY edge_id, id`,
        edgeIds,
      )
    ).map(toDevice);
  }

  /** One device of an edge with its registered entities, or null. */
  async device(edgeId: number, id: number): Promise<{ device: Device; entities: EntityRecord[] } | null> {
    const row = await this.database.one<Row>('SELECT * FROM mirror_devices WHERE edge_id = ? AND id = ?', [edgeId, id]);
    if (!row) return null;
    const entities = await this.database.query<Row>(
      'SELECT * FROM mirror_entities WHERE edge_id = ? AND device_registry_id = ? AND registered = 1 ORDER BY entity_id',
      [edgeId, id],
    );
    return { device: toDevice(row), entities: entities.map(toEntityRecord) };
  }

  /** Which edge (of the given ones) holds a device id; device ids are only unique per edge. */
  async findDevice(edgeIds: number[], id: number): Promise<{ device: Device; entities: EntityRecord[] } | null> {
    if (edgeIds.length === 0) return null;
    const row = await this.database.one<Row>(
      `SELECT edge_id FROM mirror_devices WHERE ${inEdges(edgeIds)} AND id = ? ORDER BY edge_id LIMIT 1`,
      [...edgeIds, id],
    );
    return row ? this.device(row.edge_id, id) : null;
  }

  async entityRecords(edgeIds: number[]): Promise<EntityRecord[]> {
    if (edgeIds.length === 0) return [];
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_entities WHERE ${inEdges(edgeIds)} AND registered = 1 ORDER BY edge_id, entity_id`,
        edgeIds,
      )
    ).map(toEntityRecord);
  }

  /** The states of the given edges' enabled entities (a disabled one has none, as in HA). */
  async states(edgeIds: number[]): Promise<EntityState[]> {
    if (edgeIds.length === 0) return [];
    await this.announced.settled(edgeIds);
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_entities WHERE ${inEdges(edgeIds)} AND disabled_by IS NULL ORDER BY edge_id, entity_id`,
        edgeIds,
      )
    ).map(toEntityState);
  }

  /** The state of one enabled entity on one of the given edges, or null. */
  async state(edgeIds: number[], entityId: string): Promise<EntityState | null> {
    await this.announced.settled(edgeIds);
    return this.storedState(edgeIds, entityId);
  }

  protected async storedState(edgeIds: number[], entityId: string): Promise<EntityState | null> {
    if (edgeIds.length === 0) return null;
    const row = await this.database.one<Row>(
      `SELECT * FROM mirror_entities WHERE ${inEdges(edgeIds)} AND entity_id = ? AND disabled_by IS NULL ORDER BY edge_id LIMIT 1`,
      [...edgeIds, entityId],
    );
    return row ? toEntityState(row) : null;
  }

  /** The areas of the given edges, each with its edge. */
  async areas(edgeIds: number[]): Promise<(Area & { edge_id: number })[]> {
    if (edgeIds.length === 0) return [];
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_areas WHERE ${inEdges(edgeIds)} ORDER BY edge_id, area_id`,
        edgeIds,
      )
    ).map((r) => ({ area_id: r.area_id, name: r.name, edge_id: r.edge_id }));
  }

  async configEntries(edgeIds: number[]): Promise<ConfigEntry[]> {
    if (edgeIds.length === 0) return [];
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_config_entries WHERE ${inEdges(edgeIds)} ORDER BY edge_id, id`,
        edgeIds,
      )
    ).map((r) => ({
      id: r.id,
      domain: r.domain,
      title: r.title,
      source: r.source,
      state: r.state,
      created_at: r.created_at,
      edge_id: r.edge_id,
    }));
  }

  async automations(
    edgeIds: number[],
  ): Promise<
    { id: string; edge_id: number; alias: string; enabled: boolean; mode: string; webhook_id: string | null }[]
  > {
    if (edgeIds.length === 0) return [];
    return (
      await this.database.query<Row>(
        `SELECT * FROM mirror_automations WHERE ${inEdges(edgeIds)} ORDER BY edge_id, id`,
        edgeIds,
      )
    ).map((r) => ({
      id: r.id,
      edge_id: r.edge_id,
      alias: r.alias,
      enabled: r.enabled === 1,
      mode: r.mode,
      webhook_id: r.webhook_id,
    }));
  }
}
