import { z } from 'zod';

/** 400 / 404 / 409 / 413 / 415 bodies carry a human-readable message. */
export const ErrorMessage = z
  .object({ message: z.string() })
  .meta({ id: 'ErrorMessage', example: { message: 'validation error' } });
/** 401 / 403 / 429 / 500 / 503 / 504 bodies carry a machine-readable error code. */
export const ErrorCode = z.object({ error: z.string() }).meta({ id: 'ErrorCode', example: { error: 'unauthorized' } });

export type ErrorMessage = z.infer<typeof ErrorMessage>;
export type ErrorCode = z.infer<typeof ErrorCode>;

/** Which body shape each status uses (portal-api.md Errors + contract.md). */
export const errorShapeByStatus: Record<number, 'message' | 'error'> = {
  400: 'message',
  401: 'error',
  403: 'error',
  404: 'message',
  409: 'message',
  413: 'message',
  415: 'message',
  429: 'error',
  500: 'error',
  502: 'error',
  503: 'error',
  504: 'error',
};

export const errorDescriptions: Record<number, string> = {
  400: 'invalid data',
  401: 'not authenticated',
  403: 'access denied',
  404: 'resource not found',
  409: 'conflict',
  413: 'body too large',
  415: 'the body is not declared as JSON (Content-Type must be application/json)',
  429: 'rate limited (see Retry-After)',
  500: 'internal server error',
  503: 'edge offline',
  504: 'edge did not answer in time',
};
