import { NEED_ATTRIBUTE_DOMAINS, haIsoTime } from './ha-shapes.ts';
import type { HistoryQuery, RecorderQueries } from './queries.ts';

/**
 * History answers serialised straight from the rows (issue #14: a day of 1,000 busy entities is
 * over a million states; building an object per state and stringifying them took seconds). The
 * attribute sets are spliced in as the JSON text they are stored as, parsed never. Same shapes
 * as ha-shapes.ts toCompressedHistory / toRestHistory (tests compare the two).
 */

export interface HistoryJsonOptions {
  format: 'websocket' | 'rest';
  minimal_response?: boolean;
  no_attributes?: boolean;
}

const str = (s: string | null) => (s === null ? 'null' : JSON.stringify(s));
const domainOf = (entityId: string) => entityId.slice(0, entityId.indexOf('.'));

export function historyJson(queries: RecorderQueries, query: HistoryQuery, options: HistoryJsonOptions): string {
  const shared = options.no_attributes ? () => '{}' : queries.sharedAttributes();
  const rest = options.format === 'rest';
  // one flat list of pieces joined once (natively): no per-row objects, no per-entity strings
  const parts: string[] = [rest ? '[' : '{'];
  let firstEntity = true;
  queries.historyRows({ ...query, no_attributes: options.no_attributes }, (entityId, rows) => {
    const minimal = options.minimal_response === true && !NEED_ATTRIBUTE_DOMAINS.has(domainOf(entityId));
    const id = JSON.stringify(entityId);
    if (!firstEntity) parts.push(',');
    firstEntity = false;
    parts.push(rest ? '[' : `${id}:[`);
    const restHead = `{"entity_id":${id},"state":`;
    let previous: string | null | undefined;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      const state = row[0];
      const lu = row[2];
      if (minimal && i > 0) {
        // minimal: after the first, state changes only, without attributes
        if (state === previous) continue;
        previous = state;
        parts.push(rest ? ',{"state":' : ',{"s":', str(state), rest ? `,"last_changed":"${haIsoTime(lu)}"}` : `,"lu":${lu}}`);
        continue;
      }
      previous = state;
      const lc = row[3];
      if (rest) {
        const updated = haIsoTime(lu);
        parts.push(i === 0 ? restHead : `,${restHead}`, str(state), ',"attributes":', shared(row[1]),
          `,"last_changed":"${lc === null || lc === lu ? updated : haIsoTime(lc)}","last_updated":"${updated}"}`);
      } else {
        parts.push(i === 0 ? '{"s":' : ',{"s":', str(state), ',"a":', shared(row[1]), lc === null || lc === lu ? `,"lu":${lu}}` : `,"lu":${lu},"lc":${lc}}`);
      }
    }
    parts.push(']');
  });
  parts.push(rest ? ']' : '}');
  return parts.join('');
}
