/** Which edge (and which user) each config flow started through the cloud belongs to. */
export class FlowDirectory {
  private readonly flows = new Map<string, { edgeId: number; userId: string; at: number }>();
  private readonly ttlMs: number;
  constructor(ttlMs = 60 * 60_000) {
    this.ttlMs = ttlMs;
  }
  remember(flowId: string, edgeId: number, userId: string): void {
    this.sweep();
    this.flows.set(flowId, { edgeId, userId, at: Date.now() });
  }
  /** Only the user who started a flow may continue it. */
  get(flowId: string, userId: string): { edgeId: number } | null {
    const f = this.flows.get(flowId);
    if (!f || f.userId !== userId || Date.now() - f.at > this.ttlMs) return null;
    return { edgeId: f.edgeId };
  }
  forget(flowId: string): void {
    this.flows.delete(flowId);
  }
  private sweep(): void {
    const now = Date.now();
    for (const [id, f] of this.flows) if (now - f.at > this.ttlMs) this.flows.delete(id);
  }
}
