import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { connectHa, haWorld } from '../testing/ha.ts';
import { changeState } from './testing.ts';

/**
 * The cloud's HA commands that need more than the mirror's states (render_template, history,
 * logbook, execute_script, validate_config, state writes), in-process on SQLite and PostgreSQL.
 * The edges never connect: what is relayed meets an offline edge, so these tests pin the
 * permission checks done before any relay and the errors callers get; the relays themselves are
 * driven against real edges in tools/src/e2e/ha-cloud.test.ts.
 */
let t: TestCloud;
let a: Awaited<ReturnType<TestCloud['user']>>;
let b: Awaited<ReturnType<TestCloud['user']>>;
let v: Awaited<ReturnType<TestCloud['user']>>;
let edgeA: number;
let edgeO: number;
let org: string;
const sockets: WebSocket[] = [];
const connect = (token: string, extra: Record<string, unknown> = {}) => connectHa(t.url, sockets, token, extra);

// V (member of the organization, which has no lamp here) may view A's lamp_2, not control it
beforeAll(async () => {
  t = await startTestCloud();
  ({ a, b, v, org, edgeA, edgeO } = await haWorld(t));
});
afterAll(async () => {
  for (const s of sockets) s.terminate();
  await t.stop();
});

describe('cloud render_template / POST /api/template: rendered over what the caller may view', () => {
  it('a subscription renders now and again when a state it read changes', async () => {
    const owner = await connect(a.token);
    const sub = await owner.ask({ type: 'render_template', template: "lamp {{ states('light.lamp_1') }}" });
    expect(sub.success).toBe(true);
    expect((await owner.next((m) => m.type === 'event' && m.id === sub.id)).event).toEqual({
      result: 'lamp off',
      listeners: { all: false, domains: [], entities: ['light.lamp_1'], time: false },
    });
    await changeState(t, edgeA, 'light.lamp_1', 'on');
    expect((await owner.next((m) => m.type === 'event' && m.id === sub.id)).event.result).toBe('lamp on');
    // the viewer does not see lamp_1: for its template the entity does not exist
    const viewer = await connect(v.token);
    const seen = await viewer.ask({
      type: 'render_template',
      template: "{{ states('light.lamp_1') }} {{ states('light.lamp_2') }}",
    });
    expect((await viewer.next((m) => m.type === 'event' && m.id === seen.id)).event.result).toBe('unknown off');
    expect((await owner.ask({ type: 'render_template', template: '{{ 1 + }}', strict: true })).error.code).toBe(
      'template_error',
    );
  });

  it('POST /api/template: text over the caller’s states; a broken template is a 400 {message}', async () => {
    const tpl = { template: "{{ states('light.lamp_2') }}/{{ states.light | count }}" };
    expect((await t.post('/api/template', { token: a.token, body: tpl })).text).toBe('off/2');
    expect((await t.post('/api/template', { token: v.token, body: tpl })).text).toBe('off/1');
    expect((await t.post('/api/template', { token: b.token, body: tpl })).text).toBe('unknown/0');
    const bad = await t.post('/api/template', { token: a.token, body: { template: '{{ x.y.z }}' } });
    expect([bad.status, bad.body.message]).toEqual([400, expect.stringContaining('Error rendering template')]);
  });
});

