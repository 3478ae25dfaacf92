import type { Database, Statement } from 'better-sqlite3';
import { attributeTextReader } from './attribute-text.ts';
import { BLOCK, BLOCK_FROM, blockEntities, encodeBlock, splitBlocks } from './blocks.ts';
import { fnv1a32, KnownTexts } from './known-texts.ts';

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
 * Writes recorder rows (one transaction per batch). Entity ids are shared rows; an attribute set
 * is stored once per entity, in the first row that has it (attribute-text.ts: a new set costs no
 * second insert), and later rows point at it; ids are cached so a known set costs no query.
 */
export class RecorderStore {
  private readonly database: SqliteConnection;
  private readonly metadataIds = new Map<string, number>();
  private readonly lastAttributes = new Map<number, { shared: string; id: number }>();
  /**
   * Per entity, its stored sets by hash (read once, on its first new set). The table has no index
   * by hash (see the migration): a hash not here is a new set, inserted without a query; a hash
   * here is checked against the stored text by its id. An entity with more sets than
   * KNOWN_SETS_PER_ENTITY keeps only the latest ones, so an old set coming back may be stored
   * again: a second row with the same text, which history reads the same way.
   */
  private readonly knownSets = new Map<number, Map<number, number>>();
  /** Per entity, the texts of known sets by hash (bounded in all). */
  private readonly knownTexts = new KnownTexts();
  private statements: {
    insertState: Statement;
    insertCarrier: Statement;
    insertBlock: Statement;
    maxStateId: Statement;
    insertEvent: Statement;
    insertEntity: Statement;
    findEntity: Statement;
    entitySets: Statement;
    carriedSets: Statement;
    carriersInUse: Statement;
    moveSet: Statement;
    carrierFloor: Statement;
    setCarrierFloor: Statement;
    insertAttributes: Statement;
    deleteOrphans: Statement;
  } | null = null;
  /**
   * Sets carried by rows older than this (epoch seconds) are not reused: the purge deletes those
   * rows (keepSets moved out the sets that remaining rows use, and raised this floor first).
   */
  private carrierFloor = -Number.MAX_VALUE;
  /** a stored or carried set's text by its id (attribute-text.ts) */
  private attributeText: (id: number) => string | undefined = () => undefined;

  /** an entity's states in one batch from which they are written as blocks (blocks.ts) */
  private readonly blockFrom: number;

  constructor(database: SqliteConnection, options: { blockFrom?: number } = {}) {
    this.database = database;
    this.blockFrom = options.blockFrom ?? BLOCK_FROM;
  }

