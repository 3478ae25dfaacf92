import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Edge } from '@smarthome/protocol';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { sha256 } from '../auth/secrets.ts';

const FLEET = 'fleet-secret-token-for-tests';
const body = (hostname: string, extra: Record<string, unknown> = {}) => ({
  hostname,
  name: `replica ${hostname}`,
  capabilities: { automations: true },
  ...extra,
});

let t: TestCloud;
beforeAll(async () => {
  t = await startTestCloud({ fleetToken: FLEET });
});
afterAll(async () => {
  await t.stop();
});

describe('POST /v1/edge/register-cloud', () => {
  it('registers a cloud replica owned by the fleet with a token and MQTT credentials', async () => {
    const res = await t.post('/v1/edge/register-cloud', { token: FLEET, body: body('replica-1.internal') });
    expect(res.status).toBe(200);
    expect(res.body.edge).toMatchObject({
      name: 'replica replica-1.internal',
      org_id: null,
      user_id: 'fleet',
      location: 'cloud',
      status: 'pending',
      capabilities: { automations: true },
      hostname: 'replica-1.internal',
      last_seen_at: expect.any(String),
    });
    expect(res.body.token).toMatch(/^shp_edge_/);
    expect(res.body.mqtt).toEqual({
      username: `edge-${res.body.edge.id}`,
      password: expect.stringMatching(/^shp_mqtt_/),
    });
    const row = await t.sqlOne('SELECT token_hash, mqtt_password_hash FROM edges WHERE id = ?', [res.body.edge.id]);
    expect(row).toEqual({ token_hash: sha256(res.body.token), mqtt_password_hash: sha256(res.body.mqtt.password) });
    expect(
      (await t.cloud.services.edges.verifyMqttCredentials(res.body.mqtt.username, res.body.mqtt.password))?.id,
    ).toBe(res.body.edge.id);
    expect(await t.cloud.services.edges.verifyMqttCredentials(res.body.mqtt.username, 'wrong')).toBeNull();
  });

  it('is idempotent by hostname: same edge id, refreshed name and capabilities, rotated credentials', async () => {
    const first = await t.post('/v1/edge/register-cloud', { token: FLEET, body: body('replica-2') });
    const rotated: Edge[] = [];
    const onRotated = (e: Edge) => rotated.push(e);
    t.cloud.services.edges.on('rotated', onRotated);
    const second = await t.post('/v1/edge/register-cloud', {
      token: FLEET,
      body: body('replica-2', { name: 'renamed', capabilities: { v: 2 } }),
    });
    t.cloud.services.edges.off('rotated', onRotated);
    expect(second.status).toBe(200);
    expect(second.body.edge.id).toBe(first.body.edge.id);
    expect(second.body.edge).toMatchObject({ name: 'renamed', capabilities: { v: 2 } });
    expect(second.body.token).not.toBe(first.body.token);
    expect(second.body.mqtt.username).toBe(first.body.mqtt.username);
    expect(rotated.map((e) => e.id)).toEqual([first.body.edge.id]);
    expect(await t.cloud.services.edges.authenticateEdgeToken(first.body.token)).toBeNull();
    expect((await t.cloud.services.edges.authenticateEdgeToken(second.body.token))?.id).toBe(first.body.edge.id);
    const count = await t.sqlOne<{ n: number }>("SELECT COUNT(*) AS n FROM edges WHERE hostname = 'replica-2'");
    expect(count?.n).toBe(1);
  });

  it('answers 401 {error} for a missing or wrong fleet token, or a user token', async () => {
    const u = await t.user();
    for (const token of [undefined, 'wrong-token', u.token]) {
      const res = await t.post('/v1/edge/register-cloud', { token, body: body('x') });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
    }
  });

  it('answers 401 when FLEET_TOKEN is not configured', async () => {
    const bare = await startTestCloud();
    try {
      const res = await bare.post('/v1/edge/register-cloud', { token: FLEET, body: body('x') });
      expect(res.status).toBe(401);
    } finally {
      await bare.stop();
    }
  });

  it('validates the body with 400 {message}', async () => {
    for (const b of [
      {},
      { hostname: '', name: 'n' },
      { hostname: 'h' },
      { hostname: 'h', name: 'n', capabilities: 'x' },
    ]) {
      const res = await t.post('/v1/edge/register-cloud', { token: FLEET, body: b });
      expect(res.status).toBe(400);
      expect(typeof res.body.message).toBe('string');
    }
  });
});

describe('GET /v1/edges/cloud-fleet', () => {
  it('lists replicas seen in the last 60 s to any signed-in user', async () => {
    const alive = (await t.post('/v1/edge/register-cloud', { token: FLEET, body: body('alive') })).body;
    const stale = (await t.post('/v1/edge/register-cloud', { token: FLEET, body: body('stale') })).body;
    const old = new Date(Date.now() - 61_000).toISOString();
    await t.sql('UPDATE edges SET last_seen_at = ? WHERE id = ?', [old, stale.edge.id]);
    const recent = new Date(Date.now() - 50_000).toISOString();
    await t.sql('UPDATE edges SET last_seen_at = ? WHERE id = ?', [recent, alive.edge.id]);
    const u = await t.user();
    const res = await t.get('/v1/edges/cloud-fleet', { token: u.token });
    expect(res.status).toBe(200);
    const ids = res.body.map((e: Edge) => e.id);
    expect(ids).toContain(alive.edge.id);
    expect(ids).not.toContain(stale.edge.id);
    expect(res.body.every((e: Edge) => e.location === 'cloud')).toBe(true);
    // the replica's heartbeat (edge token) brings it back
    const hb = await t.post('/v1/edge/heartbeat', { token: stale.token });
    expect(hb.status).toBe(200);
    expect(Date.parse(hb.body.last_seen_at)).toBeGreaterThan(Date.now() - 5_000);
    expect((await t.get('/v1/edges/cloud-fleet', { token: u.token })).body.map((e: Edge) => e.id)).toContain(
      stale.edge.id,
    );
    // home edges never appear
    const home = (await t.post('/v1/edges', { token: u.token, body: { name: 'home' } })).body;
    await t.post('/v1/edge/heartbeat', { token: home.token });
    expect((await t.get('/v1/edges/cloud-fleet', { token: u.token })).body.map((e: Edge) => e.id)).not.toContain(
      home.edge.id,
    );
  });

  it('is read-only: users cannot view or revoke fleet replicas by id', async () => {
    const replica = (await t.post('/v1/edge/register-cloud', { token: FLEET, body: body('ro') })).body;
    const u = await t.user();
    expect((await t.get(`/v1/edges/${replica.edge.id}`, { token: u.token })).status).toBe(404);
    expect((await t.delete(`/v1/edges/${replica.edge.id}`, { token: u.token })).status).toBe(404);
    expect((await t.get('/v1/edges', { token: u.token })).body).toEqual([]);
  });

  it('answers 401 without auth and with the fleet token (a user route)', async () => {
    expect((await t.get('/v1/edges/cloud-fleet')).status).toBe(401);
    expect((await t.get('/v1/edges/cloud-fleet', { token: FLEET })).status).toBe(401);
  });
});
