import { describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { installErrorHandling, toHttpError } from './app.ts';
import { HttpError, edgeOffline, gatewayTimeout } from './errors.ts';

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

describe('installErrorHandling logging (issue #13)', () => {
  it('logs expected unavailability (503, 504) as info without a stack, and real failures as errors with one', async () => {
    const lines: { level: string; msg: string; err?: unknown; fields?: Record<string, unknown> }[] = [];
    const app = new Hono();
    installErrorHandling(app, {
      error: (msg, err) => lines.push({ level: 'error', msg, err }),
      info: (msg, fields) => lines.push({ level: 'info', msg, fields }),
    });
    app.get('/offline', () => {
      throw edgeOffline();
    });
    app.get('/timeout', () => {
      throw gatewayTimeout();
    });
    // as the database layer raises it: wrapped by drizzle ("Failed query …"), the driver's error as its cause
    const unavailable = new HttpError(503, 'database_unavailable', {
      cause: new Error('connect ECONNREFUSED 127.0.0.1:5432'),
      headers: { 'Retry-After': '1' },
    });
    app.get('/db', () => {
      throw new Error('Failed query: select 1', { cause: unavailable });
    });
    app.get('/boom', () => {
      throw new TypeError('boom');
    });
    const statuses = [];
    for (const path of ['/offline', '/timeout', '/db', '/boom']) statuses.push((await app.request(path)).status);
    expect(statuses).toEqual([503, 504, 503, 500]);
    expect(lines.slice(0, 3)).toEqual([
      { level: 'info', msg: 'GET /offline answered 503 edge_offline', fields: {} },
      { level: 'info', msg: 'GET /timeout answered 504 edge_timeout', fields: {} },
      {
        level: 'info',
        msg: 'GET /db answered 503 database_unavailable',
        fields: { cause: 'connect ECONNREFUSED 127.0.0.1:5432' },
      },
    ]);
    expect(lines[3]).toMatchObject({ level: 'error', msg: 'GET /boom failed' });
    expect((lines[3].err as Error).stack).toContain('TypeError: boom');
  });
});