  open(): void {
    const sqlite = this.database.sqlite;
    this.attributeText = attributeTextReader(() => sqlite);
    this.statements = {
      insertState: sqlite.prepare(
        'INSERT INTO recorder_states (metadata_id, state, attributes_id, last_updated, last_changed) VALUES (?, ?, ?, ?, ?)',
      ),
      // a row that carries a new set points at itself (attributes_id = -state_id): its id is given
      // (the others get the same one, MAX + 1, without it: binding it cost a row 0.3 us)
      insertCarrier: sqlite.prepare(
        'INSERT INTO recorder_states (state_id, metadata_id, state, attributes_id, last_updated, last_changed, shared) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      insertBlock: sqlite.prepare(
        'INSERT INTO recorder_states (state_id, metadata_id, state, attributes_id, last_updated, shared, data) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      maxStateId: sqlite.prepare('SELECT MAX(state_id) FROM recorder_states').pluck(),
      insertEvent: sqlite.prepare('INSERT INTO recorder_events (event_type, data, time_fired) VALUES (?, ?, ?)'),
      insertEntity: sqlite.prepare('INSERT INTO recorder_entities (entity_id) VALUES (?)'),
      findEntity: sqlite.prepare('SELECT metadata_id FROM recorder_entities WHERE entity_id = ?').pluck(),
      // the sets of the entity's latest rows, the latest first: those it is likely to send again
      // (through the states' covering index: the sets table has no index by entity)
      entitySets: sqlite
        .prepare(
          `SELECT hash, attributes_id FROM recorder_attributes WHERE attributes_id IN
            (SELECT attributes_id FROM recorder_states WHERE metadata_id = ? ORDER BY last_updated DESC LIMIT ?)
           ORDER BY attributes_id DESC`,
        )
        .raw(),
      // the sets carried by rows, of those the entity's latest rows use (not below the purge's floor)
      carriedSets: sqlite
        .prepare(
          `SELECT state_id, shared FROM recorder_states WHERE state_id IN
            (SELECT -attributes_id FROM (SELECT attributes_id FROM recorder_states WHERE metadata_id = ? ORDER BY last_updated DESC LIMIT ?)
             WHERE attributes_id < 0) AND last_updated >= ?
           ORDER BY state_id DESC`,
        )
        .raw(),
      // carriers older than the cutoff whose set rows at or after it use (not counting a carrier itself)
      carriersInUse: sqlite
        .prepare(
          `SELECT state_id, shared FROM recorder_states WHERE state_id IN
            (SELECT DISTINCT -attributes_id FROM recorder_states
              WHERE metadata_id = @metadata_id AND last_updated >= @cutoff AND attributes_id < 0 AND attributes_id <> -state_id)
           AND last_updated < @cutoff`,
        )
        .raw(),
      moveSet: sqlite.prepare(
        'UPDATE recorder_states SET attributes_id = ? WHERE metadata_id = ? AND last_updated >= ? AND attributes_id = ?',
      ),
      carrierFloor: sqlite.prepare("SELECT value FROM recorder_meta WHERE key = 'carrier_floor'").pluck(),
      setCarrierFloor: sqlite.prepare(
        "INSERT INTO recorder_meta (key, value) VALUES ('carrier_floor', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      ),
      deleteOrphans: sqlite.prepare(
        `DELETE FROM recorder_attributes WHERE attributes_id IN (SELECT value FROM json_each(?))
          AND attributes_id NOT IN (SELECT attributes_id FROM recorder_states WHERE metadata_id = ? AND attributes_id IS NOT NULL)`,
      ),
      insertAttributes: sqlite.prepare('INSERT INTO recorder_attributes (metadata_id, hash, shared) VALUES (?, ?, ?)'),
    };
    this.metadataIds.clear();
    this.forgetAttributes();
    const floor = this.statements.carrierFloor.get() as string | undefined;
    this.carrierFloor = floor === undefined ? -Number.MAX_VALUE : Number(floor);
  }

  close(): void {
    this.statements = null;
  }

  write(rows: readonly PendingRow[]): void {
    const st = this.statements;
    if (!st) throw new Error('recorder store is not open');
    // IMMEDIATE: the write lock is taken at BEGIN, where the busy timeout applies (a deferred
    // transaction that read first fails at once when another connection wrote meanwhile)
    try {
      this.database.sqlite
        .transaction(() => {
          // read in the transaction: the other writer (inline or thread) may have written before
          let stateId = (st.maxStateId.get() as number | null) ?? 0;
          const blocks = blockEntities(rows, this.blockFrom);
          for (const row of rows) {
            if (row.kind === 'state') {
              // a just-discovered entity has no state yet: nothing to record until its first one
              if (row.state === null && !this.isRecorded(row.entity_id)) continue;
              const metadataId = this.metadataId(row.entity_id);
              const shared = row.shared !== undefined ? row.shared : row.attributes && JSON.stringify(row.attributes);
              const block = blocks?.get(row.entity_id);
              if (block)
                block.push({
                  state: row.state,
                  last_updated: row.last_updated,
                  last_changed: row.last_changed,
                  shared,
                });
              else this.insertState(++stateId, metadataId, row.state, shared, row.last_updated, row.last_changed);
            } else {
              st.insertEvent.run(row.event_type, row.json ?? JSON.stringify(row.data ?? {}), row.time_fired);
            }
          }
          if (blocks)
            for (const [entityId, states] of blocks)
              for (const group of splitBlocks(states)) {
                const metadataId = this.metadataId(entityId);
                // a state alone (far in time from the others) is a plain row
                if (group.length === 1) {
                  const [s] = group;
                  this.insertState(++stateId, metadataId, s.state, s.shared, s.last_updated, s.last_changed);
                  continue;
                }
                const { first, data, shared } = encodeBlock(group);
                stateId++;
                // its state names the row itself (blocks.ts)
                st.insertBlock.run(stateId, metadataId, String(stateId), BLOCK, first, shared, data);
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

  /** A plain row (with the id the table gives it: MAX + 1), or a carrier when its set is new. */
  private insertState(
    stateId: number,
    metadataId: number,
    state: string | null,
    shared: string | null,
    lastUpdated: number,
    lastChanged: number | null,
  ): void {
    const st = this.statements as NonNullable<typeof this.statements>;
    const attributesId = shared ? this.attributesId(metadataId, shared, stateId) : null;
    // a new set: this row carries its text
    if (attributesId === -stateId)
      st.insertCarrier.run(stateId, metadataId, state, attributesId, lastUpdated, lastChanged, shared);
    else st.insertState.run(metadataId, state, attributesId, lastUpdated, lastChanged);
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

  /** The set's id; -stateId when it is new (the row being written carries it). */
  private attributesId(metadataId: number, shared: string, stateId: number): number {
    // an entity's attributes rarely change: compare with its last set before hashing
    const last = this.lastAttributes.get(metadataId);
    if (last !== undefined && last.shared === shared) return last.id;
    const id = this.lookupAttributes(metadataId, shared, stateId);
    if (last !== undefined) {
      last.shared = shared;
      last.id = id;
    } else this.lastAttributes.set(metadataId, { shared, id });
    return id;
  }

  /**
   * A hash the entity never stored is a new set, carried by the row being written (the worst case,
   * every message a new set, costs no string key and no second insert); a known hash is compared
   * with the set's text in memory, or else once with the stored text (a query).
   */
  private lookupAttributes(metadataId: number, shared: string, stateId: number): number {
    const hash = fnv1a32(shared);
    const sets = this.entitySets(metadataId);
    let id = sets.get(hash);
    if (id !== undefined) {
      const text = this.knownTexts.get(metadataId, hash);
      if (text === shared) return id;
      // a hash collision (or a set the purge deleted meanwhile) is a new set
      if (text === undefined && this.attributeText(id) === shared) {
        this.knownTexts.remember(metadataId, hash, shared);
        return id;
      }
    }
    id = -stateId;
    if (sets.size >= KNOWN_SETS_PER_ENTITY) {
      sets.clear();
      this.knownTexts.forget(metadataId);
    }
    sets.set(hash, id);
    // a new set's text is not kept (kept strings outlive the young generation: in the worst case,
    // every message a new set, keeping them cost the writer ~0.5 us a row); only one seen again is
    this.knownTexts.drop(metadataId, hash);
    return id;
  }

  private entitySets(metadataId: number): Map<number, number> {
    let sets = this.knownSets.get(metadataId);
    if (sets === undefined) {
      const st = this.statements as NonNullable<typeof this.statements>;
      // carried sets are newer than stored ones (the latest first: they win the trim below)
      const carried = st.carriedSets.all(metadataId, KNOWN_ROWS_PER_ENTITY, this.carrierFloor) as [number, string][];
      const stored = carried.map(([id, text]): [number, number, string?] => [fnv1a32(text), -id, text]);
      for (const set of st.entitySets.all(metadataId, KNOWN_ROWS_PER_ENTITY) as [number, number][]) stored.push(set);
      sets = new Map();
      this.knownTexts.forget(metadataId);
      // the latest KNOWN_SETS_PER_ENTITY, oldest first, so that of two sets with one hash the latest wins
      for (let i = Math.min(stored.length, KNOWN_SETS_PER_ENTITY) - 1; i >= 0; i--) {
        const [hash, id, text] = stored[i];
        sets.set(hash, id);
        if (text !== undefined) this.knownTexts.remember(metadataId, hash, text);
        // a stored set of the same hash replaces a carried one: its text is read when needed
        else this.knownTexts.drop(metadataId, hash);
      }
      this.knownSets.set(metadataId, sets);
    }
    return sets;
  }

  /**
   * The purge's first step for an entity, before it deletes the rows older than `cutoff`: a set
   * carried by such a row and used by a later row moves to recorder_attributes (the later rows
   * point there), and no row written from now on takes a set carried by a row older than `cutoff`
   * (the floor, kept in recorder_meta for the writer thread and the next start). Returns the sets moved.
   */
  keepSets(metadataId: number, cutoff: number): number {
    const st = this.statements;
    if (!st) throw new Error('recorder store is not open');
    return this.database.sqlite
      .transaction(() => {
        if (cutoff > this.carrierFloor) {
          st.setCarrierFloor.run(String(cutoff));
          this.carrierFloor = cutoff;
        }
        const carriers = st.carriersInUse.all({ metadata_id: metadataId, cutoff }) as [number, string][];
        for (const [stateId, shared] of carriers) {
          const id = Number(st.insertAttributes.run(metadataId, fnv1a32(shared), shared).lastInsertRowid);
          st.moveSet.run(id, metadataId, cutoff, -stateId);
        }
        // cached ids may name a carrier below the floor
        this.forgetAttributes();
        return carriers.length;
      })
      .immediate();
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
    this.lastAttributes.clear();
    this.knownSets.clear();
    this.knownTexts.clear();
  }
}
