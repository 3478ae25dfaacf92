/**
 * What every request asks before it may touch an edge: does the token's user still exist
 * (and its sign-in session unrevoked), which edges and shared entities it reaches. Cached per process and emptied by any write to
 * a table those answers come from (see ACCESS_TABLES), here as soon as the database layer
 * has run it (and again once its transaction ends), and on the other replicas over Redis.
 * A replica cut off from Redis would miss their writes: it caches nothing until it is back.
 * No answer is older than `maxAgeMs` either: a bound for what no notice reaches (a message
 * lost in transit, a second process run without Redis against the same database).
 */
export const ACCESS_TABLES: ReadonlySet<string> = new Set([
  'users',
  'organizations',
  'org_members',
  'edges',
  'shares',
  'session_revocations',
]);

interface Entry {
  generation: number;
  value: unknown;
  expires: number;
}

export class AccessCache {
  private generation = 0;
  private readonly entries = new Map<string, Entry>();
  private readonly max: number;
  private readonly maxAgeMs: number;
  private readonly enabled: () => boolean;
  private readonly now: () => number;
  private readonly listeners: Array<() => void> = [];

  constructor(opts: { max?: number; maxAgeMs?: number; enabled?: () => boolean; now?: () => number } = {}) {
    this.max = opts.max ?? 10_000;
    this.maxAgeMs = opts.maxAgeMs ?? 5000;
    this.enabled = opts.enabled ?? (() => true);
    this.now = opts.now ?? Date.now;
  }

  /** The cached answer for `key`, or `load()`'s (frozen: callers share it). */
  async get<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (!this.enabled()) {
      if (this.entries.size) this.invalidate();
      return load();
    }
    const hit = this.entries.get(key);
    if (hit && hit.generation === this.generation && hit.expires > this.now()) return hit.value as T;
    const generation = this.generation;
    const value = deepFreeze(await load());
    // A write during the load may have changed the answer: keep it only if none happened.
    if (generation === this.generation) {
      if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
      this.entries.delete(key);
      this.entries.set(key, { generation, value, expires: this.now() + this.maxAgeMs });
    }
    return value;
  }

  invalidate(): void {
    this.generation++;
    this.entries.clear();
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` on every invalidation: for what keeps answers derived from this cache's (open sockets). */
  onInvalidate(listener: () => void): void {
    this.listeners.push(listener);
  }

  get size(): number {
    return this.entries.size;
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
