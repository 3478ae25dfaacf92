import { errorShapeByStatus } from '../errors.ts';

/**
 * The error family: every failure a handler wants the client to see is an HttpError.
 * `expose` is what goes on the wire; `cause` keeps the original error for logs only.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly expose: string;
  readonly headers: Record<string, string>;
  /** Forces the body shape for routes whose spec differs from the per-status default (e.g. the store receiver's 400 `{error}`). */
  readonly shape: 'message' | 'error' | undefined;
  constructor(
    status: number,
    expose: string,
    options: { cause?: unknown; headers?: Record<string, string>; shape?: 'message' | 'error' } = {},
  ) {
    super(expose, { cause: options.cause });
    this.name = 'HttpError';
    this.status = status;
    this.expose = expose;
    this.headers = options.headers ?? {};
    this.shape = options.shape;
  }
  /** The spec's body for this status: `{message}` or `{error}` (or the forced `shape`). */
  body(): Record<string, string> {
    return (this.shape ?? errorShapeByStatus[this.status] ?? 'error') === 'message'
      ? { message: this.expose }
      : { error: this.expose };
  }
}

export const badRequest = (message = 'validation error', cause?: unknown) => new HttpError(400, message, { cause });
export const unauthorized = (error = 'unauthorized') =>
  new HttpError(401, error, { headers: { 'WWW-Authenticate': 'Bearer' } });
export const forbidden = (error = 'forbidden') => new HttpError(403, error);
export const notFound = (message = 'not found') => new HttpError(404, message);
export const conflict = (message: string) => new HttpError(409, message);
export const payloadTooLarge = (message = 'body too large') => new HttpError(413, message);
export const unsupportedMediaType = (message = 'Content-Type must be application/json') => new HttpError(415, message);
export const rateLimited = (retryAfterSeconds: number) =>
  new HttpError(429, 'rate_limited', { headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
export const edgeOffline = () => new HttpError(503, 'edge_offline');
export const gatewayTimeout = () => new HttpError(504, 'edge_timeout');
export const planLimitReached = () => new HttpError(403, 'plan_limit_reached');
