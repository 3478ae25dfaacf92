import { HttpError, MAX_JSON_DEPTH } from '@smarthome/protocol/server';
import { HaCommandError } from '@smarthome/protocol/server/ha/index';

/**
 * What goes through the tunnel nests no deeper than a /v1 request body may: the HA socket and
 * REST parse without a bound, and walking (even JSON.stringify) a deeper value overflows the stack.
 */
export function assertShallow(data: Record<string, unknown>): void {
  const limit = MAX_JSON_DEPTH - 1;
  const stack: Array<[unknown, number]> = [[data, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (depth > limit) throw new HaCommandError('invalid_format', `Data nested deeper than ${limit} levels.`);
    for (const child of Object.values(value as object))
      if (child && typeof child === 'object') stack.push([child, depth + 1]);
  }
}

/** An edge's error answer becomes an HttpError like any relayed call's. */
export function checkEdgeAnswer(res: { status: number; body: unknown }): void {
  if (res.status < 400) return;
  const body = (res.body ?? {}) as { message?: unknown; error?: unknown };
  throw new HttpError(
    res.status,
    typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : 'edge error',
  );
}

/** Relay failures in HA's error codes, with a message that says which edge. */
export function toHaError(err: unknown, edgeId: number): unknown {
  if (!(err instanceof HttpError)) return err;
  if (err.status === 503) return new HaCommandError('home_assistant_error', `Edge ${edgeId} is offline.`);
  if (err.status === 504) return new HaCommandError('home_assistant_error', `Edge ${edgeId} did not answer in time.`);
  if (err.status === 404) return new HaCommandError('not_found', err.expose);
  if (err.status === 403 || err.status === 401) return new HaCommandError('unauthorized', err.expose);
  if (err.status === 400) return new HaCommandError('service_validation_error', err.expose);
  return new HaCommandError('home_assistant_error', `Edge ${edgeId}: ${err.expose}`);
}
