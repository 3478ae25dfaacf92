import type { Statement } from 'better-sqlite3';
import type { EdgeDatabase } from '../db/database.ts';

/** A state change as the recorder queues it: cheap to build on the ingest path (no JSON yet). */
export interface PendingState {
  kind: 'state';
  entity_id: string;
  state: string | null;
  attributes: Record<string, unknown> | null;
  /** epoch seconds */
  last_updated: number;
  /** epoch seconds; null when equal to last_updated */
  last_changed: number | null;
}

export interface PendingEvent {
  kind: 'event';
  event_type: string;
  data: unknown;
  /** epoch seconds */
  time_fired: number;
}

export type PendingRow = PendingState | PendingEvent;

/** Shared attribute sets kept in memory; a new set costs one hash lookup, a known one nothing. */
const ATTRIBUTE_CACHE_SIZE = 8192;

/**
 * Writes recorder rows (one transaction per batch). Entity ids and attribute sets are
 * deduplicated into shared rows; their ids are cached so a known set costs no query.
 */
export class RecorderStore {
  private readonly database: EdgeDatabase;
  private readonly metadataIds = new Map<string, number>();
  private readonly attributeIds = new Map<string, number>();
  private readonly lastAttributes = new Map<number, { shared: string; id: number }>();
  private statements: {
    insertState: Statement;
    insertEvent: Statement;
    insertEntity: Statement;
    findEntity: Statement;
    findAttributes: Statement;
    insertAttributes: Statement;
  } | null = null;

  constructor(database: EdgeDatabase) {
    this.database = database;
  }

  open(): void {
    const sqlite = this.database.sqlite;
    this.statements = {
      insertState: sqlite.prepare(
        'INSERT INTO recorder_states (metadata_id, state, attributes_id, last_updated, last_changed) VALUES (?, ?, ?, ?, ?)',
      ),
      insertEvent: sqlite.prepare('INSERT INTO recorder_events (event_type, data, time_fired) VALUES (?, ?, ?)'),
      insertEntity: sqlite.prepare('INSERT INTO recorder_entities (entity_id) VALUES (?)'),
      findEntity: sqlite.prepare('SELECT metadata_id FROM recorder_entities WHERE entity_id = ?').pluck(),
      findAttributes: sqlite
        .prepare('SELECT attributes_id, shared FROM recorder_attributes WHERE metadata_id = ? AND hash = ?')
        .raw(),
      insertAttributes: sqlite.prepare('INSERT INTO recorder_attributes (metadata_id, hash, shared) VALUES (?, ?, ?)'),
    };
    this.metadataIds.clear();
    this.attributeIds.clear();
    this.lastAttributes.clear();
  }

  close(): void {
    this.statements = null;
  }

  write(rows: Iterable<PendingRow>): void {
    const st = this.statements;
    if (!st) throw new Error('recorder store is not open');
    this.database.sqlite.transaction(() => {
      for (const row of rows) {
        if (row.kind === 'state') {
          const metadataId = this.metadataId(row.entity_id);
          const attributesId = row.attributes ? this.attributesId(metadataId, JSON.stringify(row.attributes)) : null;
          st.insertState.run(metadataId, row.state, attributesId, row.last_updated, row.last_changed);
        } else {
          st.insertEvent.run(row.event_type, JSON.stringify(row.data ?? {}), row.time_fired);
        }
      }
    })();
  }

  private metadataId(entityId: string): number {
    const cached = this.metadataIds.get(entityId);
    if (cached !== undefined) return cached;
    const st = this.statements as NonNullable<typeof this.statements>;
    const id =
      (st.findEntity.get(entityId) as number | undefined) ?? Number(st.insertEntity.run(entityId).lastInsertRowid);
    this.metadataIds.set(entityId, id);
    return id;
  }

  private attributesId(metadataId: number, shared: string): number {
    // an entity's attributes rarely change: compare with its last set before hashing a key
    const last = this.lastAttributes.get(metadataId);
    if (last && last.shared === shared) return last.id;
    const id = this.lookupAttributes(metadataId, shared);
    this.lastAttributes.set(metadataId, { shared, id });
    return id;
  }

  private lookupAttributes(metadataId: number, shared: string): number {
    const key = `${metadataId}:${shared}`;
    const cached = this.attributeIds.get(key);
    if (cached !== undefined) return cached;
    const st = this.statements as NonNullable<typeof this.statements>;
    const hash = fnv1a32(shared);
    let id: number | undefined;
    for (const [candidate, text] of st.findAttributes.all(metadataId, hash) as [number, string][]) {
      if (text === shared) {
        id = candidate;
        break;
      }
    }
    id ??= Number(st.insertAttributes.run(metadataId, hash, shared).lastInsertRowid);
    if (this.attributeIds.size >= ATTRIBUTE_CACHE_SIZE) this.attributeIds.clear();
    this.attributeIds.set(key, id);
    return id;
  }

  /** Purge removed attribute rows: forget the cached ids. */
  forgetAttributes(): void {
    this.attributeIds.clear();
    this.lastAttributes.clear();
  }
}

/** 32-bit FNV-1a over UTF-16 code units: fast, and collisions only cost a text comparison. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
