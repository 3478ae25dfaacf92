import { NEED_ATTRIBUTE_DOMAINS, haIsoTime } from './ha-shapes.ts';
import type { HistoryQuery, RawStateRow, RecorderQueries } from './queries.ts';

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
  const parts: string[] = [];
  let firstEntity = true;
  parts.push(rest ? '[' : '{');
  queries.historyRows({ ...query, no_attributes: options.no_attributes }, (entityId, rows) => {
    const minimal = options.minimal_response === true && !NEED_ATTRIBUTE_DOMAINS.has(domainOf(entityId));
    const id = JSON.stringify(entityId);
    const out: string[] = [];
    let previous: string | null | undefined;
    for (let i = 0; i < rows.length; i++) {
      const [state, attributesId, lu, lc] = rows[i];
      if (minimal && i > 0) {
        // minimal: after the first, state changes only, without attributes
        if (state === previous) continue;
        previous = state;
        out.push(rest ? `{"state":${str(state)},"last_changed":"${haIsoTime(lu)}"}` : `{"s":${str(state)},"lu":${lu}}`);
        continue;
      }
      previous = state;
      if (rest) {
        const updated = haIsoTime(lu);
        out.push(`{"entity_id":${id},"state":${str(state)},"attributes":${shared(attributesId)},"last_changed":"${lc === null || lc === lu ? updated : haIsoTime(lc)}","last_updated":"${updated}"}`);
      } else {
        out.push(lc === null || lc === lu
          ? `{"s":${str(state)},"a":${shared(attributesId)},"lu":${lu}}`
          : `{"s":${str(state)},"a":${shared(attributesId)},"lu":${lu},"lc":${lc}}`);
      }
    }
    parts.push(`${firstEntity ? '' : ','}${rest ? '' : `${id}:`}[${out.join(',')}]`);
    firstEntity = false;
  });
  parts.push(rest ? ']' : '}');
  return parts.join('');
}
