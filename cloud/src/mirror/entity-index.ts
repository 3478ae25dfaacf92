import type { CloudDatabase } from '../db/database.ts';

interface Entry {
  ids: Set<string>;
  loadedAt: number;
}

export interface EntityIndexOptions {
  /**
   * how long a loaded edge's list answers: bounds how long a registry change written by another
   * replica (which this one is not told of) goes unseen
   */
  ttlMs?: number;
  /** edges kept at most (the least recently used go first) */
  maxEdges?: number;
  now?: () => number;
}

/**
 * Which entities each edge has with a visible state (enabled), kept in memory for the service
 * call's lookup (EntityAccess.edgeFor): on PostgreSQL that lookup was a round trip per call
 * (#19, `pnpm bench tunnel`). It answers only "present": an entity not in a loaded list is looked
 * up in the mirror as before, so an entity just added is never refused from here. Kept correct by
 * `changed(edgeId)` after every committed write that can remove or disable an entity on that edge
 * (snapshots, registry deltas, clearing); a state change can only add one. A load that overlaps
 * such a change is not kept. Another replica's writes are seen once the list expires (ttlMs).
 */
export class EntityIndex {
  private readonly database: CloudDatabase;
  private readonly ttlMs: number;
  private readonly maxEdges: number;
  private readonly now: () => number;
  private readonly edges = new Map<number, Entry>();
  /** bumped by changed(): a load that started before a change is not stored */
  private readonly generations = new Map<number, number>();

  constructor(database: CloudDatabase, options: EntityIndexOptions = {}) {
    this.database = database;
    this.ttlMs = options.ttlMs ?? 5000;
    this.maxEdges = options.maxEdges ?? 2000;
    this.now = options.now ?? Date.now;
  }

  /** The edge's registry changed (committed): its list is loaded again on next use. */
  changed(edgeId: number): void {
    this.edges.delete(edgeId);
    this.generations.set(edgeId, (this.generations.get(edgeId) ?? 0) + 1);
  }

  /**
   * The lowest of `edgeIds` that has the entity (enabled), as the mirror's lookup answers it, or
   * null when unknown here (not on any of them, or more than `maxLookups` edges to load: ask the mirror).
   */
  async first(edgeIds: readonly number[], entityId: string, maxLookups = 16): Promise<number | null> {
    if (edgeIds.length === 0 || edgeIds.length > maxLookups) return null;
    const lists = await Promise.all(edgeIds.map((id) => this.list(id)));
    let best: number | null = null;
    edgeIds.forEach((id, i) => {
      if (lists[i]!.has(entityId) && (best === null || id < best)) best = id;
    });
    return best;
  }

  private async list(edgeId: number): Promise<Set<string>> {
    const hit = this.edges.get(edgeId);
    if (hit && this.now() - hit.loadedAt < this.ttlMs) {
      this.edges.delete(edgeId);
      this.edges.set(edgeId, hit); // most recently used last
      return hit.ids;
    }
    const generation = this.generations.get(edgeId) ?? 0;
    const loadedAt = this.now();
    const rows = await this.database.query<{ entity_id: string }>(
      'SELECT entity_id FROM mirror_entities WHERE edge_id = ? AND disabled_by IS NULL',
      [edgeId],
    );
    const ids = new Set(rows.map((r) => r.entity_id));
    if ((this.generations.get(edgeId) ?? 0) === generation) {
      this.edges.delete(edgeId);
      this.edges.set(edgeId, { ids, loadedAt });
      if (this.edges.size > this.maxEdges) this.edges.delete(this.edges.keys().next().value!);
    }
    return ids;
  }
}
