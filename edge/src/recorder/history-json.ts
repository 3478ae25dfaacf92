import type { Database, Statement } from 'better-sqlite3';
import { domainOf, NEED_ATTRIBUTE_DOMAINS, SIGNIFICANT_DOMAINS } from './domains.ts';
import { isoTimeFormatter } from './ha-time.ts';
import { attributeTextReader } from './attribute-text.ts';
import {
  blockReader,
  expandPeriod,
  hasBlock,
  MARGIN_BLOCKS_SQL,
  marginBlocks,
  type BeforeRow,
  type BlockItem,
  type PeriodRow,
  type QueryRow,
} from './blocks.ts';

/**
 * A history answer written as JSON text from raw rows, for both HA shapes (WebSocket
 * `history/history_during_period`: `{entity_id: [{s, a, lu, lc?}]}`; REST `/api/history/period`:
 * `[[{entity_id, state, attributes, last_changed, last_updated}]]`), with the same items as
 * `compressedHistoryJson` / `restHistoryJson` over `RecorderQueries.history()` (equal after
 * JSON.parse; a test checks it), without the objects in between: rows come as arrays, each
 * attribute set's stored JSON (the store's JSON.stringify of an object) is read once per answer
 * and spliced as text (no parse and stringify), states are quoted once, REST times are
 * formatted once per minute, and minimal tails read two columns. (Tried and dropped: SQLite writing the items with group_concat, one
 * string per entity: no less CPU in the WebSocket shape and more in REST, where strftime was
 * the cost; sending the answer as Buffers from SQLite instead of one string: no less CPU.)
 */

export type HistoryFormat = 'websocket' | 'rest';

export interface HistoryJsonOptions {
  format: HistoryFormat;
  minimal_response?: boolean;
  no_attributes?: boolean;
}

/** The period and filters, defaults applied (see HistoryQuery). */
export interface HistoryRange {
  start: number;
  end: number;
  include_start_time_state: boolean;
  significant_changes_only: boolean;
}

const range = (significant: boolean) =>
  `metadata_id = @metadata_id AND last_updated >= @start AND last_updated < @end${significant ? ' AND last_changed IS NULL' : ''}`;

/** The statements (exported so a test can check their query plans). */
export function historyJsonSql(significant: boolean) {
  return {
    /** [state, attributes_id, state_id, last_updated]: the last row before start, the first item (stamped at start) */
    start: `SELECT state, attributes_id, state_id, last_updated FROM recorder_states
      WHERE metadata_id = @metadata_id AND last_updated < @start ORDER BY last_updated DESC, state_id DESC LIMIT 1`,
    /** [state, attributes_id, last_updated, last_changed] */
    rows: `SELECT state, attributes_id, last_updated, last_changed FROM recorder_states
      WHERE ${range(significant)} ORDER BY last_updated, state_id`,
    /** a minimal answer's first row when there is no start state */
    first: `SELECT state, attributes_id, last_updated, last_changed FROM recorder_states
      WHERE ${range(significant)} ORDER BY last_updated, state_id LIMIT 1`,
    /** [state, attributes_id, last_updated]: a minimal answer's rows (no last_changed and state_id to fetch; attributes_id tells a block) */
    minimal: `SELECT state, attributes_id, last_updated FROM recorder_states WHERE ${range(significant)} ORDER BY last_updated, state_id`,
  };
}

type Statements = { start: Statement; rows: Statement; first: Statement; minimal: Statement; margin: Statement };
/** a state: a plain row's set by its id, a block state's set by its text (blocks.ts) */
type Row = PeriodRow;

/** An answer's item writers: a full item from a row, a minimal one from a state and its time. */
interface Items {
  full: (row: Row) => string;
  minimal: (state: string | null, lastUpdated: number) => string;
}

/**
 * A minimal answer's items: `first` in full (the start state, else the period's first row), then
 * each change of state among `rows` (state at 0, last_updated at 2); without a start state the
 * first row is skipped as unchanged: it is `first`.
 */
function minimalItems(
  items: Items,
  first: Row | undefined,
  rows: readonly { 0: string | null; 2: number }[],
): string[] {
  const out = first ? [items.full(first)] : [];
  let previous = first?.[0];
  for (const row of rows) {
    if (row[0] === previous) continue;
    previous = row[0];
    out.push(items.minimal(row[0], row[2]));
  }
  return out;
}

/** Writes history answers; statements are prepared on first use (per significant filter). */
export class HistoryJsonWriter {
  private readonly sqlite: () => Database;
  private readonly prepared = new Map<boolean, Statements>();
  private attributeText: (id: number) => string | undefined;
  private block: (stateId: number) => BlockItem[];

  constructor(sqlite: () => Database) {
    this.sqlite = sqlite;
    this.attributeText = attributeTextReader(sqlite);
    this.block = blockReader(sqlite);
  }