describe('cloud commands relayed to an edge: permissions first, then the edge', () => {
  it('execute_script needs an edge the caller administers, named by its entities', async () => {
    const lampOn = { service: 'light.turn_on', target: { entity_id: 'light.lamp_2' } };
    const viewer = await connect(v.token);
    expect((await viewer.ask({ type: 'execute_script', sequence: [lampOn] })).error.code).toBe('unauthorized');
    const stranger = await connect(b.token);
    expect((await stranger.ask({ type: 'execute_script', sequence: [lampOn] })).error.code).toBe('not_found');
    const owner = await connect(a.token);
    expect((await owner.ask({ type: 'execute_script', sequence: [lampOn] })).error).toEqual({
      code: 'home_assistant_error',
      message: `Edge ${edgeA} is offline.`,
    });
    // no entity named and two edges administered: which one is not guessed
    expect((await owner.ask({ type: 'execute_script', sequence: [{ delay: 0 }] })).error.code).toBe('invalid_format');
    const inOrg = await connect(a.token, { organization_id: org });
    expect((await inOrg.ask({ type: 'execute_script', sequence: [{ delay: 0 }] })).error.message).toBe(
      `Edge ${edgeO} is offline.`,
    );
    expect((await owner.ask({ type: 'validate_config', trigger: { platform: 'state' } })).error.code).toBe(
      'home_assistant_error',
    );
    // no edge online to arm a trigger on: refused, not a subscription that never fires
    expect((await owner.ask({ type: 'subscribe_trigger', trigger: { platform: 'state' } })).error).toEqual({
      code: 'home_assistant_error',
      message: `Edge ${edgeA} is offline.`,
    });
    expect(
      (await owner.ask({ type: 'subscribe_trigger', trigger: { platform: 'state', entity_id: 'light.lamp_1' } })).error
        .message,
    ).toBe(`Edge ${edgeA} is offline.`);
    const strangerTrigger = await connect(b.token);
    expect(
      (
        await strangerTrigger.ask({
          type: 'subscribe_trigger',
          trigger: { platform: 'state', entity_id: 'light.lamp_1' },
        })
      ).error,
    ).toEqual({ code: 'not_found', message: 'Entity light.lamp_1 not found.' });
  });

  it('history and logbook: offline edges are a clear error; nothing in scope is an empty answer', async () => {
    const start_time = new Date(Date.now() - 3_600_000).toISOString();
    const owner = await connect(a.token);
    const history = await owner.ask({
      type: 'history/history_during_period',
      start_time,
      entity_ids: ['light.lamp_1'],
    });
    expect(history.error).toEqual({ code: 'home_assistant_error', message: `Edge ${edgeA} is offline.` });
    const stranger = await connect(b.token);
    expect(
      (await stranger.ask({ type: 'history/history_during_period', start_time, entity_ids: ['light.lamp_1'] })).result,
    ).toEqual({});
    expect((await stranger.ask({ type: 'logbook/get_events', start_time })).result).toEqual([]);
    const rest = await t.get(`/api/history/period/${start_time}?filter_entity_id=light.lamp_1`, { token: a.token });
    expect([rest.status, rest.body]).toEqual([400, { message: `Edge ${edgeA} is offline.` }]);
    expect((await t.get(`/api/history/period?filter_entity_id=light.lamp_1`, { token: b.token })).body).toEqual([]);
    expect((await t.get('/api/logbook', { token: b.token })).body).toEqual([]);
  });

  it('POST/DELETE /api/states: a view-only share is 401, an entity out of scope 404 or not created', async () => {
    const body = { state: 'on' };
    expect((await t.post('/api/states/light.lamp_2', { token: v.token, body })).status).toBe(401);
    expect((await t.delete('/api/states/light.lamp_1', { token: b.token })).status).toBe(404);
    // b administers no edge: a new entity has nowhere to go
    expect((await t.post('/api/states/sensor.new', { token: b.token, body })).status).toBe(401);
    const offline = await t.post('/api/states/light.lamp_1', { token: a.token, body });
    expect([offline.status, offline.body]).toEqual([400, { message: `Edge ${edgeA} is offline.` }]);
  });

  it('/openapi.json lists the routes the cloud now serves', async () => {
    const paths = (await t.get('/openapi.json')).body.paths;
    for (const path of ['/api/template', '/api/history/period/{timestamp}', '/api/logbook/{timestamp}', '/api/events'])
      expect(paths[path], path).toBeDefined();
    expect(Object.keys(paths['/api/states/{entity_id}']).sort()).toEqual(['delete', 'get', 'post']);
  });
});
