import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { HttpError } from './errors.ts';

export interface ErrorLogger {
  error(msg: string, err: unknown): void;
  /** expected unavailability (503, 504): one line, no stack; without it, nothing is logged for those */
  info?(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * A 503 or 504 is always one a handler or driver answers on purpose (edge_offline, edge_busy,
 * edge_timeout, database_unavailable, redis_unavailable; toHttpError makes anything unexpected a
 * 500): the system working as designed while something it depends on is away. Worth a line, not
 * an error with a stack.
 */
const isExpectedUnavailability = (httpError: HttpError) => httpError.status === 503 || httpError.status === 504;

/** Maps any thrown value to the spec's error bodies; nothing else ever reaches the client. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  // A library that wraps what it called (drizzle's "Failed query" around a driver's error) keeps it as the cause.
  for (
    let cause = (err as { cause?: unknown } | null)?.cause, depth = 0;
    cause && depth < 3;
    cause = (cause as { cause?: unknown }).cause, depth++
  ) {
    if (cause instanceof HttpError) return cause;
  }
  if (err instanceof HTTPException) {
    if (err.status === 413) return new HttpError(413, 'body too large', { cause: err });
    if (err.status === 401) return new HttpError(401, 'unauthorized', { cause: err });
    if (err.status < 500)
      return new HttpError(err.status, err.status === 404 ? 'not found' : err.message || 'bad request', { cause: err });
  }
  return new HttpError(500, 'internal_error', { cause: err });
}

/** One onError and one notFound for a Hono app. */
export function installErrorHandling(app: Hono<any>, log: ErrorLogger): void {
  app.onError((err, c: Context) => {
    const httpError = toHttpError(err);
    if (isExpectedUnavailability(httpError)) {
      const cause = httpError.cause instanceof Error ? { cause: httpError.cause.message } : {};
      log.info?.(`${c.req.method} ${c.req.path} answered ${httpError.status} ${httpError.expose}`, cause);
    } else if (httpError.status >= 500) {
      log.error(`${c.req.method} ${c.req.path} failed`, httpError.cause ?? err);
    }
    for (const [k, v] of Object.entries(httpError.headers)) c.header(k, v);
    return c.json(httpError.body(), httpError.status as 500);
  });
  app.notFound((c) => c.json({ message: 'not found' }, 404));
}
