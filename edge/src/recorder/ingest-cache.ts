/**
 * The recorder's per-message work on the ingest thread, cut where messages repeat themselves.
 * Measured same-run on the main thread: see README "Recorder" (ingest path).
 */

/** ISO time → epoch seconds; the last one kept: messages of the same millisecond share their state's time text. */
export class IsoSeconds {
  private lastText = '';
  private lastSeconds = 0;

  of(iso: string): number {
    if (iso !== this.lastText) {
      this.lastSeconds = Date.parse(iso) / 1000;
      this.lastText = iso;
    }
    return this.lastSeconds;
  }
}

/**
 * An entity's attributes as JSON, the text reused while they stay the same (a sensor's unit and
 * name do not change with its value): the state machine builds a new attributes object per
 * change, each of which would be stringified again. The text is kept with a copy of the keys
 * and values it was made from (so an object changed afterwards cannot make it stale), and only
 * for flat sets of primitive values; others are stringified each time.
 */
export class AttributeJson {
  private readonly last = new Map<string, { keys: string[]; values: unknown[]; json: string }>();

  of(entityId: string, attributes: Record<string, unknown>): string {
    const prev = this.last.get(entityId);
    if (prev === undefined) return this.remember(entityId, attributes);
    // the same keys in the same order (JSON.stringify's); the values copied as they are compared,
    // so a sensor whose value changes each time allocates nothing here
    const { keys, values } = prev;
    let n = 0;
    let same = true;
    let flat = true;
    for (const k in attributes) {
      if (k !== keys[n]) return this.remember(entityId, attributes);
      const v = attributes[k];
      // NaN never equals itself: stringified again, which is only slower
      if (v !== values[n]) {
        same = false;
        values[n] = v;
        if (!isPrimitive(v)) flat = false;
      }
      n++;
    }
    if (n !== keys.length) return this.remember(entityId, attributes);
    if (same) return prev.json;
    const json = JSON.stringify(attributes);
    if (flat) prev.json = json;
    else this.last.delete(entityId);
    return json;
  }

  clear(): void {
    this.last.clear();
  }

  private remember(entityId: string, attributes: Record<string, unknown>): string {
    const json = JSON.stringify(attributes);
    const keys = Object.keys(attributes);
    const values = keys.map((k) => attributes[k]);
    if (values.every(isPrimitive)) this.last.set(entityId, { keys, values, json });
    else this.last.delete(entityId);
    return json;
  }
}

function isPrimitive(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}