  /** The database closed: statements must be prepared again on the next open. */
  reset(): void {
    this.prepared.clear();
    this.attributeText = attributeTextReader(this.sqlite);
    this.block = blockReader(this.sqlite);
  }

  /** `entities`: [entity_id, metadata_id] in the answer's order. */
  write(entities: [string, number][], period: HistoryRange, options: HistoryJsonOptions): string {
    const rest = options.format === 'rest';
    const parts: string[] = [];
    const writers = this.itemWriters(options);
    for (const [entityId, metadataId] of entities) {
      const domain = domainOf(entityId);
      const significant = period.significant_changes_only && !SIGNIFICANT_DOMAINS.has(domain);
      const st = this.statements(significant);
      const items = writers(entityId);
      const params = { metadata_id: metadataId, start: period.start, end: period.end };
      // the start state, and blocks that start before the period and may reach into it
      const before = st.start.get({ metadata_id: metadataId, start: period.start }) as BeforeRow | undefined;
      const margin = marginBlocks(before, period.start, (from, to) => st.margin.all(metadataId, from, to) as number[]);
      const minimal = options.minimal_response && !NEED_ATTRIBUTE_DOMAINS.has(domain);
      const minimalRows = minimal ? (st.minimal.all(params) as [string | null, number | null, number][]) : undefined;
      let out: string[];
      if (minimalRows && !hasBlock(before, margin, minimalRows)) {
        // the start state stamped at start, else the first row
        const head: Row | undefined =
          period.include_start_time_state && before ? [before[0], before[1], period.start, null] : undefined;
        out = minimalItems(
          items,
          head ?? (minimalRows.length ? (st.first.get(params) as Row) : undefined),
          minimalRows,
        );
      } else {
        const expanded = expandPeriod(
          before,
          margin,
          st.rows.all(params) as QueryRow[],
          { start: period.start, end: period.end, significant },
          this.block,
        );
        const head: Row | undefined =
          period.include_start_time_state && expanded.head
            ? [expanded.head[0], expanded.head[1], period.start, null]
            : undefined;
        if (minimal) out = minimalItems(items, head ?? expanded.rows[0], expanded.rows);
        else {
          out = head ? [items.full(head)] : [];
          for (const row of expanded.rows) out.push(items.full(row));
        }
      }
      if (!out.length) continue;
      parts.push(rest ? `[${out.join(',')}]` : `${JSON.stringify(entityId)}:[${out.join(',')}]`);
    }
    return rest ? `[${parts.join(',')}]` : `{${parts.join(',')}}`;
  }

  /**
   * Per answer: each state quoted once (few per entity), times formatted per minute, each
   * attribute set's stored text read once and spliced as is; then per entity its item writers.
   */
  private itemWriters(options: HistoryJsonOptions): (entityId: string) => Items {
    const quoted = new Map<string | null, string>();
    const quote = (state: string | null) => {
      let text = quoted.get(state);
      if (text === undefined) {
        text = JSON.stringify(state);
        quoted.set(state, text);
      }
      return text;
    };
    const texts = new Map<number, string>();
    const attributes = options.no_attributes
      ? () => '{}'
      : (id: number | string | null) => {
          if (id === null) return '{}';
          if (typeof id === 'string') return id || '{}';
          let text = texts.get(id);
          if (text === undefined) {
            text = this.attributeText(id) || '{}';
            texts.set(id, text);
          }
          return text;
        };
    if (options.format === 'websocket')
      return () => ({
        full: ([state, attributesId, lu, lc]) =>
          lc === null || lc === lu
            ? `{"s":${quote(state)},"a":${attributes(attributesId)},"lu":${lu}}`
            : `{"s":${quote(state)},"a":${attributes(attributesId)},"lu":${lu},"lc":${lc}}`,
        minimal: (state, lu) => `{"s":${quote(state)},"lu":${lu}}`,
      });
    const iso = isoTimeFormatter();
    return (entityId) => {
      const prefix = `{"entity_id":${JSON.stringify(entityId)},"state":`;
      return {
        full: ([state, attributesId, lu, lc]) => {
          const updated = iso(lu);
          return `${prefix}${quote(state)},"attributes":${attributes(attributesId)},"last_changed":"${lc === null ? updated : iso(lc)}","last_updated":"${updated}"}`;
        },
        minimal: (state, lu) => `{"state":${quote(state)},"last_changed":"${iso(lu)}"}`,
      };
    };
  }

  private statements(significant: boolean): Statements {
    let st = this.prepared.get(significant);
    if (!st) {
      const sql = historyJsonSql(significant);
      const sqlite = this.sqlite();
      st = {
        start: sqlite.prepare(sql.start).raw(),
        rows: sqlite.prepare(sql.rows).raw(),
        first: sqlite.prepare(sql.first).raw(),
        minimal: sqlite.prepare(sql.minimal).raw(),
        margin: sqlite.prepare(MARGIN_BLOCKS_SQL).pluck(),
      };
      this.prepared.set(significant, st);
    }
    return st;
  }
}
