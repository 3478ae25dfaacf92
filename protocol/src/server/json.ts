import { badRequest } from './errors.ts';

/**
 * How deep request bodies and app WebSocket messages may nest (objects and arrays). Real
 * configurations stay far below it (a Home Assistant dashboard or automation is rarely 15 levels
 * deep); thousands of levels overflow the stack of whatever walks the value recursively
 * (JSON.stringify, zod, our own code), so JSON deeper than this is refused where it enters.
 */
export const MAX_JSON_DEPTH = 64;
/**
 * The same bound for tunnel messages: a request or response body (≤ MAX_JSON_DEPTH when it
 * came in over HTTP) inside the message's envelope, with room to spare.
 */
export const MAX_TUNNEL_JSON_DEPTH = 4 * MAX_JSON_DEPTH;

export class JsonTooDeepError extends Error {
  constructor(maxDepth: number) {
    super(`JSON nested deeper than ${maxDepth} levels`);
    this.name = 'JsonTooDeepError';
  }
}

/**
 * Whether JSON text nests objects/arrays deeper than `maxDepth`: one pass over the text,
 * before any parsing (JSON.parse itself does not overflow; what walks its result does).
 */
export function jsonDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++; // backslash: skip the escaped character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) {
      inString = true;
    } else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > maxDepth) return true;
    } else if (ch === 0x7d || ch === 0x5d) {
      depth--;
    }
  }
  return false;
}

/** JSON.parse that refuses nesting deeper than `maxDepth` (JsonTooDeepError). */
export function parseJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  if (jsonDeeperThan(text, maxDepth)) throw new JsonTooDeepError(maxDepth);
  return JSON.parse(text);
}

/**
 * A request body as JSON: UTF-8, well-formed, at most MAX_JSON_DEPTH deep; anything else is a
 * 400 `{message}` saying which. An empty body is malformed here (callers decide what empty means).
 */
export function parseJsonBody(bytes: Uint8Array, maxDepth = MAX_JSON_DEPTH): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw badRequest('malformed JSON body', err);
  }
  if (jsonDeeperThan(text, maxDepth)) throw badRequest(`JSON body nested deeper than ${maxDepth} levels`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest('malformed JSON body', err);
  }
}
