import { describe, expect, it } from 'vitest';
import { HTTPException } from 'hono/http-exception';
import { toHttpError } from './app.ts';
import { HttpError } from './errors.ts';

describe('toHttpError', () => {
  it('keeps an HttpError, finds one a library wrapped as the cause, and makes anything else a 500', () => {
    const conflict = new HttpError(409, 'already exists');
    expect(toHttpError(conflict)).toBe(conflict);
    const wrapped = new Error('Failed query: insert into …', { cause: conflict });
    expect(toHttpError(wrapped)).toBe(conflict);
    expect(toHttpError(new Error('outer', { cause: new Error('middle', { cause: conflict }) }))).toBe(conflict);
    const plain = toHttpError(new TypeError('boom'));
    expect([plain.status, plain.expose]).toEqual([500, 'internal_error']);
    expect(toHttpError(new HTTPException(404)).status).toBe(404);
  });
});
