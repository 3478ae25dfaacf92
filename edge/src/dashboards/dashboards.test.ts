import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '../edge.ts';
import { startEdge, tempDir } from '../testing/edge.ts';

describe('edge dashboards: GET/PUT /v1/ui-dashboard on the local API, in SQLite', () => {
  const data = tempDir();
  let edge: Edge;
  let token: string;
  const call = async (method: string, body?: unknown, auth: string | null = token) => {
    const res = await fetch(`http://127.0.0.1:${edge.ports.http}/v1/ui-dashboard`, {
      method,
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(auth ? { authorization: `Bearer ${auth}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const view = { title: 'Home', cards: [{ type: 'tile', entity: 'light.porch' }] };

  beforeAll(async () => {
    edge = await startEdge(data.dir);
    token = edge.tokens.create('test').token;
  }, 120_000);
  afterAll(async () => {
    await edge?.stop();
    data.cleanup();
  });

  it('starts empty, creates by name, updates by id or name, and answers the cloud shape', async () => {
    expect(await call('GET')).toEqual({ status: 200, body: [] });
    const created = await call('PUT', { name: 'home', config: { views: [view] } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      id: 1,
      name: 'home',
      type: 'dashboard',
      title: 'home',
      icon: 'mdi:view-dashboard',
      url: null,
      config: { views: [view] },
      user_id: 'home',
      org_id: null,
    });
    const moved = { title: 'Home', cards: [...view.cards, { type: 'sensor', entity: 'sensor.t' }] };
    const byId = await call('PUT', { id: 1, name: 'home', title: 'Home', config: { views: [moved] } });
    expect(byId.body).toMatchObject({ id: 1, title: 'Home', config: { views: [moved] } });
    // by name: the same row replaced (title kept), no second dashboard
    const byName = await call('PUT', { name: 'home', config: { views: [], theme: 'dark' } });
    expect(byName.body).toMatchObject({ id: 1, title: 'Home', config: { views: [], theme: 'dark' } });
    await call('PUT', { name: 'garden', config: { views: [view] } });
    const list = await call('GET');
    expect(list.body.map((d: { id: number; name: string }) => [d.id, d.name])).toEqual([
      [1, 'home'],
      [2, 'garden'],
    ]);
  });

  it('answers clear errors: 401 without a token, 400 on a bad body, 404 for an unknown id, 409 on a name clash', async () => {
    expect((await call('GET', undefined, null)).status).toBe(401);
    const bad = await call('PUT', { name: '', config: { views: 'no' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/name|views/);
    expect(await call('PUT', { id: 99, name: 'x', config: { views: [] } })).toEqual({
      status: 404,
      body: { message: 'dashboard not found' },
    });
    const clash = await call('PUT', { id: 2, name: 'home', config: { views: [] } });
    expect(clash.status).toBe(409);
    expect(clash.body.message).toBe('a dashboard named home already exists');
  });

  it('keeps them across a restart (the SQLite file)', async () => {
    await edge.stop();
    edge = await startEdge(data.dir);
    token = edge.tokens.create('again').token;
    const list = await call('GET');
    expect(list.body.map((d: { name: string; title: string }) => [d.name, d.title])).toEqual([
      ['home', 'Home'],
      ['garden', 'garden'],
    ]);
  }, 60_000);
});
