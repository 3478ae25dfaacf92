import { afterAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { Edge } from '../edge.ts';
import { rawPost } from '@smarthome/protocol/testing/raw-http';
import { collector, connect, waitFor } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

/** Home Assistant's REST API on a real edge, over plain HTTP. */

let edge: Edge;
let device: MqttClient;
let token: string;

useEdge({}, async (started) => {
  edge = started;
  token = edge.tokens.create('rest').token;
  device = await connect(edge, await edge.createMqttCredentials({ username: 'plug' }));
  await device.publishAsync(
    'homeassistant/switch/plug/config',
    JSON.stringify({ name: 'Plug', uniq_id: 'plug-1', stat_t: 'plug/state', cmd_t: 'plug/set' }),
    { qos: 1, retain: true },
  );
  await waitFor(() => edge.registry.getEntity('switch.plug'), 3000, 'entity');
  await device.publishAsync('plug/state', 'OFF', { qos: 1 });
  await waitFor(() => edge.states.get('switch.plug')?.state === 'off', 3000, 'plug off');
});
afterAll(async () => {
  await device?.endAsync();
});

async function api(method: string, path: string, body?: unknown, auth: string | null = token) {
  const headers: Record<string, string> = {};
  if (auth !== null) headers.authorization = `Bearer ${auth}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`http://127.0.0.1:${edge.ports.http}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, type: res.headers.get('content-type') };
}

describe('HA REST API on the edge', () => {
  it("GET /api/ says the API runs; no or a bad token is 401 with HA's plain body", async () => {
    expect(await api('GET', '/api/')).toMatchObject({ status: 200, json: { message: 'API running.' } });
    expect(await api('GET', '/api/', undefined, null)).toMatchObject({ status: 401, text: '401: Unauthorized' });
    expect(await api('GET', '/api/states', undefined, 'sht_wrong')).toMatchObject({
      status: 401,
      text: '401: Unauthorized',
    });
  });

  it('GET /api/config', async () => {
    const r = await api('GET', '/api/config');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ version: '2026.11.0', state: 'RUNNING', unit_system: { temperature: '°C' } });
    expect(r.json.components).toContain('switch');
  });

  it('GET /api/states and /api/states/{entity_id} in HA\'s shape; unknown is 404 "Entity not found."', async () => {
    const all = await api('GET', '/api/states');
    expect(all.status).toBe(200);
    const plug = all.json.find((s: { entity_id: string }) => s.entity_id === 'switch.plug');
    expect(plug).toMatchObject({
      state: 'off',
      attributes: { friendly_name: 'Plug' },
      context: { parent_id: null, user_id: null },
    });
    expect(Object.keys(plug).sort()).toEqual([
      'attributes',
      'context',
      'entity_id',
      'last_changed',
      'last_reported',
      'last_updated',
      'state',
    ]);
    expect(await api('GET', '/api/states/switch.plug')).toMatchObject({ status: 200, json: plug });
    expect(await api('GET', '/api/states/switch.nope')).toMatchObject({
      status: 404,
      json: { message: 'Entity not found.' },
    });
  });

  it('GET /api/services lists domains with their services', async () => {
    const r = await api('GET', '/api/services');
    expect(r.status).toBe(200);
    const sw = r.json.find((d: { domain: string }) => d.domain === 'switch');
    expect(Object.keys(sw.services)).toEqual(expect.arrayContaining(['turn_on', 'turn_off', 'toggle']));
  });

  it('POST /api/services/{domain}/{service} publishes the MQTT command and answers with the changed states', async () => {
    const watcher = await connect(edge, await edge.createMqttCredentials({ username: 'watcher', role: 'integration' }));
    try {
      const commands = await collector(watcher, 'plug/set');
      const r = await api('POST', '/api/services/switch/turn_on', { entity_id: 'switch.plug' });
      expect(r.status).toBe(200);
      expect(Array.isArray(r.json)).toBe(true);
      expect(await commands.next()).toEqual([{ topic: 'plug/set', payload: 'ON' }]);
    } finally {
      await watcher.endAsync();
    }
  });

  it('POST /api/services errors: unknown service, bad JSON, return_response on a service without responses', async () => {
    expect(await api('POST', '/api/services/switch/explode', { entity_id: 'switch.plug' })).toMatchObject({
      status: 400,
      json: { message: 'Service switch.explode not found.' },
    });
    expect(await api('POST', '/api/services/switch/turn_on', '{bad')).toMatchObject({
      status: 400,
      json: { message: 'Data should be valid JSON.' },
    });
    expect(
      await api('POST', '/api/services/switch/turn_on?return_response', { entity_id: 'switch.plug' }),
    ).toMatchObject({
      status: 400,
      json: { message: 'Service does not support responses. Remove return_response from request.' },
    });
  });

  it("a body over 1 MiB is 413 in aiohttp's words, declared or chunked, on every route that reads one; nothing is done", async () => {
    const watcher = await connect(
      edge,
      await edge.createMqttCredentials({ username: 'watcher2', role: 'integration' }),
    );
    try {
      const commands = await collector(watcher, 'plug/set');
      // over connections of their own: the server may close one after refusing its body
      const post = (path: string, headers: Record<string, string | number>, chunks: Uint8Array[]) =>
        rawPost(
          `http://127.0.0.1:${edge.ports.http}${path}`,
          { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
          chunks,
        );
      const tooLarge = { status: 413, body: JSON.stringify({ message: 'Maximum request body size 1048576 exceeded' }) };
      const big = Buffer.from(JSON.stringify({ entity_id: 'switch.plug', pad: 'x'.repeat(1024 * 1024) }));
      for (const path of ['/api/services/switch/turn_on', '/api/events/big', '/api/states/sensor.big', '/api/template'])
        expect(await post(path, { 'content-length': big.length }, [big]), path).toEqual(tooLarge);
      // no Content-Length: the bytes are counted as they arrive
      const chunk = Buffer.alloc(256 * 1024, 'x');
      expect(
        await post(
          '/api/services/switch/turn_on',
          { 'transfer-encoding': 'chunked' },
          Array.from({ length: 8 }, () => chunk),
        ),
      ).toEqual(tooLarge);
      expect(edge.states.get('sensor.big')).toBeUndefined();
      // a call after them is the first command the plug gets
      expect((await api('POST', '/api/services/switch/turn_off', { entity_id: 'switch.plug' })).status).toBe(200);
      expect(await commands.next()).toEqual([{ topic: 'plug/set', payload: 'OFF' }]);
      expect(commands.messages).toHaveLength(1);
    } finally {
      await watcher.endAsync();
    }
  });

  it("JSON nested deeper than 64 levels is a 400 in HA's words: nothing is stored or fired (a state could not be written)", async () => {
    const deep = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(await api('POST', '/api/states/sensor.deep', `{"state":"1","attributes":${deep}}`)).toMatchObject({
      status: 400,
      json: { message: 'Invalid JSON specified.' },
    });
    expect(await api('POST', '/api/events/deep', deep)).toMatchObject({
      status: 400,
      json: { message: 'Event data should be a JSON object' },
    });
    expect(await api('POST', '/api/services/switch/turn_on', deep)).toMatchObject({
      status: 400,
      json: { message: 'Data should be valid JSON.' },
    });
    expect(edge.states.get('sensor.deep')).toBeUndefined();
  });

  it('POST /api/events/{event_type} fires the event (seen on the WebSocket bus); a non-object body is 400', async () => {
    const seen: unknown[] = [];
    const off = await subscribe(seen);
    try {
      expect(await api('POST', '/api/events/doorbell', { door: 'front' })).toMatchObject({
        status: 200,
        json: { message: 'Event doorbell fired.' },
      });
      await waitFor(() => seen.length > 0, 3000, 'event');
      expect(seen).toEqual([expect.objectContaining({ event_type: 'doorbell', data: { door: 'front' } })]);
      expect(await api('POST', '/api/events/doorbell', '[1]')).toMatchObject({
        status: 400,
        json: { message: 'Event data should be a JSON object' },
      });
    } finally {
      off();
    }
  });

  it('POST /api/config/core/check_config', async () => {
    expect(await api('POST', '/api/config/core/check_config')).toMatchObject({
      status: 200,
      json: { result: 'valid', errors: null, warnings: null },
    });
  });

  it('POST /api/states/{entity_id}: 201 for a new state, 200 for an existing one, with Location; bad input 400', async () => {
    const created = await api('POST', '/api/states/sensor.api_made', {
      state: 25,
      attributes: { unit_of_measurement: '°C' },
    });
    expect(created).toMatchObject({
      status: 201,
      json: {
        entity_id: 'sensor.api_made',
        state: '25',
        attributes: { unit_of_measurement: '°C' },
        context: { parent_id: null },
      },
    });
    const res = await fetch(`http://127.0.0.1:${edge.ports.http}/api/states/sensor.api_made`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ state: '26' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toBe('/api/states/sensor.api_made');
    expect(edge.states.get('sensor.api_made')?.state).toBe('26');
    expect((await api('GET', '/api/states/sensor.api_made')).json.state).toBe('26');
    expect(await api('POST', '/api/states/sensor.api_made', { attributes: {} })).toMatchObject({
      status: 400,
      json: { message: 'No state specified.' },
    });
    expect(await api('POST', '/api/states/sensor.api_made', '{nope')).toMatchObject({
      status: 400,
      json: { message: 'Invalid JSON specified.' },
    });
    expect(await api('POST', '/api/states/not_an_id', { state: 'x' })).toMatchObject({
      status: 400,
      json: { message: 'Invalid entity ID specified.' },
    });
  });

  it('DELETE /api/states/{entity_id}: "Entity removed." then 404', async () => {
    await api('POST', '/api/states/sensor.to_delete', { state: 'x' });
    expect(await api('DELETE', '/api/states/sensor.to_delete')).toMatchObject({
      status: 200,
      json: { message: 'Entity removed.' },
    });
    expect(await api('GET', '/api/states/sensor.to_delete')).toMatchObject({ status: 404 });
    expect(await api('DELETE', '/api/states/sensor.to_delete')).toMatchObject({
      status: 404,
      json: { message: 'Entity not found.' },
    });
  });

  it('GET /api/events counts listeners per event type', async () => {
    const off = await subscribe([]);
    try {
      const r = await api('GET', '/api/events');
      expect(r.status).toBe(200);
      expect(r.json).toEqual(expect.arrayContaining([{ event: 'state_changed', listener_count: expect.any(Number) }]));
      expect(r.json.find((e: { event: string }) => e.event === 'state_changed').listener_count).toBeGreaterThan(0);
    } finally {
      off();
    }
  });

  it('POST /api/template renders as text/plain; a broken template is 400 "Error rendering template: …"', async () => {
    const r = await api('POST', '/api/template', {
      template: "{{ states('switch.plug') }}-{{ x }}",
      variables: { x: 7 },
    });
    expect(r).toMatchObject({ status: 200, text: `${edge.states.get('switch.plug')!.state}-7` });
    expect(r.type).toMatch(/^text\/plain/);
    const bad = await api('POST', '/api/template', { template: '{% if %}' });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toMatch(/^Error rendering template: /);
    expect(await api('POST', '/api/template', {})).toMatchObject({ status: 400 });
  });

  it("GET /api/history/period/{timestamp}: a list of HA states per entity; minimal_response, no_attributes; HA's 400s", async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    await device.publishAsync('plug/state', 'ON', { qos: 1 });
    await waitFor(() => edge.states.get('switch.plug')?.state === 'on', 3000, 'plug on');
    // two changes in one millisecond share last_updated (the recorder then orders them by state)
    await new Promise((r) => setTimeout(r, 5));
    await device.publishAsync('plug/state', 'OFF', { qos: 1 });
    await waitFor(() => edge.states.get('switch.plug')?.state === 'off', 3000, 'plug off');
    const r = await api('GET', `/api/history/period/${encodeURIComponent(since)}?filter_entity_id=switch.plug`);
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(1);
    const plug = r.json[0];
    expect(plug.map((s: { state: string }) => s.state).slice(-2)).toEqual(['on', 'off']);
    expect(plug.at(-1)).toMatchObject({
      entity_id: 'switch.plug',
      state: 'off',
      attributes: { friendly_name: 'Plug' },
    });
    expect(plug.at(-1).last_updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    const minimal = (
      await api(
        'GET',
        `/api/history/period/${encodeURIComponent(since)}?filter_entity_id=switch.plug&minimal_response&no_attributes`,
      )
    ).json[0];
    expect(minimal[0].attributes).toEqual({});
    expect(Object.keys(minimal.at(-1)).sort()).toEqual(['last_changed', 'state']);
    expect((await api('GET', '/api/history/period?filter_entity_id=switch.plug')).json[0].at(-1).state).toBe('off');
    expect(await api('GET', '/api/history/period/notatime?filter_entity_id=switch.plug')).toMatchObject({
      status: 400,
      json: { message: 'Invalid datetime' },
    });
    expect(await api('GET', `/api/history/period/${encodeURIComponent(since)}`)).toMatchObject({
      status: 400,
      json: { message: 'filter_entity_id is missing' },
    });
    expect(
      await api('GET', `/api/history/period/${encodeURIComponent(since)}?filter_entity_id=switch.plug&end_time=soon`),
    ).toMatchObject({ status: 400, json: { message: 'Invalid end_time' } });
    expect(
      await api(
        'GET',
        `/api/history/period/${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}?filter_entity_id=switch.plug`,
      ),
    ).toMatchObject({ status: 200, json: [] });
  });

  it('GET /api/logbook/{timestamp}: entries with ISO times and names', async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const r = await api('GET', `/api/logbook/${encodeURIComponent(since)}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'Home Assistant', message: 'started', domain: 'homeassistant' }),
        expect.objectContaining({ entity_id: 'switch.plug', state: 'off', name: 'Plug' }),
      ]),
    );
    expect(r.json[0].when).toMatch(/\+00:00$/);
    const plugOnly = (await api('GET', `/api/logbook/${encodeURIComponent(since)}?entity=switch.plug`)).json;
    expect(plugOnly.length).toBeGreaterThan(0);
    expect(plugOnly.every((e: { entity_id?: string }) => e.entity_id === 'switch.plug')).toBe(true);
    expect((await api('GET', '/api/logbook')).status).toBe(200);
    expect(await api('GET', '/api/logbook/yesterday')).toMatchObject({
      status: 400,
      json: { message: 'Invalid datetime' },
    });
  });

  it('/openapi.json documents the /api surface', async () => {
    const doc = (await api('GET', '/openapi.json')).json;
    for (const p of [
      '/api/',
      '/api/config',
      '/api/states',
      '/api/states/{entity_id}',
      '/api/services',
      '/api/services/{domain}/{service}',
      '/api/events/{event_type}',
      '/api/config/core/check_config',
      '/api/events',
      '/api/template',
      '/api/history/period',
      '/api/history/period/{timestamp}',
      '/api/logbook',
      '/api/logbook/{timestamp}',
    ]) {
      expect(doc.paths[p], p).toBeDefined();
    }
  });
});

/** a fire_event subscriber through the same backend the WebSocket uses */
async function subscribe(seen: unknown[]): Promise<() => void> {
  const { WebSocket } = await import('ws');
  const ws = new WebSocket(`ws://127.0.0.1:${edge.ports.http}/api/websocket`);
  const messages: any[] = [];
  ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
  await new Promise((r) => ws.once('open', r));
  ws.send(JSON.stringify({ type: 'auth', access_token: token }));
  await waitFor(() => messages.some((m) => m.type === 'auth_ok'));
  ws.send(JSON.stringify({ id: 1, type: 'subscribe_events', event_type: 'doorbell' }));
  await waitFor(() => messages.some((m) => m.id === 1 && m.type === 'result'));
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (m.type === 'event') seen.push(m.event);
  });
  return () => ws.close();
}
