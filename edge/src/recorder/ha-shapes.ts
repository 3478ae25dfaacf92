import { domainOf, NEED_ATTRIBUTE_DOMAINS } from './domains.ts';
import { haIsoTime, isoTimeFormatter } from './ha-time.ts';
import type { History, LogbookRow, RecordedState } from './queries.ts';

/**
 * Pure mappings from recorder query results to Home Assistant's wire shapes (as HA core's
 * recorder/history/modern.py `_sorted_states_to_dict`, recorder/models `row_to_compressed_state`
 * and logbook/processor.py build them), so the WebSocket and REST handlers only wire them.
 */

export interface HistoryShapeOptions {
  minimal_response?: boolean;
  no_attributes?: boolean;
}

/** `history/history_during_period` and `history/stream` items: s, a, lu (epoch s), lc when it differs. */
export type CompressedState = { s: string | null; a?: Record<string, unknown>; lu: number; lc?: number };
/** minimal_response items after the first */
export type MinimalCompressedState = { s: string | null; lu: number };

/** The REST history's full state object. */
export interface HaState {
  entity_id: string;
  state: string | null;
  attributes: Record<string, unknown>;
  last_changed: string;
  last_updated: string;
}
/** REST minimal_response items after the first */
export interface MinimalHaState {
  state: string | null;
  last_changed: string;
}

/** Minimal responses keep the first state full and then only state changes (attribute-only rows dropped). */
function minimalTail<T>(states: RecordedState[], item: (s: RecordedState) => T): T[] {
  const out: T[] = [];
  let previous = states[0].state;
  for (let i = 1; i < states.length; i++) {
    const s = states[i];
    if (s.state === previous) continue;
    previous = s.state;
    out.push(item(s));
  }
  return out;
}

/** A compressed item's fields besides `a` (the one definition of the item; the writer adds `a`). */
function compressedFields(s: RecordedState): Omit<CompressedState, 'a'> {
  const out: Omit<CompressedState, 'a'> = { s: s.state, lu: s.last_updated };
  if (s.last_changed !== s.last_updated) out.lc = s.last_changed;
  return out;
}

/** A REST state's fields besides `attributes`. */
function restFields(entityId: string, s: RecordedState): Omit<HaState, 'attributes'> {
  const lastUpdated = haIsoTime(s.last_updated);
  return {
    entity_id: entityId,
    state: s.state,
    last_changed: s.last_changed === s.last_updated ? lastUpdated : haIsoTime(s.last_changed),
    last_updated: lastUpdated,
  };
}

/**
 * Each attribute set as JSON text, written once per answer: the query returns one object per
 * stored set, so caching by identity lets every item splice the same text instead of
 * JSON.stringify walking the set again for each item (2–3× faster on a day of history).
 * no_attributes: '{}' (the query gives a new {} per item, nothing to cache).
 */
function attributesWriter(noAttributes: boolean | undefined): (attributes: Record<string, unknown>) => string {
  if (noAttributes) return () => '{}';
  const cache = new Map<Record<string, unknown>, string>();
  return (attributes) => {
    let text = cache.get(attributes);
    if (text === undefined) {
      text = JSON.stringify(attributes);
      cache.set(attributes, text);
    }
    return text;
  };
}

/** `{"key":<json>,` + the other fields' JSON (never empty: every item has a state and a time). */
const spliced = (key: string, json: string, rest: object) => `{"${key}":${json},${JSON.stringify(rest).slice(1)}`;

/** The WebSocket answer as JSON: `{ "<entity_id>": [ {s, a, lu, lc?}, … ] }` (see CompressedState). */
export function compressedHistoryJson(history: History, options: HistoryShapeOptions = {}): string {
  const attributes = attributesWriter(options.no_attributes);
  const full = (s: RecordedState) => spliced('a', attributes(s.attributes), compressedFields(s));
  const parts: string[] = [];
  for (const [entityId, states] of history) {
    const items =
      !options.minimal_response || NEED_ATTRIBUTE_DOMAINS.has(domainOf(entityId))
        ? states.map(full)
        : [
            full(states[0]),
            ...minimalTail(states, (s) => JSON.stringify({ s: s.state, lu: s.last_updated } as MinimalCompressedState)),
          ];
    parts.push(`${JSON.stringify(entityId)}:[${items.join(',')}]`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * `GET /api/history/period/{timestamp}` as JSON: a list per entity of full states (HaState;
 * minimal: MinimalHaState after the first).
 */
export function restHistoryJson(history: History, options: HistoryShapeOptions = {}): string {
  const attributes = attributesWriter(options.no_attributes);
  const parts: string[] = [];
  for (const [entityId, states] of history) {
    const full = (s: RecordedState) => spliced('attributes', attributes(s.attributes), restFields(entityId, s));
    const items =
      !options.minimal_response || NEED_ATTRIBUTE_DOMAINS.has(domainOf(entityId))
        ? states.map(full)
        : [
            full(states[0]),
            ...minimalTail(states, (s) =>
              JSON.stringify({ state: s.state, last_changed: haIsoTime(s.last_updated) } as MinimalHaState),
            ),
          ];
    parts.push(`[${items.join(',')}]`);
  }
  return `[${parts.join(',')}]`;
}

export interface LogbookEntry {
  /** epoch seconds (WebSocket event_stream) or ISO string (REST) */
  when: number | string;
  name?: string;
  message?: string;
  domain?: string;
  entity_id?: string;
  state?: string | null;
  icon?: string;
}

export interface LogbookShapeOptions {
  /** 'epoch' for logbook/event_stream, 'iso' for GET /api/logbook */
  time: 'epoch' | 'iso';
  /** REST entries carry the entity's name; the WebSocket stream leaves it to the frontend */
  include_names?: boolean;
}

/** Logbook entries as HA's logbook processor builds them. */
export function toLogbookEntries(rows: LogbookRow[], options: LogbookShapeOptions): LogbookEntry[] {
  // a day's logbook is ~10^5 entries: times per minute, not a Date each
  const iso = options.time === 'iso' ? isoTimeFormatter() : null;
  const when = (t: number) => (iso ? iso(t) : t);
  const out: LogbookEntry[] = [];
  for (const row of rows) {
    if (row.kind === 'state') {
      const entry: LogbookEntry = { when: when(row.when), state: row.state, entity_id: row.entity_id };
      if (options.include_names)
        entry.name = typeof row.attributes.friendly_name === 'string' ? row.attributes.friendly_name : row.entity_id;
      if (typeof row.attributes.icon === 'string') entry.icon = row.attributes.icon;
      out.push(entry);
      continue;
    }
    if (row.event_type === 'homeassistant_start' || row.event_type === 'homeassistant_stop') {
      out.push({
        when: when(row.when),
        name: 'Home Assistant',
        message: row.event_type === 'homeassistant_start' ? 'started' : 'stopped',
        domain: 'homeassistant',
      });
      continue;
    }
    // logbook_entry: what logbook.log was given
    const d = row.data;
    const entry: LogbookEntry = { when: when(row.when), name: String(d.name ?? ''), message: String(d.message ?? '') };
    if (typeof d.domain === 'string') entry.domain = d.domain;
    if (typeof d.entity_id === 'string') entry.entity_id = d.entity_id;
    out.push(entry);
  }
  return out;
}
