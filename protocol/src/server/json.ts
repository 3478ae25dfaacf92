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
      if (ch === 0x5c)
        i++; // backslash: skip the escaped character
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
 * A request body as JSON: UTF-8, well-formed, at most MAX_JSON_DEPTH deep, no NUL in its strings;
 * anything else is a 400 `{message}` saying which. An empty body is malformed here (callers decide what empty means).
 */
export function parseJsonBody(bytes: Uint8Array, maxDepth = MAX_JSON_DEPTH): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (err) {
    throw badRequest('malformed JSON body', err);
  }
  if (jsonDeeperThan(text, maxDepth)) throw badRequest(`JSON body nested deeper than ${maxDepth} levels`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw badRequest('malformed JSON body', err);
  }
  // JSON can carry NUL only as the escape \u0000: without one in the text, no walk is needed.
  if (text.includes('\\u0000') && containsNul(value))
    throw badRequest('JSON body strings may not contain NUL (U+0000)');
  return value;
}

/**
 * Whether a string or key anywhere in a parsed body holds NUL: PostgreSQL cannot store it (the
 * same request would answer 500 there and store a string SQLite truncates in places), and no
 * real input needs it. Recursion is safe here: the value is depth-bounded.
 */
function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (!value || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(containsNul);
  return Object.entries(value).some(([k, v]) => k.includes('\0') || containsNul(v));
}
