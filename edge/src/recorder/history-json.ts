import { NEED_ATTRIBUTE_DOMAINS, haIsoTime } from './ha-shapes.ts';
import { JsonBuffer } from './json-buffer.ts';
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

const domainOf = (entityId: string) => entityId.slice(0, entityId.indexOf('.'));

export function historyJson(queries: RecorderQueries, query: HistoryQuery, options: HistoryJsonOptions): string {
  const sharedText = options.no_attributes ? () => '{}' : queries.sharedAttributes();
  // each attribute set encoded once, then copied as bytes
  const encoded = new Map<number | null, Buffer>();
  const attributes = (id: number | null) => {
    let b = encoded.get(id);
    if (!b) { b = Buffer.from(sharedText(id), 'utf8'); encoded.set(id, b); }
    return b;
  };
  const rest = options.format === 'rest';
  const out = new JsonBuffer();
  out.ascii(rest ? '[' : '{');
  let firstEntity = true;
  queries.historyRows({ ...query, no_attributes: options.no_attributes }, (entityId, rows) => {
    const minimal = options.minimal_response === true && !NEED_ATTRIBUTE_DOMAINS.has(domainOf(entityId));
    const id = JSON.stringify(entityId);
    if (!firstEntity) out.ascii(',');
    firstEntity = false;
    if (!rest) { out.raw(id); out.ascii(':'); }
    out.ascii('[');
    const restHead = Buffer.from(`{"entity_id":${id},"state":`, 'utf8');
    let previous: string | null | undefined;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      const state = row[0];
      const lu = row[2];
      if (minimal && i > 0) {
        // minimal: after the first, state changes only, without attributes
        if (state === previous) continue;
        previous = state;
        out.ascii(rest ? ',{"state":' : ',{"s":');
        out.jsonString(state);
        if (rest) { out.ascii(',"last_changed":"'); out.ascii(haIsoTime(lu)); out.ascii('"}'); } else { out.ascii(',"lu":'); out.ascii(String(lu)); out.ascii('}'); }
        continue;
      }
      previous = state;
      const lc = row[3];
      if (i > 0) out.ascii(',');
      if (rest) {
        const updated = haIsoTime(lu);
        out.bytes(restHead);
        out.jsonString(state);
        out.ascii(',"attributes":');
        out.bytes(attributes(row[1]));
        out.ascii(',"last_changed":"');
        out.ascii(lc === null || lc === lu ? updated : haIsoTime(lc));
        out.ascii('","last_updated":"');
        out.ascii(updated);
        out.ascii('"}');
      } else {
        out.ascii('{"s":');
        out.jsonString(state);
        out.ascii(',"a":');
        out.bytes(attributes(row[1]));
        out.ascii(',"lu":');
        out.ascii(String(lu));
        if (lc !== null && lc !== lu) { out.ascii(',"lc":'); out.ascii(String(lc)); }
        out.ascii('}');
      }
    }
    out.ascii(']');
  });
  out.ascii(rest ? ']' : '}');
  return out.toString();
}
