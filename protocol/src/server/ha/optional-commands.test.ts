import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { HaRawJson } from './backend.ts';
import { parseHaTime } from './optional-commands.ts';
import { mountHaRest } from './rest.ts';
import { bareHaBackend as bare, haTestSession as session } from '../../testing/ha-session.ts';

/**
 * The optional commands over a backend that has only the required methods (as the cloud's may):
 * HA's unknown_command on the socket, 404 {message} on REST; and the session's own checks.
 */

describe('optional HA commands', () => {
  it('a backend without them answers unknown_command', async () => {
    const c = await session(bare);
    let id = 1;
    for (const msg of [
      { type: 'render_template', template: '{{ 1 }}' },
      { type: 'subscribe_trigger', trigger: { platform: 'state', entity_id: 'a.b' } },
      { type: 'execute_script', sequence: [] },
      { type: 'validate_config', trigger: [] },
      { type: 'history/history_during_period', start_time: '2026-01-01T00:00:00Z', entity_ids: ['a.b'] },
      { type: 'logbook/get_events', start_time: '2026-01-01T00:00:00Z' },
      { type: 'logbook/event_stream', start_time: '2026-01-01T00:00:00Z' },
    ]) {
      const answers = await c.ask({ id: id++, ...msg });
      expect(answers, msg.type).toEqual([
        { id: id - 1, type: 'result', success: false, error: { code: 'unknown_command', message: 'Unknown command.' } },
      ]);
    }
  });

  it('render_template: the result goes before the first event; a raw JSON result is sent as is', async () => {
    const c = await session({
      ...bare,
      subscribeTemplate: async (_p, _req, listener) => {
        listener({ result: 2, listeners: { all: false, domains: [], entities: ['a.b'], time: false } });
        return () => {};
      },
      history: async () => new HaRawJson('{"a.b":[{"s":"on","a":{},"lu":1.5}]}'),
    });
    expect(await c.ask({ id: 1, type: 'render_template', template: '{{ 1 + 1 }}' })).toEqual([
      { id: 1, type: 'result', success: true, result: null },
      {
        id: 1,
        type: 'event',
        event: { result: 2, listeners: { all: false, domains: [], entities: ['a.b'], time: false } },
      },
    ]);
    expect(
      await c.ask({
        id: 2,
        type: 'history/history_during_period',
        start_time: '2026-01-01T00:00:00Z',
        entity_ids: ['a.b'],
      }),
    ).toEqual([{ id: 2, type: 'result', success: true, result: { 'a.b': [{ s: 'on', a: {}, lu: 1.5 }] } }]);
    expect(
      await c.ask({
        id: 3,
        type: 'history/history_during_period',
        start_time: '2026-01-01T00:00:00Z',
        end_time: 'later',
        entity_ids: ['a.b'],
      }),
    ).toEqual([
      { id: 3, type: 'result', success: false, error: { code: 'invalid_end_time', message: 'Invalid end_time' } },
    ]);
  });

  it('REST routes over missing methods are not mounted: neither answered nor documented', async () => {
    const app = new Hono();
    const routes = mountHaRest(app, bare);
    const auth = { authorization: 'Bearer good' };
    for (const [method, path] of [
      ['GET', '/api/events'],
      ['POST', '/api/template'],
      ['DELETE', '/api/states/a.b'],
      ['GET', '/api/history/period?filter_entity_id=a.b'],
      ['GET', '/api/logbook'],
    ]) {
      const res = await app.request(path, {
        method,
        headers: auth,
        body: method === 'POST' ? '{"template":"x"}' : undefined,
      });
      expect(res.status, path).toBe(404);
    }
    const documented = routes.map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(documented).toContain('GET /api/states');
    for (const absent of [
      'GET /api/events',
      'POST /api/template',
      'DELETE /api/states/{entity_id}',
      'GET /api/history/period',
      'GET /api/logbook',
    ])
      expect(documented).not.toContain(absent);
  });

  it('parses HA date-times (no zone = local) and refuses the rest', () => {
    expect(parseHaTime('2026-01-01T00:00:00Z')).toBe(Date.UTC(2026, 0, 1) / 1000);
    expect(parseHaTime('2026-01-01T01:00:00+01:00')).toBe(Date.UTC(2026, 0, 1) / 1000);
    expect(parseHaTime('2026-01-01 00:00:00')).toBe(new Date(2026, 0, 1).getTime() / 1000);
    for (const bad of ['yesterday', '1', '', '2026-13-45T00:00:00Z']) expect(parseHaTime(bad), bad).toBeNull();
  });
});
