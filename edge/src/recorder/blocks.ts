import type { Database, Statement } from 'better-sqlite3';

/**
 * History blocks: when an entity has many states in one batch (a busy sensor, MQTT bursts), they
 * are written as one recorder_states row instead of a row each: an index entry and a row per
 * block, not per state (the store micro-benchmark: a new 350-byte set each state 5.0 -> 1.9 us,
 * a repeating set 2.9 -> 0.4 us a state, 25 states a block). A state's row costs SQLite about as
 * much as the rest of the edge spends on the message, so below a few states per batch nothing is
 * gained and the plain rows stay (the history of a typical home is plain rows).
 *
 * A block row: attributes_id = BLOCK (no set has id 0), last_updated = its first state's time,
 * state = its own state_id as text (so that a reader of the covering index finds the block
 * without a fifth column: that column cost a day's history of 1,000 entities ~12 %), last_changed
 * NULL (so that it passes the significant-changes filter; its states are filtered one by one),
 * `data` = JSON `[[state, last_updated, last_changed|null, set], ...]` and `shared` = the texts
 * of the block's own sets, one after the other. `set` is null (no
 * attributes), a length L >= 0 (the next L characters of `shared`), or -(k + 1): the set of the
 * block's state k. A block keeps its sets inside it (no reference out, none in): deleting it
 * leaves nothing behind, and the purge needs no bookkeeping for it.
 *
 * A block's states are in time order and span at most BLOCK_SPAN_S, so a reader finds a period's
 * states in the rows and blocks that start in it and the blocks that start less than BLOCK_SPAN_S
 * before it (expandPeriod); an entity's blocks overlap only after its clock stepped back.
 */

/** attributes_id of a block row */
export const BLOCK = 0;
/** An entity's states in one batch from which they are written as blocks. */
export const BLOCK_FROM = 4;
/** The longest time (s) from a block's first state to its last. */
export const BLOCK_SPAN_S = 60;

/** One state of a block: its set's text itself (not an id). */
export type BlockItem = [
  state: string | null,
  lastUpdated: number,
  lastChanged: number | null,
  attributes: string | null,
];

/** What the store keeps of a state to be written in a block (the set as its JSON text, or null). */
export interface BlockState {
  state: string | null;
  last_updated: number;
  last_changed: number | null;
  shared: string | null;
}

export interface EncodedBlock {
  first: number;
  data: string;
  shared: string | null;
}

/**
 * The entities with at least `blockFrom` states in the batch, each with an empty list for its
 * states; null when there are none.
 */
export function blockEntities(
  rows: readonly ({ kind: 'state'; entity_id: string } | { kind: 'event' })[],
  blockFrom: number,
): Map<string, BlockState[]> | null {
  const counts = new Map<string, number>();
  let blocks: Map<string, BlockState[]> | null = null;
  for (const row of rows) {
    if (row.kind !== 'state') continue;
    const n = (counts.get(row.entity_id) ?? 0) + 1;
    counts.set(row.entity_id, n);
    if (n === blockFrom) (blocks ??= new Map()).set(row.entity_id, []);
  }
  return blocks;
}

/**
 * An entity's states (in arrival order) in groups for blocks: a new group when a state is older
 * than the one before it or past the group's span.
 */
export function splitBlocks<T extends BlockState>(states: readonly T[]): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  for (const s of states) {
    if (
      group.length &&
      (s.last_updated < group[group.length - 1].last_updated || s.last_updated - group[0].last_updated > BLOCK_SPAN_S)
    ) {
      groups.push(group);
      group = [];
    }
    group.push(s);
  }
  if (group.length) groups.push(group);
  return groups;
}

/** A block's two texts (the states, the sets they carry) and its first state's time. */
export function encodeBlock(states: readonly BlockState[]): EncodedBlock {
  let data = '';
  let shared = '';
  // the last set written into the block, and the state that carries it
  let lastSet: string | null = null;
  let lastSetItem = 0;
  for (let i = 0; i < states.length; i++) {
    const s = states[i];
    let set: number | null = null;
    if (s.shared) {
      if (s.shared === lastSet) set = -(lastSetItem + 1);
      else {
        set = s.shared.length;
        shared += s.shared;
        lastSet = s.shared;
        lastSetItem = i;
      }
    }
    // numbers as JavaScript writes them: JSON.parse reads back the same double
    data += `${i ? ',' : ''}[${JSON.stringify(s.state)},${s.last_updated},${s.last_changed ?? null},${set}]`;
  }
  return { first: states[0].last_updated, data: `[${data}]`, shared: shared || null };
}

/** A block's states, in time order, each with its set's text (one string per set). */
export function decodeBlock(data: string, shared: string | null): BlockItem[] {
  const raw = JSON.parse(data) as [string | null, number, number | null, number | null][];
  const items: BlockItem[] = new Array(raw.length);
  let offset = 0;
  for (let i = 0; i < raw.length; i++) {
    const [state, lastUpdated, lastChanged, set] = raw[i];
    let attributes: string | null = null;
    if (set !== null && set >= 0) {
      attributes = (shared ?? '').slice(offset, offset + set);
      offset += set;
    } else if (set !== null) attributes = items[-set - 1]?.[3] ?? null;
    items[i] = [state, lastUpdated, lastChanged, attributes];
  }
  return items;
}

