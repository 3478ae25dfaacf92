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
/**
 * Sets (hash → id) kept per entity; past this an entity's map starts over (dedup then best
 * effort). When every message brings a new set the maps are pure cost: at 4,096 sets each, 200
 * entities held ~800,000 entries in the writer thread (store micro-benchmark, 400,000 rows of new
 * sets: 4.86 -> 4.76 us a row, the last quarter 5.59 -> 4.97).
 */
const KNOWN_SETS_PER_ENTITY = 256;
/** An entity's latest rows whose sets are read on its first new set after a start or a purge. */
const KNOWN_ROWS_PER_ENTITY = 1024;

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
   * Per entity, its stored sets by hash (read once, on its first new set). The table has no index
   * by hash (see the migration): a hash not here is a new set, inserted without a query; a hash
   * here is checked against the stored text by its id. An entity with more sets than
   * KNOWN_SETS_PER_ENTITY keeps only the latest ones, so an old set coming back may be stored
   * again: a second row with the same text, which history reads the same way.
   */
  private readonly knownSets = new Map<number, Map<number, number>>();
  private statements: {
    insertState: Statement;
    insertEvent: Statement;
    insertEntity: Statement;
    findEntity: Statement;
    attributesText: Statement;
    entitySets: Statement;
    insertAttributes: Statement;
    deleteOrphans: Statement;
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
      attributesText: sqlite.prepare('SELECT shared FROM recorder_attributes WHERE attributes_id = ?').pluck(),
      // the sets of the entity's latest rows, the latest first: those it is likely to send again
      // (through the states' covering index: the sets table has no index by entity)
      entitySets: sqlite
        .prepare(
          `SELECT hash, attributes_id FROM recorder_attributes WHERE attributes_id IN
            (SELECT attributes_id FROM recorder_states WHERE metadata_id = ? ORDER BY last_updated DESC LIMIT ?)
           ORDER BY attributes_id DESC`,
        )
        .raw(),
      deleteOrphans: sqlite.prepare(
        `DELETE FROM recorder_attributes WHERE attributes_id IN (SELECT value FROM json_each(?))
          AND attributes_id NOT IN (SELECT attributes_id FROM recorder_states WHERE metadata_id = ? AND attributes_id IS NOT NULL)`,
      ),
      insertAttributes: sqlite.prepare('INSERT INTO recorder_attributes (metadata_id, hash, shared) VALUES (?, ?, ?)'),
    };
    this.metadataIds.clear();
    this.attributeIds.clear();
    this.lastAttributes.clear();
    this.knownSets.clear();
  }

  close(): void {
    this.statements = null;
  }

  write(rows: Iterable<PendingRow>): void {
    const st = this.statements;
    if (!st) throw new Error('recorder store is not open');
    // IMMEDIATE: the write lock is taken at BEGIN, where the busy timeout applies (a deferred
    // transaction that read first fails at once when another connection wrote meanwhile)
    try {
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
    } catch (err) {
      // rolled back: ids cached during the batch (new entities, new sets) name no row now
      this.metadataIds.clear();
      this.forgetAttributes();
      throw err;
    }
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
    // an entity's attributes rarely change: compare with its last set before hashing
    const last = this.lastAttributes.get(metadataId);
    if (last !== undefined && last.shared === shared) return last.id;
    const id = this.lookupAttributes(metadataId, shared);
    if (last !== undefined) {
      last.shared = shared;
      last.id = id;
    } else this.lastAttributes.set(metadataId, { shared, id });
    return id;
  }

  /**
   * A hash the entity never stored is a new set, inserted at once (the worst case, every message a
   * new set, costs no string key and no cache entry); a known hash is checked against the stored
   * text once, then found by its text in memory.
   */
  private lookupAttributes(metadataId: number, shared: string): number {
    const st = this.statements as NonNullable<typeof this.statements>;
    const hash = fnv1a32(shared);
    const sets = this.entitySets(metadataId);
    let id = sets.get(hash);
    if (id !== undefined) {
      const key = `${metadataId}:${shared}`;
      const cached = this.attributeIds.get(key);
      if (cached !== undefined) return cached;
      // a hash collision (or a set the purge deleted meanwhile) is a new set
      if (st.attributesText.get(id) === shared) {
        if (this.attributeIds.size >= ATTRIBUTE_CACHE_SIZE) this.attributeIds.clear();
        this.attributeIds.set(key, id);
        return id;
      }
    }
    id = Number(st.insertAttributes.run(metadataId, hash, shared).lastInsertRowid);
    if (sets.size >= KNOWN_SETS_PER_ENTITY) sets.clear();
    sets.set(hash, id);
    return id;
  }

  private entitySets(metadataId: number): Map<number, number> {
    let sets = this.knownSets.get(metadataId);
    if (sets === undefined) {
      const st = this.statements as NonNullable<typeof this.statements>;
      const stored = st.entitySets.all(metadataId, KNOWN_ROWS_PER_ENTITY) as [number, number][];
      sets = new Map();
      // the latest KNOWN_SETS_PER_ENTITY, oldest first, so that of two sets with one hash the latest wins
      for (let i = Math.min(stored.length, KNOWN_SETS_PER_ENTITY) - 1; i >= 0; i--)
        sets.set(stored[i][0], stored[i][1]);
      this.knownSets.set(metadataId, sets);
    }
    return sets;
  }

  /**
   * The purge's last step for an entity: of the sets its deleted rows used (`candidates`), those
   * no remaining row uses are deleted. Every set is used by a row when written, and a set whose last
   * row goes is among that row's, so no orphan is missed without scanning the sets table.
   */
  deleteOrphans(metadataId: number, candidates: readonly number[]): number {
    const st = this.statements;
    if (!st) throw new Error('recorder store is not open');
    const n = candidates.length ? st.deleteOrphans.run(JSON.stringify(candidates), metadataId).changes : 0;
    // a cached id may name a set just deleted: the next write must look it up again
    this.forgetAttributes();
    return n;
  }

  /** Purge removed attribute rows: forget the cached ids (and the hashes, to free memory). */
  forgetAttributes(): void {
    this.attributeIds.clear();
    this.lastAttributes.clear();
    this.knownSets.clear();
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
