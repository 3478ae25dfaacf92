import type { EntityState } from '@smarthome/protocol';

const key = (edgeId: number, entityId: string) => `${edgeId}\u0000${entityId}`;

/**
 * States announced to the apps but not committed to the mirror yet (PostgreSQL: a delta's event
 * goes out once its old state is read, its commit follows; MirrorWriter). The mirror's reads
 * consult these first, so a client that reads right after an event sees that event's state on
 * this replica. Each entry lives from the event to its commit (or failure): a few ms, a few
 * hundred entries at most.
 */
export class PendingStates {
  private readonly states = new Map<string, EntityState>();
  /** entries per edge, so reads of edges with none skip the overlay */
  private readonly perEdge = new Map<number, number>();
  /** bumped by every change: names an overlaid rendering (StatesCache) */
  generation = 0;

  /** Holds the states (each with its `edge_id`) until release() with the same objects. */
  hold(states: readonly EntityState[]): void {
    for (const s of states) {
      const k = key(s.edge_id!, s.entity_id);
      if (!this.states.has(k)) this.perEdge.set(s.edge_id!, (this.perEdge.get(s.edge_id!) ?? 0) + 1);
      this.states.set(k, s);
    }
    this.generation += 1;
  }

  /** Drops the entries still holding these objects (a newer hold of the same entity stays). */
  release(states: readonly EntityState[]): void {
    for (const s of states) {
      const k = key(s.edge_id!, s.entity_id);
      if (this.states.get(k) !== s) continue;
      this.states.delete(k);
      const n = (this.perEdge.get(s.edge_id!) ?? 1) - 1;
      if (n > 0) this.perEdge.set(s.edge_id!, n);
      else this.perEdge.delete(s.edge_id!);
    }
    this.generation += 1;
  }

  has(edgeId: number): boolean {
    return this.perEdge.has(edgeId);
  }

  get(edgeId: number, entityId: string): EntityState | undefined {
    return this.perEdge.has(edgeId) ? this.states.get(key(edgeId, entityId)) : undefined;
  }

  /** The pending states of one edge. */
  ofEdge(edgeId: number): EntityState[] {
    if (!this.perEdge.has(edgeId)) return [];
    return [...this.states.values()].filter((s) => s.edge_id === edgeId);
  }
}
