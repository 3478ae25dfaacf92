import type { HaLogbookEntry } from '@smarthome/protocol/ha/index';
import {
  HaRawJson,
  type HaHistoryQuery,
  type HaLogbookQuery,
  type Unsubscribe,
} from '@smarthome/protocol/server/ha/index';
import type { EventBus } from '../bus.ts';
import { toLogbookEntries } from '../recorder/ha-shapes.ts';
import type { Recorder } from '../recorder/recorder.ts';

/** The edge's history and logbook for the HA API: recorder queries in HA's shapes. */

/** Written as JSON by the recorder (history-json.ts) and sent as is (no second pass inside the result envelope). */
export function history(recorder: Recorder, query: HaHistoryQuery): HaRawJson {
  // queries read written rows only: what is still queued goes first
  recorder.flush();
  return new HaRawJson(
    recorder.historyJson(
      {
        start: query.start,
        end: query.end,
        entity_ids: query.entity_ids,
        include_start_time_state: query.include_start_time_state,
        significant_changes_only: query.significant_changes_only,
        no_attributes: query.no_attributes,
      },
      { format: query.format, minimal_response: query.minimal_response },
    ),
  );
}

export function logbook(recorder: Recorder, query: HaLogbookQuery): HaLogbookEntry[] {
  recorder.flush();
  const rows = recorder.logbook({ start: query.start, end: query.end, entity_ids: query.entity_ids });
  return toLogbookEntries(
    rows,
    query.format === 'websocket' ? { time: 'epoch' } : { time: 'iso', include_names: true },
  );
}

/**
 * logbook/event_stream (basic): the period's entries in one event `{events, start_time, end_time}`,
 * then, when the period reaches now, each new state change as `{events: [entry]}` (the same
 * filter as the recorded logbook: state changes, not attribute updates or continuous sensors).
 */
export function subscribeLogbook(
  deps: { recorder: Recorder; bus: EventBus },
  query: Omit<HaLogbookQuery, 'format'>,
  listener: (update: { events: HaLogbookEntry[]; start_time?: number; end_time?: number }) => void,
): Unsubscribe {
  const nowS = Date.now() / 1000;
  const past = logbook(deps.recorder, { ...query, format: 'websocket', end: Math.min(query.end ?? nowS, nowS) });
  listener({ events: past, start_time: query.start, end_time: Math.min(query.end ?? nowS, nowS) });
  if (query.end !== undefined && query.end <= nowS) return () => {};
  const wanted = query.entity_ids ? new Set(query.entity_ids) : null;
  return deps.bus.on('state_changed', (e) => {
    const s = e.new_state;
    if (!s || (wanted && !wanted.has(e.entity_id)) || e.old_state?.state === s.state) return;
    if (e.entity_id.startsWith('sensor.') && ('unit_of_measurement' in s.attributes || 'state_class' in s.attributes))
      return;
    const when = s.last_updated ? Date.parse(s.last_updated) / 1000 : Date.now() / 1000;
    if (query.end !== undefined && when >= query.end) return;
    const entry: HaLogbookEntry = { when, state: s.state ?? 'unknown', entity_id: e.entity_id };
    if (typeof s.attributes.icon === 'string') entry.icon = s.attributes.icon;
    listener({ events: [entry] });
  });
}
