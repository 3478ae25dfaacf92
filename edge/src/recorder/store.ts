import type { Database, Statement } from 'better-sqlite3';

/** The connection the store writes with: the edge's database, or a writer thread's own connection. */
export interface SqliteConnection {
  readonly sqlite: Database;
}

/** A state change as the recorder queues it: cheap to build on the ingest path (no JSON yet). */
export interface PendingState {
  kind: 'state';
  entity_id: string;
  state: string | null;
  attributes: Record<string, unknown> | null;
  /** the attributes' JSON when already serialised (then `attributes` may be null) */
  shared?: string | null;
  /** epoch seconds */
  last_updated: number;
  /** epoch seconds; null when equal to last_updated */
  last_changed: number | null;
}

export interface PendingEvent {
  kind: 'event';
  event_type: string;
  data: unknown;
  /** the data's JSON when already serialised */
  json?: string;
  /** epoch seconds */
  time_fired: number;
}

export type PendingRow = PendingState | PendingEvent;

/** Shared attribute sets kept in memory; a new set costs one hash lookup, a known one nothing. */
const ATTRIBUTE_CACHE_SIZE = 8192;
/** Hashes kept per entity to know a set is new without a query; an entity with more falls back to the query. */
const KNOWN_HASHES_PER_ENTITY = 4096;

/**
 * Writes recorder rows (one transaction per batch). Entity ids and attribute sets are
 * deduplicated into shared rows; their ids are cached so a known set costs no query.
 */
export class RecorderStore {
  private readonly database: SqliteConnection;
  private readonly metadataIds = new Map<string, number>();
  private readonly attributeIds = new Map<string, number>();
  private readonly lastAttributes = new Map<number, { shared: string; id: number }>();
  /**
   * Per entity, the hashes of its stored sets (read once, on its first new set; null: too many
   * to keep). A hash not in it is a new set: inserted without a SELECT first, which with
   * attributes changing on every message is one query less per row.
   */
  private readonly knownHashes = new Map<number, Set<number> | null>();
  private statements: {
    insertState: Statement;
    insertEvent: Statement;
    insertEntity: Statement;
    findEntity: Statement;
    findAttributes: Statement;
    entityHashes: Statement;
    insertAttributes: Statement;
  } | null = null;

  constructor(database: SqliteConnection) {
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
      entityHashes: sqlite.prepare('SELECT hash FROM recorder_attributes WHERE metadata_id = ? LIMIT ?').pluck(),
      insertAttributes: sqlite.prepare('INSERT INTO recorder_attributes (metadata_id, hash, shared) VALUES (?, ?, ?)'),
    };
    this.metadataIds.clear();
    this.attributeIds.clear();
    this.lastAttributes.clear();
    this.knownHashes.clear();
  }

  close(): void {
    this.statements = null;
  }

  write(rows: Iterable<PendingRow>): void {
    const st = this.statements;
    if (!st) throw new Error('recorder store is not open');
    // IMMEDIATE: the write lock is taken at BEGIN, where the busy timeout applies (a deferred
    // transaction that read first fails at once when another connection wrote meanwhile)
    this.database.sqlite
      .transaction(() => {
        for (const row of rows) {
          if (row.kind === 'state') {
            // a just-discovered entity has no state yet: nothing to record until its first one
            if (row.state === null && !this.isRecorded(row.entity_id)) continue;
            const metadataId = this.metadataId(row.entity_id);
            const shared = row.shared !== undefined ? row.shared : row.attributes && JSON.stringify(row.attributes);
            const attributesId = shared ? this.attributesId(metadataId, shared) : null;
            st.insertState.run(metadataId, row.state, attributesId, row.last_updated, row.last_changed);
          } else {
            st.insertEvent.run(row.event_type, row.json ?? JSON.stringify(row.data ?? {}), row.time_fired);
          }
        }
      })
      .immediate();
  }

  /**
   * A renamed entity keeps its history (HA updates its states_meta row): the old id's metadata row
   * takes the new id, unless the new id already has history of its own. True when moved.
   */
  renameEntity(oldId: string, newId: string): boolean {
    const moved = this.database.sqlite
      .prepare(
        'UPDATE recorder_entities SET entity_id = ? WHERE entity_id = ? AND NOT EXISTS (SELECT 1 FROM recorder_entities WHERE entity_id = ?)',
      )
      .run(newId, oldId, newId);
    this.metadataIds.delete(oldId);
    this.metadataIds.delete(newId);
    return moved.changes > 0;
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

  /** Whether the entity has a row already (then a null state is a real change to unknown or a removal). */
  private isRecorded(entityId: string): boolean {
    if (this.metadataIds.has(entityId)) return true;
    const st = this.statements as NonNullable<typeof this.statements>;
    const id = st.findEntity.get(entityId) as number | undefined;
    if (id === undefined) return false;
    this.metadataIds.set(entityId, id);
    return true;
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
    const hashes = this.entityHashes(metadataId);
    let id: number | undefined;
    if (!hashes || hashes.has(hash))
      for (const [candidate, text] of st.findAttributes.all(metadataId, hash) as [number, string][]) {
        if (text === shared) {
          id = candidate;
          break;
        }
      }
    if (id === undefined) {
      id = Number(st.insertAttributes.run(metadataId, hash, shared).lastInsertRowid);
      if (hashes && hashes.size < KNOWN_HASHES_PER_ENTITY) hashes.add(hash);
      else if (hashes) this.knownHashes.set(metadataId, null);
    }
    if (this.attributeIds.size >= ATTRIBUTE_CACHE_SIZE) this.attributeIds.clear();
    this.attributeIds.set(key, id);
    return id;
  }

  private entityHashes(metadataId: number): Set<number> | null {
    let hashes = this.knownHashes.get(metadataId);
    if (hashes === undefined) {
      const st = this.statements as NonNullable<typeof this.statements>;
      const stored = st.entityHashes.all(metadataId, KNOWN_HASHES_PER_ENTITY + 1) as number[];
      hashes = stored.length > KNOWN_HASHES_PER_ENTITY ? null : new Set(stored);
      this.knownHashes.set(metadataId, hashes);
    }
    return hashes;
  }

  /** Purge removed attribute rows: forget the cached ids (and the hashes, to free memory). */
  forgetAttributes(): void {
    this.attributeIds.clear();
    this.lastAttributes.clear();
    this.knownHashes.clear();
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
