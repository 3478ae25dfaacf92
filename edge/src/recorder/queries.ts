import type { Statement } from 'better-sqlite3';
import type { EdgeDatabase } from '../db/database.ts';
import { SIGNIFICANT_DOMAINS } from './domains.ts';
import { HistoryJsonWriter, type HistoryJsonOptions } from './history-json.ts';
import { attributeTextReader } from './attribute-text.ts';
import {
  BLOCK,
  BLOCK_SPAN_S,
  blockReader,
  expandPeriod,
  MARGIN_BLOCKS_SQL,
  marginBlocks,
  type BeforeRow,
  type BlockItem,
  type QueryRow,
} from './blocks.ts';

export interface HistoryQuery {
  /** epoch seconds, inclusive */
  start: number;
  /** epoch seconds, exclusive; default: now and beyond */
  end?: number;
  /** default: every recorded entity */
  entity_ids?: string[];
  /** add each entity's state at `start` (its last row before), stamped at `start`; default true */
  include_start_time_state?: boolean;
  /** only rows whose state changed (all rows for SIGNIFICANT_DOMAINS); default true */
  significant_changes_only?: boolean;
  no_attributes?: boolean;
}

/** One recorded state. Times are epoch seconds; last_changed equals last_updated on a state change. */
export interface RecordedState {
  state: string | null;
  /** {} with no_attributes */
  attributes: Record<string, unknown>;
  last_updated: number;
  last_changed: number;
}

/** entity_id → its states, oldest first; entities without any state in the answer are left out. */
export type History = Map<string, RecordedState[]>;

export interface LogbookQuery {
  start: number;
  end?: number;
  /** only these entities' state changes (events that are not about them are left out) */
  entity_ids?: string[];
}

export type LogbookRow =
  | { kind: 'state'; when: number; entity_id: string; state: string | null; attributes: Record<string, unknown> }
  | { kind: 'event'; when: number; event_type: string; data: Record<string, unknown> };

/** Events the logbook shows (others are recorded, e.g. call_service, but are not logbook entries). */
export const LOGBOOK_EVENT_TYPES: ReadonlySet<string> = new Set([
  'homeassistant_start',
  'homeassistant_stop',
  'logbook_entry',
]);

/** The read statements (exported so a test can check their query plans). */
export const QUERY_SQL = {
  entities: 'SELECT entity_id, metadata_id FROM recorder_entities ORDER BY entity_id',
  entity: 'SELECT metadata_id FROM recorder_entities WHERE entity_id = ?',
  startState: `SELECT state, attributes_id, state_id, last_updated FROM recorder_states
    WHERE metadata_id = ? AND last_updated < ? ORDER BY last_updated DESC, state_id DESC LIMIT 1`,
  rows: `SELECT state, attributes_id, last_updated, last_changed FROM recorder_states
    WHERE metadata_id = ? AND last_updated >= ? AND last_updated < ? ORDER BY last_updated, state_id`,
  significantRows: `SELECT state, attributes_id, last_updated, last_changed FROM recorder_states
    WHERE metadata_id = ? AND last_updated >= ? AND last_updated < ? AND last_changed IS NULL ORDER BY last_updated, state_id`,
  significantSets: `SELECT DISTINCT attributes_id FROM recorder_states
    WHERE metadata_id = ? AND last_updated >= ? AND last_updated < ? AND last_changed IS NULL`,
  events:
    'SELECT event_type, data, time_fired FROM recorder_events WHERE time_fired >= ? AND time_fired < ? ORDER BY time_fired, event_id',
} as const;

/**
 * Read side of the recorder. Every query walks the (metadata_id, last_updated) index one entity
 * at a time (a covering index: no table lookups), which keeps a day of 1,000 busy entities a set
 * of short range scans. `all()` rather than `iterate()`: markedly faster in better-sqlite3.
 */
export class RecorderQueries {
  private readonly database: EdgeDatabase;
  private readonly json: HistoryJsonWriter;
  private st: {
    entities: Statement;
    entity: Statement;
    startState: Statement;
    rows: Statement;
    significantRows: Statement;
    significantSets: Statement;
    /** a stored or carried set's text by its id (attribute-text.ts) */
    attributeText: (id: number) => string | undefined;
    /** a block's states by its state_id, and the blocks that start just before a period (blocks.ts) */
    block: (stateId: number) => BlockItem[];
    marginBlocks: Statement;
    events: Statement;
  } | null = null;

  constructor(database: EdgeDatabase) {
    this.database = database;
    this.json = new HistoryJsonWriter(() => database.sqlite);
  }

  private statements() {
    if (this.st) return this.st;
    const sqlite = this.database.sqlite;
    this.st = {
      entities: sqlite.prepare(QUERY_SQL.entities).raw(),
      entity: sqlite.prepare(QUERY_SQL.entity).pluck(),
      startState: sqlite.prepare(QUERY_SQL.startState).raw(),
      rows: sqlite.prepare(QUERY_SQL.rows).raw(),
      significantRows: sqlite.prepare(QUERY_SQL.significantRows).raw(),
      significantSets: sqlite.prepare(QUERY_SQL.significantSets).pluck(),
      attributeText: attributeTextReader(() => sqlite),
      block: blockReader(() => sqlite),
      marginBlocks: sqlite.prepare(MARGIN_BLOCKS_SQL).pluck(),
      events: sqlite.prepare(QUERY_SQL.events).raw(),
    };
    return this.st;
  }

  /** The database closed: statements must be prepared again on the next open. */
  reset(): void {
    this.st = null;
    this.json.reset();
  }

