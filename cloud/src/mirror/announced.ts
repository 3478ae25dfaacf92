/**
 * Mirror writes whose changes the tunnel announced to apps before their commit (an edge that sends
 * each change's old state is not kept waiting for PostgreSQL's commit, #19). The mirror's state
 * reads of such an edge wait until those writes settle, so a client that saw a `state_changed`
 * and then reads the state on this replica reads the state it was told of. Other replicas hear of
 * a change only after its commit (`state_committed`), so they need no such wait.
 */
export class AnnouncedWrites {
  /** per edge, the last announced write not yet settled (an edge's writes settle in order) */
  private readonly byEdge = new Map<number, Promise<void>>();

  /** `settled` resolves (never rejects) once the edge's write has committed or failed. */
  add(edgeId: number, settled: Promise<void>): void {
    this.byEdge.set(edgeId, settled);
    void settled.then(() => {
      if (this.byEdge.get(edgeId) === settled) this.byEdge.delete(edgeId);
    });
  }

  /** What a read of these edges must wait for, or null when none has an announced write in flight. */
  settled(edgeIds: readonly number[]): Promise<unknown> | null {
    if (this.byEdge.size === 0) return null;
    let waits: Promise<void>[] | null = null;
    for (const id of edgeIds) {
      const w = this.byEdge.get(id);
      if (w) (waits ??= []).push(w);
    }
    return waits && Promise.all(waits);
  }

  /** edges with an announced write in flight (tests) */
  get size(): number {
    return this.byEdge.size;
  }
}
