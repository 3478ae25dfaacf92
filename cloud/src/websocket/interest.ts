/** What a viewer may see: whole edges, plus single entities shared with them. */
export interface Visibility {
  edges: Set<number>;
  entities: Set<string>;
}

/**
 * Subscribers indexed by what they may see (edge id → subscribers, "edge:entity" → subscribers),
 * so that a state change visits only the sessions it concerns instead of every open session.
 */
export class InterestIndex<T> {
  private readonly byEdge = new Map<number, Set<T>>();
  private readonly byEntity = new Map<string, Set<T>>();
  private readonly indexed = new Map<T, Visibility>();

  /** Indexes `item` under `vis`, replacing what it was indexed under. */
  set(item: T, vis: Visibility): void {
    this.remove(item);
    this.indexed.set(item, vis);
    for (const edge of vis.edges) add(this.byEdge, edge, item);
    for (const entity of vis.entities) add(this.byEntity, entity, item);
  }

  remove(item: T): void {
    const vis = this.indexed.get(item);
    if (!vis) return;
    this.indexed.delete(item);
    for (const edge of vis.edges) drop(this.byEdge, edge, item);
    for (const entity of vis.entities) drop(this.byEntity, entity, item);
  }

  /** The visibility `item` is indexed under, if any. */
  get(item: T): Visibility | undefined {
    return this.indexed.get(item);
  }

  /** Who sees the whole edge. */
  wholeEdge(edgeId: number): ReadonlySet<T> {
    return this.byEdge.get(edgeId) ?? EMPTY;
  }

  /** Who sees the entity: through its whole edge or a share of it (each once). */
  entity(edgeId: number, entityId: string): Iterable<T> {
    const whole = this.byEdge.get(edgeId);
    const shared = this.byEntity.get(`${edgeId}:${entityId}`);
    if (!shared) return whole ?? EMPTY;
    if (!whole) return shared;
    const out = new Set(whole);
    for (const item of shared) out.add(item);
    return out;
  }

  get size(): number {
    return this.indexed.size;
  }
}

const EMPTY: ReadonlySet<never> = new Set();

function add<K, T>(map: Map<K, Set<T>>, key: K, item: T): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(item);
}

function drop<K, T>(map: Map<K, Set<T>>, key: K, item: T): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(item);
  if (set.size === 0) map.delete(key);
}

/** Whether two visibilities grant the same. */
export function sameVisibility(a: Visibility, b: Visibility): boolean {
  if (a.edges.size !== b.edges.size || a.entities.size !== b.entities.size) return false;
  for (const e of a.edges) if (!b.edges.has(e)) return false;
  for (const e of a.entities) if (!b.entities.has(e)) return false;
  return true;
}