  history(query: HistoryQuery): History {
    const st = this.statements();
    const end = query.end ?? Number.MAX_VALUE;
    const includeStart = query.include_start_time_state ?? true;
    const significantOnly = query.significant_changes_only ?? true;
    const attrs = this.attributeReader(query.no_attributes ?? false);
    const result: History = new Map();
    for (const [entityId, metadataId] of this.resolve(query.entity_ids)) {
      const out: RecordedState[] = [];
      const domain = entityId.slice(0, entityId.indexOf('.'));
      const significant = significantOnly && !SIGNIFICANT_DOMAINS.has(domain);
      const stmt = significant ? st.significantRows : st.rows;
      // the row before the period (the start state) and blocks that may reach into the period
      const before = st.startState.get(metadataId, query.start) as BeforeRow | undefined;
      const period = expandPeriod(
        before,
        marginBlocks(before, query.start, (from, to) => st.marginBlocks.all(metadataId, from, to) as number[]),
        stmt.all(metadataId, query.start, end) as QueryRow[],
        { start: query.start, end, significant },
        st.block,
      );
      if (includeStart && period.head)
        out.push({
          state: period.head[0],
          attributes: attrs(period.head[1]),
          last_updated: query.start,
          last_changed: query.start,
        });
      for (const [state, attributesId, lastUpdated, lastChanged] of period.rows) {
        out.push({
          state,
          attributes: attrs(attributesId),
          last_updated: lastUpdated,
          last_changed: lastChanged ?? lastUpdated,
        });
      }
      if (out.length) result.set(entityId, out);
    }
    return result;
  }

  /** history() as HA's JSON answer, written from raw rows (history-json.ts): what the HA API sends. */
  historyJson(query: HistoryQuery, options: Omit<HistoryJsonOptions, 'no_attributes'>): string {
    const period = {
      start: query.start,
      end: query.end ?? Number.MAX_VALUE,
      include_start_time_state: query.include_start_time_state ?? true,
      significant_changes_only: query.significant_changes_only ?? true,
    };
    return this.json.write(this.resolve(query.entity_ids), period, { ...options, no_attributes: query.no_attributes });
  }

  /**
   * State changes (not attribute-only updates, not continuous sensors: a sensor with a unit or a
   * state_class) and logbook events in the period, oldest first.
   */
  logbook(query: LogbookQuery): LogbookRow[] {
    const st = this.statements();
    const end = query.end ?? Number.MAX_VALUE;
    const attrs = this.attributeReader(false);
    const rows: LogbookRow[] = [];
    const continuous = (attributes: Record<string, unknown>) =>
      'unit_of_measurement' in attributes || 'state_class' in attributes;
    for (const [entityId, metadataId] of this.resolve(query.entity_ids)) {
      const isSensor = entityId.startsWith('sensor.');
      // a continuous sensor's rows would all be dropped: its few attribute sets tell, without
      // reading its rows into JavaScript (half of a typical day's rows)
      // (a block's sets are inside it: blocks are read)
      const margin = st.marginBlocks.all(metadataId, query.start - BLOCK_SPAN_S, query.start) as number[];
      if (
        isSensor &&
        !margin.length &&
        (st.significantSets.all(metadataId, query.start, end) as (number | null)[]).every(
          (id) => id !== BLOCK && continuous(attrs(id)),
        )
      )
        continue;
      const period = expandPeriod(
        undefined,
        margin,
        st.significantRows.all(metadataId, query.start, end) as QueryRow[],
        { start: query.start, end, significant: true },
        st.block,
      );
      for (const [state, attributesId, lastUpdated] of period.rows) {
        const attributes = attrs(attributesId);
        if (isSensor && continuous(attributes)) continue;
        rows.push({ kind: 'state', when: lastUpdated, entity_id: entityId, state, attributes });
      }
    }
    const wanted = query.entity_ids ? new Set(query.entity_ids) : null;
    for (const [eventType, data, timeFired] of st.events.iterate(query.start, end) as Iterable<
      [string, string, number]
    >) {
      if (!LOGBOOK_EVENT_TYPES.has(eventType)) continue;
      const parsed = parseObject(data);
      if (wanted && !(typeof parsed.entity_id === 'string' && wanted.has(parsed.entity_id))) continue;
      rows.push({ kind: 'event', when: timeFired, event_type: eventType, data: parsed });
    }
    return rows.sort((a, b) => a.when - b.when);
  }

  /** [entity_id, metadata_id] in the asked order (unknown ids skipped), or every recorded entity. */
  private resolve(entityIds: string[] | undefined): [string, number][] {
    const st = this.statements();
    if (!entityIds) return st.entities.all() as [string, number][];
    const out: [string, number][] = [];
    for (const id of new Set(entityIds)) {
      const metadataId = st.entity.get(id) as number | undefined;
      if (metadataId !== undefined) out.push([id, metadataId]);
    }
    return out;
  }

  /** Parses each shared attribute set once per query (a set by its id, or a block's set by its text). */
  private attributeReader(none: boolean): (set: number | string | null) => Record<string, unknown> {
    if (none) return () => ({});
    const st = this.statements();
    const cache = new Map<number | string, Record<string, unknown>>();
    return (set) => {
      if (set === null) return {};
      let value = cache.get(set);
      if (!value) {
        value = parseObject(typeof set === 'string' ? set : st.attributeText(set));
        cache.set(set, value);
      }
      return value;
    };
  }
}

function parseObject(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}
