import { describe, expect, it } from 'vitest';
import type { Edge } from '../edge.ts';
import { collector, connect, waitFor } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

let edge: Edge;
let base: string;
let token: string;

useEdge({}, async (started) => {
  edge = started;
  base = `http://127.0.0.1:${edge.ports.http}`;
  token = edge.tokens.create('test').token;
  const c = await connect(edge, await edge.createMqttCredentials({ username: 'dev' }));
  await c.publishAsync(
    'homeassistant/light/desk/config',
    JSON.stringify({
      name: 'Desk',
      uniq_id: 'desk',
      cmd_t: 'desk/set',
      stat_t: 'desk/state',
      bri_cmd_t: 'desk/bri',
      dev: { ids: 'desk-1', name: 'Desk lamp', mf: 'Acme', mdl: 'L1' },
    }),
    { qos: 1, retain: true },
  );
  await waitFor(() => edge.registry.getEntity('light.desk_lamp_desk'), 3000, 'light');
  await c.endAsync();
});

const req = (path: string, init: RequestInit & { auth?: string | null } = {}) => {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const auth = init.auth === undefined ? token : init.auth;
  if (auth) headers.authorization = `Bearer ${auth}`;
  return fetch(base + path, { ...init, headers });
};

describe('local API', () => {
  it('GET /healthz needs no token', async () => {
    const r = await req('/healthz', { auth: null });
    expect(r.status).toBe(200);
    expect((await r.json()) as any).toEqual({ status: 'ok' });
  });

  it('answers 401 {error} on every protected route without a valid token', async () => {
    const routes: [string, string][] = [
      ['GET', '/v1/devices'],
      ['GET', '/v1/devices/1'],
      ['GET', '/v1/entities/states'],
      ['GET', '/v1/entities/states/light.desk_lamp_desk'],
      ['POST', '/v1/services/light/turn_on'],
      ['POST', '/v1/mqtt/credentials'],
      ['GET', '/v1/mqtt/credentials'],
      ['DELETE', '/v1/mqtt/credentials/dev'],
      ['GET', '/v1/mqtt/owners'],
      ['PUT', '/v1/mqtt/owners'],
    ];
    for (const [method, path] of routes) {
      for (const auth of [null, 'sht_wrong', 'garbage']) {
        const r = await req(path, { method, auth, body: method === 'POST' || method === 'PUT' ? '{}' : undefined });
        expect(r.status, `${method} ${path} ${auth}`).toBe(401);
        expect((await r.json()) as any).toEqual({ error: 'unauthorized' });
      }
    }
  });

  it('lists devices and returns one device with its entities', async () => {
    const list = (await (await req('/v1/devices')).json()) as any;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ name: 'Desk lamp', manufacturer: 'Acme', model: 'L1', user_id: null });
    const one = await req(`/v1/devices/${list[0].id}`);
    expect(one.status).toBe(200);
    const body = (await one.json()) as any;
    expect(body.device.id).toBe(list[0].id);
    expect(body.entities).toEqual([
      expect.objectContaining({
        entity_id: 'light.desk_lamp_desk',
        domain: 'light',
        platform: 'mqtt',
        unique_id: 'desk',
        device_registry_id: list[0].id,
      }),
    ]);
  });

  it('answers 404 {message} for unknown devices, entities and routes', async () => {
    for (const path of [
      '/v1/devices/999',
      '/v1/devices/abc',
      '/v1/entities/states/light.nope',
      '/v1/entities/states/not-an-id',
      '/v1/nothing',
    ]) {
      const r = await req(path);
      expect(r.status, path).toBe(404);
      expect(Object.keys((await r.json()) as any), path).toEqual(['message']);
    }
  });

  it('returns entity states', async () => {
    const all = (await (await req('/v1/entities/states')).json()) as any;
    expect(all.map((s: { entity_id: string }) => s.entity_id)).toEqual(['light.desk_lamp_desk']);
    const one = (await (await req('/v1/entities/states/light.desk_lamp_desk')).json()) as any;
    expect(one).toMatchObject({
      entity_id: 'light.desk_lamp_desk',
      name: 'Desk lamp Desk',
      domain: 'light',
      platform: 'mqtt',
      state: null,
    });
  });

  it('calls services: 200 with changed states, 400 unsupported or bad data, 404 unknown entity', async () => {
    const integ = await connect(edge, await edge.createMqttCredentials({ role: 'integration' }));
    const inbox = await collector(integ, ['desk/set', 'desk/bri']);
    const ok = await req('/v1/services/light/turn_on', {
      method: 'POST',
      body: JSON.stringify({ entity_id: 'light.desk_lamp_desk', brightness: 128 }),
    });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).changed_states[0]).toMatchObject({ entity_id: 'light.desk_lamp_desk' });
    expect((await inbox.next(2)).map((m) => `${m.topic} ${m.payload}`)).toEqual(['desk/bri 128', 'desk/set ON']);

    const cases: [string, unknown, number][] = [
      ['/v1/services/light/fly', { entity_id: 'light.desk_lamp_desk' }, 400],
      ['/v1/services/vacuum/start', { entity_id: 'vacuum.x' }, 400],
      ['/v1/services/light/turn_on', { entity_id: 'light.nope' }, 404],
      ['/v1/services/light/turn_on', { entity_id: 'light.desk_lamp_desk', brightness: 'lots' }, 400],
      ['/v1/services/light/turn_on', { brightness: 1 }, 400],
      ['/v1/services/light/turn_on', '[1]', 400],
    ];
    for (const [path, body, status] of cases) {
      const r = await req(path, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
      expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(status);
      expect(Object.keys((await r.json()) as any)).toEqual(['message']);
    }
    await integ.endAsync();
  });

  it('manages MQTT credentials', async () => {
    const created = await req('/v1/mqtt/credentials', {
      method: 'POST',
      body: JSON.stringify({ username: 'tasmota-1' }),
    });
    expect(created.status).toBe(201);
    const creds = (await created.json()) as any;
    expect(creds.username).toBe('tasmota-1');
    expect(creds.password.length).toBeGreaterThanOrEqual(32);
    const c = await connect(edge, creds);
    expect(c.connected).toBe(true);
    await c.endAsync();

    const dup = await req('/v1/mqtt/credentials', { method: 'POST', body: JSON.stringify({ username: 'tasmota-1' }) });
    expect(dup.status).toBe(409);
    const bad = await req('/v1/mqtt/credentials', { method: 'POST', body: JSON.stringify({ role: 'root' }) });
    expect(bad.status).toBe(400);
    const generated = (await (
      await req('/v1/mqtt/credentials', { method: 'POST', body: JSON.stringify({ role: 'integration' }) })
    ).json()) as any;
    expect(generated.username).toMatch(/^integration-/);

    const users = (await (await req('/v1/mqtt/credentials')).json()) as any;
    expect(users.find((u: { username: string }) => u.username === 'tasmota-1')).toMatchObject({ role: 'device' });
    expect(JSON.stringify(users)).not.toContain(creds.password);
    expect((await req('/v1/mqtt/credentials/tasmota-1', { method: 'DELETE' })).status).toBe(200);
    expect((await req('/v1/mqtt/credentials/tasmota-1', { method: 'DELETE' })).status).toBe(404);
    await expect(connect(edge, creds)).rejects.toThrow();
  });

  it('lets the in-process tunnel call the API without a token', async () => {
    const r = await edge.handleTrusted(new Request('http://edge/v1/entities/states/light.desk_lamp_desk'));
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).entity_id).toBe('light.desk_lamp_desk');
    // but a network request cannot pretend to be trusted
    expect((await req('/v1/devices', { auth: null })).status).toBe(401);
  });

  it('serves its OpenAPI document', async () => {
    const doc = (await (await req('/openapi.json', { auth: null })).json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toContain('/v1/services/{domain}/{service}');
    expect(Object.keys(doc.paths['/v1/mqtt/owners'])).toEqual(['get', 'put']);
    expect(doc.components.schemas.SetMqttOwner.required).toEqual(['username']);
  });
});
