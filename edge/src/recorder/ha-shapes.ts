import type { History, LogbookRow, RecordedState } from './queries.ts';

/**
 * Pure mappings from recorder query results to Home Assistant's wire shapes (as HA core's
 * recorder/history/modern.py `_sorted_states_to_dict`, recorder/models `row_to_compressed_state`
 * and logbook/processor.py build them), so the WebSocket and REST handlers only wire them.
 */

/** Domains whose minimal_response keeps full states (HA's NEED_ATTRIBUTE_DOMAINS). */
export const NEED_ATTRIBUTE_DOMAINS: ReadonlySet<string> = new Set([
  'climate',
  'humidifier',
  'input_datetime',
  'thermostat',
  'water_heater',
]);

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

/** HA's isoformat for UTC datetimes: "2026-11-23T21:35:10.123000+00:00". */
export function haIsoTime(epochSeconds: number): string {
  const ms = Math.round(epochSeconds * 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}000+00:00`;
}

const domainOf = (entityId: string) => entityId.slice(0, entityId.indexOf('.'));

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

export function toCompressedState(s: RecordedState, noAttributes = false): CompressedState {
  const out: CompressedState = { s: s.state, a: noAttributes ? {} : s.attributes, lu: s.last_updated };
  if (s.last_changed !== s.last_updated) out.lc = s.last_changed;
  return out;
}

/** The WebSocket answer: `{ "<entity_id>": [ {s, a, lu, lc?}, … ] }`. */
export function toCompressedHistory(
  history: History,
  options: HistoryShapeOptions = {},
): Record<string, (CompressedState | MinimalCompressedState)[]> {
  const out: Record<string, (CompressedState | MinimalCompressedState)[]> = {};
  for (const [entityId, states] of history) {
    if (!options.minimal_response || NEED_ATTRIBUTE_DOMAINS.has(domainOf(entityId))) {
      out[entityId] = states.map((s) => toCompressedState(s, options.no_attributes));
      continue;
    }
    out[entityId] = [
      toCompressedState(states[0], options.no_attributes),
      ...minimalTail(states, (s) => ({ s: s.state, lu: s.last_updated })),
    ];
  }
  return out;
}

export function toHaState(entityId: string, s: RecordedState, noAttributes = false): HaState {
  const lastUpdated = haIsoTime(s.last_updated);
  return {
    entity_id: entityId,
    state: s.state,
    attributes: noAttributes ? {} : s.attributes,
    last_changed: s.last_changed === s.last_updated ? lastUpdated : haIsoTime(s.last_changed),
    last_updated: lastUpdated,
  };
}

/** `GET /api/history/period/{timestamp}`: a list per entity of full states (minimal: `{state, last_changed}` after the first). */
export function toRestHistory(history: History, options: HistoryShapeOptions = {}): (HaState | MinimalHaState)[][] {
  const out: (HaState | MinimalHaState)[][] = [];
  for (const [entityId, states] of history) {
    if (!options.minimal_response || NEED_ATTRIBUTE_DOMAINS.has(domainOf(entityId))) {
      out.push(states.map((s) => toHaState(entityId, s, options.no_attributes)));
      continue;
    }
    out.push([
      toHaState(entityId, states[0], options.no_attributes),
      ...minimalTail(states, (s) => ({ state: s.state, last_changed: haIsoTime(s.last_updated) })),
    ]);
  }
  return out;
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
  const when = (t: number) => (options.time === 'iso' ? haIsoTime(t) : t);
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
