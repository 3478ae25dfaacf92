import { unauthorized } from '@smarthome/protocol/server';
import type { Caller } from '../context.ts';

/** What route handlers of every capability read from a request: who calls, and which row a path names. */

/** The user behind a bearer route (the router already refused anonymous callers). */
export function userOf(auth: Caller): string {
  if (!auth.userId) throw unauthorized();
  return auth.userId;
}

/** A path id that passed IntIdParam, or null when it cannot name a row (beyond the safe integer range). */
export function rowId(param: string): number | null {
  const n = Number(param);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}