export const BLOCK_SQL = 'SELECT data, shared FROM recorder_states WHERE state_id = ?';

/** A block's states by its row's state_id (empty when it is gone). Statement prepared on first use. */
export function blockReader(sqlite: () => Database): (stateId: number) => BlockItem[] {
  let statement: Statement | null = null;
  return (stateId) => {
    statement ??= sqlite().prepare(BLOCK_SQL).raw();
    const row = statement.get(stateId) as [string | null, string | null] | undefined;
    if (!row?.[0]) return [];
    try {
      return decodeBlock(row[0], row[1]);
    } catch {
      return [];
    }
  };
}

/** A row of a period query: [state, attributes_id, last_updated, last_changed] (a block's state: its state_id). */
export type QueryRow = [
  state: string | null,
  attributesId: number | null,
  lastUpdated: number,
  lastChanged: number | null,
];
/** The start state's query row: [state, attributes_id, state_id, last_updated]. */
export type BeforeRow = [state: string | null, attributesId: number | null, stateId: number, lastUpdated: number];
/** A state of a period: a plain row's set by its id, a block state's set by its text. */
export type PeriodRow = [
  state: string | null,
  attributes: number | string | null,
  lastUpdated: number,
  lastChanged: number | null,
];

export interface Period {
  start: number;
  end: number;
  /** only states whose state changed (last_changed null) */
  significant: boolean;
}

/**
 * The blocks that start within BLOCK_SPAN_S before a period (the only ones, besides those that start
 * in it, that may hold its states): their state_ids, in order. A covering index search.
 */
export const MARGIN_BLOCKS_SQL = `SELECT state_id FROM recorder_states
  WHERE metadata_id = ? AND last_updated >= ? AND last_updated < ? AND attributes_id = ${BLOCK} ORDER BY last_updated, state_id`;

/**
 * The margin's blocks (MARGIN_BLOCKS_SQL run by `query`) when there may be any: only when the row that
 * starts last before the period (`before`) starts within the margin, as any block there would.
 */
export function marginBlocks(
  before: BeforeRow | undefined,
  start: number,
  query: (from: number, to: number) => number[],
): number[] {
  return before && before[3] >= start - BLOCK_SPAN_S ? query(start - BLOCK_SPAN_S, start) : [];
}

/** Whether a block row is among `rows` or may hold the period's start state. */
export function hasBlock(
  before: BeforeRow | undefined,
  margin: readonly number[],
  rows: readonly { 1: number | null }[],
): boolean {
  if (margin.length || before?.[1] === BLOCK) return true;
  for (const row of rows) if (row[1] === BLOCK) return true;
  return false;
}

/**
 * An entity's states in the period, in time order, from the rows and blocks that start in it
 * (`rows`, in order) and the blocks that start within BLOCK_SPAN_S before it (`margin`); and its
 * state at start: the last before it, among those blocks' states and the row or block that starts
 * last before the period (`before`). Blocks of an entity do not overlap unless its clock stepped
 * back, and then too every state is found: a block that holds a state of the period starts at most
 * BLOCK_SPAN_S before it. Without a block the rows are handed back as they are.
 */
export function expandPeriod(
  before: BeforeRow | undefined,
  margin: readonly number[],
  rows: QueryRow[],
  period: Period,
  readBlock: (stateId: number) => BlockItem[],
): { head: [state: string | null, attributes: number | string | null] | undefined; rows: PeriodRow[] } {
  if (!hasBlock(before, margin, rows)) return { head: before && [before[0], before[1]], rows };
  const out: PeriodRow[] = [];
  let head: [string | null, number | string | null] | undefined;
  let headTime = -Infinity;
  const atStart = (state: string | null, attributes: number | string | null, time: number) => {
    if (time < headTime) return;
    head = [state, attributes];
    headTime = time;
  };
  const take = (item: BlockItem) => {
    if (item[1] < period.start) return atStart(item[0], item[3], item[1]);
    if (item[1] >= period.end) return;
    if (period.significant && item[2] !== null) return;
    out.push([item[0], item[3], item[1], item[2]]);
  };
  if (before?.[1] === BLOCK) {
    if (!margin.includes(before[2])) for (const item of readBlock(before[2])) take(item);
  } else if (before) atStart(before[0], before[1], before[3]);
  for (const stateId of margin) for (const item of readBlock(stateId)) take(item);
  let blocks = margin.length > 0;
  for (const row of rows) {
    if (row[1] !== BLOCK) out.push(row);
    else {
      blocks = true;
      for (const item of readBlock(Number(row[0]))) take(item);
    }
  }
  // a block's states run past the rows that start after it only when the clock stepped back
  // (stable: states of the same time stay in the order written)
  if (blocks) out.sort((a, b) => a[2] - b[2]);
  return { head, rows: out };
}
