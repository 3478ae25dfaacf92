import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import type { Edge } from '@smarthome/edge/edge';
import { mqttLamp, openAppSocket, pairEdge, until, type AppSocket, type Cleanups } from './support.ts';

/**
 * An open app WebSocket lives no longer than its credential, and sees no more than its user
 * may: one real cloud, two real edges paired over the tunnel (A's personal edge with a desk
 * lamp, organization O's edge with a hall lamp), real MQTT devices, a real ws client.
 * - revoking a PAT, a refresh-token family (reuse detected) or changing the password closes
 *   the sockets opened with what was revoked within a second (auth_invalid, then 4001);
 * - an access token's socket closes at the token's exp, by a timer;
 * - a share deleted or a member removed downgrades the socket within a second: no more
 *   state_changed, get_states or call_service for what was lost; a share patched to
 *   view-only refuses the next call_service.
 */
const DESK = 'light.desk_lamp_desk';
const HALL = 'light.hall_lamp_hall';

const cleanups: Cleanups = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
});

interface Lamp {
  client: MqttClient;
  commands: string[];
  toggle: () => Promise<'on' | 'off'>;
}

/** A discovered MQTT light; toggle() publishes the opposite of its last state and returns the new one. */
async function lamp(edge: Edge, key: string, device: string): Promise<Lamp> {
  const { client, commands } = await mqttLamp(edge, cleanups, key, device);
  let on = false;
  return {
    client,
    commands,
    toggle: async () => {
      on = !on;
      await client.publishAsync(`${key}/state`, on ? 'ON' : 'OFF', { qos: 1 });
      return on ? 'on' : 'off';
    },
  };
}

type StateSocket = AppSocket & { events: () => Array<{ entity_id: string; new_state: { state: string } | null }> };

/** An app WebSocket, authenticated and subscribed to state_changed (subscription id 1). */
async function appSocket(cloud: TestCloud, token: string): Promise<StateSocket> {
  const socket = await openAppSocket(cloud.url, token, cleanups);
  const ask = (msg: Record<string, unknown>, ms = 5000) => socket.ask(msg, ms);
  expect((await ask({ type: 'subscribe_events', event_type: 'state_changed' })).success).toBe(true);
  const events = () => socket.inbox.filter((m) => m.type === 'event').map((m) => m.event.data);
  return { ...socket, ask, events };
}

/** What a closed socket was told: the auth_invalid message before the close, and the close. */
async function expectEnded(socket: StateSocket, since: number, reason: string): Promise<void> {
  const close = await Promise.race([socket.closed, new Promise<null>((r) => setTimeout(() => r(null), 3000))]);
  expect(close, 'the socket to be closed').not.toBeNull();
  expect(close!.code).toBe(4001);
  expect(close!.reason).toBe(reason);
  expect(close!.at - since).toBeLessThanOrEqual(1000);
  expect(socket.inbox.find((m) => m.type === 'auth_invalid')).toMatchObject({
    type: 'auth_invalid',
    message: expect.any(String),
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cloud: TestCloud;
let a: Awaited<ReturnType<TestCloud['user']>>;
let m: Awaited<ReturnType<TestCloud['user']>>;
let orgId: string;
let desk: Lamp;
let hall: Lamp;

beforeAll(async () => {
  cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  [a, m] = [await cloud.user(), await cloud.user()];
  orgId = (await cloud.post('/v1/organizations', { token: a.token, body: { name: 'Family' } })).body.id;
  const inv = await cloud.post(`/v1/organizations/${orgId}/invitations`, {
    token: a.token,
    body: { email: m.email, role: 'member' },
  });
  expect((await cloud.post(`/v1/invitations/${inv.body.token}/accept`, { token: m.token })).status).toBe(200);
  const [pa, po] = await Promise.all([
    pairEdge(cloud, cleanups, a.token, 'A home'),
    pairEdge(cloud, cleanups, a.token, 'Family home', orgId),
  ]);
  await until(() => pa.edge.link?.connected && po.edge.link?.connected, 10_000, 'both tunnels');
  [desk, hall] = await Promise.all([lamp(pa.edge, 'desk', 'Desk lamp'), lamp(po.edge, 'hall', 'Hall lamp')]);
  await until(
    async () =>
      (await cloud.get(`/v1/entities/states/${DESK}`, { token: a.token })).body?.state === 'off' &&
      (await cloud.get(`/v1/entities/states/${HALL}`, { token: m.token })).body?.state === 'off',
    10_000,
    'the mirror',
  );
}, 30_000);

describe('app WebSocket sessions end with their credentials', () => {
  it('a revoked PAT closes its socket within 1 s (auth_invalid, 4001), and a call_service sent after the revocation does not run', async () => {
    const pat = await cloud.post('/v1/account/tokens', { token: a.token, body: { name: 'app' } });
    expect(pat.status).toBe(201);
    const socket = await appSocket(cloud, pat.body.token);
    expect(
      (await socket.ask({ type: 'call_service', domain: 'light', service: 'turn_on', target: { entity_id: DESK } }))
        .success,
    ).toBe(true);
    await until(() => desk.commands.includes('desk/set ON'), 5000, 'the command before revocation');
    desk.commands.length = 0;

    expect((await cloud.delete(`/v1/account/tokens/${pat.body.id}`, { token: a.token })).status).toBe(200);
    const revokedAt = Date.now();
    socket.fire({ type: 'call_service', domain: 'light', service: 'turn_off', target: { entity_id: DESK } });
    await expectEnded(socket, revokedAt, 'token revoked');
    expect((await cloud.get('/v1/account', { token: pat.body.token })).status).toBe(401);
    await sleep(300);
    expect(desk.commands).toEqual([]);
    expect(socket.inbox.filter((m) => m.type === 'result' && m.success && m.result?.changed_states)).toHaveLength(1);
  });

  it("an access token's socket closes at the token's expiry by a timer (auth_invalid, 4001 token expired)", async () => {
    const shortLived = await startTestCloud({ accessTokenTtlSeconds: 2 });
    cleanups.push(() => shortLived.stop());
    const u = await shortLived.user();
    const exp = JSON.parse(Buffer.from(u.token.split('.')[1], 'base64url').toString()).exp as number;
    const socket = await appSocket(shortLived, u.token);
    expect((await socket.ask({ type: 'ping' })).type).toBe('pong');
    const close = await Promise.race([socket.closed, new Promise<null>((r) => setTimeout(() => r(null), 4000))]);
    expect(close, 'the socket to be closed at expiry without any message from the client').not.toBeNull();
    expect(close!.code).toBe(4001);
    expect(close!.reason).toBe('token expired');
    expect(close!.at).toBeGreaterThanOrEqual(exp * 1000 - 50);
    expect(close!.at).toBeLessThanOrEqual(exp * 1000 + 1000);
    expect(socket.inbox.find((m) => m.type === 'auth_invalid')).toEqual({
      type: 'auth_invalid',
      message: 'access token expired',
    });
  });

  it('a refresh-token family revoked on reuse closes the sockets of its access tokens, and those tokens answer 401 at once', async () => {
    const u = await cloud.user();
    const other = await cloud.post('/v1/auth/token', {
      body: { grant_type: 'password', email: u.email, password: u.password },
    });
    const rotated = await cloud.post('/v1/auth/token', {
      body: { grant_type: 'refresh_token', refresh_token: u.refresh },
    });
    expect(rotated.status).toBe(200);
    // Both of the family's access tokens are verified (and cached) before the revocation.
    expect((await cloud.get('/v1/account', { token: u.token })).status).toBe(200);
    expect((await cloud.get('/v1/account', { token: rotated.body.access_token })).status).toBe(200);
    const first = await appSocket(cloud, u.token);
    const second = await appSocket(cloud, rotated.body.access_token);
    const unrelated = await appSocket(cloud, other.body.access_token);

    // The used refresh token again: reuse detected, the whole family is revoked.
    expect(
      (await cloud.post('/v1/auth/token', { body: { grant_type: 'refresh_token', refresh_token: u.refresh } })).status,
    ).toBe(401);
    const revokedAt = Date.now();
    await expectEnded(first, revokedAt, 'session revoked');
    await expectEnded(second, revokedAt, 'session revoked');
    expect((await cloud.get('/v1/account', { token: u.token })).status).toBe(401);
    expect((await cloud.get('/v1/account', { token: rotated.body.access_token })).status).toBe(401);
    // Another sign-in of the same user is another family: untouched.
    expect(unrelated.isOpen()).toBe(true);
    expect((await unrelated.ask({ type: 'ping' })).type).toBe('pong');
    expect((await cloud.get('/v1/account', { token: other.body.access_token })).status).toBe(200);
  });

  it('a password change ends every other sign-in session (sockets closed, tokens 401) and keeps the current one and PATs', async () => {
    const u = await cloud.user();
    const phone = await cloud.post('/v1/auth/token', {
      body: { grant_type: 'password', email: u.email, password: u.password },
    });
    const pat = await cloud.post('/v1/account/tokens', { token: u.token, body: { name: 'script' } });
    expect((await cloud.get('/v1/account', { token: phone.body.access_token })).status).toBe(200);
    const phoneSocket = await appSocket(cloud, phone.body.access_token);
    const currentSocket = await appSocket(cloud, u.token);
    const patSocket = await appSocket(cloud, pat.body.token);

    const changed = await cloud.post('/v1/account/password', {
      token: u.token,
      headers: { 'x-account-verification': u.password },
      body: { password: 'a brand new password' },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ message: 'password changed' });
    const changedAt = Date.now();
    await expectEnded(phoneSocket, changedAt, 'session revoked');
    expect((await cloud.get('/v1/account', { token: phone.body.access_token })).status).toBe(401);
    expect(
      (
        await cloud.post('/v1/auth/token', {
          body: { grant_type: 'refresh_token', refresh_token: phone.body.refresh_token },
        })
      ).status,
    ).toBe(401);
    // The session that changed the password, and personal access tokens, stay.
    expect((await currentSocket.ask({ type: 'ping' })).type).toBe('pong');
    expect((await patSocket.ask({ type: 'ping' })).type).toBe('pong');
    expect((await cloud.get('/v1/account', { token: u.token })).status).toBe(200);
    expect((await cloud.get('/v1/account', { token: pat.body.token })).status).toBe(200);
    // The new password signs in, the old one does not.
    expect(
      (await cloud.post('/v1/auth/token', { body: { grant_type: 'password', email: u.email, password: u.password } }))
        .status,
    ).toBe(401);
    expect(
      (
        await cloud.post('/v1/auth/token', {
          body: { grant_type: 'password', email: u.email, password: 'a brand new password' },
        })
      ).status,
    ).toBe(200);
  });

  it('a password change needs the current password (403) and a valid new one (400), and a bearer token (401)', async () => {
    const u = await cloud.user();
    const wrong = await cloud.post('/v1/account/password', {
      token: u.token,
      headers: { 'x-account-verification': 'not my password' },
      body: { password: 'a brand new password' },
    });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toEqual({ error: 'verification_failed' });
    const missing = await cloud.post('/v1/account/password', {
      token: u.token,
      body: { password: 'a brand new password' },
    });
    expect(missing.status).toBe(403);
    const short = await cloud.post('/v1/account/password', {
      token: u.token,
      headers: { 'x-account-verification': u.password },
      body: { password: 'short' },
    });
    expect(short.status).toBe(400);
    expect(short.body.message).toMatch(/^password: /);
    expect(
      (
        await cloud.post('/v1/account/password', {
          headers: { 'x-account-verification': u.password },
          body: { password: 'a brand new password' },
        })
      ).status,
    ).toBe(401);
    expect(
      (await cloud.post('/v1/auth/token', { body: { grant_type: 'password', email: u.email, password: u.password } }))
        .status,
    ).toBe(200);
  });
});

describe('app WebSocket sessions lose what their user loses', () => {
  /** A state change of `lamp` reaches (or not) the socket: the event of the new state within `ms`. */
  async function sees(socket: StateSocket, lampOf: Lamp, entityId: string, ms: number): Promise<boolean> {
    const state = await lampOf.toggle();
    const before = socket.events().length;
    try {
      await until(
        () =>
          socket
            .events()
            .slice(before)
            .find((e) => e.entity_id === entityId && e.new_state?.state === state),
        ms,
        `${entityId} ${state}`,
      );
      return true;
    } catch {
      return false;
    }
  }
  const listed = async (socket: StateSocket) =>
    ((await socket.ask({ type: 'get_states' })).result as Array<{ entity_id: string }>).map((s) => s.entity_id).sort();

  it('a deleted share stops state_changed, get_states and call_service for the shared entity within 1 s; the rest stays', async () => {
    const share = await cloud.post(`/v1/organizations/${orgId}/shares`, {
      token: a.token,
      body: { resource_type: 'entity', resource_id: DESK, can_view: true, can_control: true, can_edit: false },
    });
    expect(share.status).toBe(201);
    const socket = await appSocket(cloud, m.token);
    expect(await listed(socket)).toEqual([DESK, HALL]);
    // The socket has just loaded what its user may see.
    expect(await sees(socket, desk, DESK, 5000)).toBe(true);

    expect((await cloud.delete(`/v1/organizations/${orgId}/shares/${share.body.id}`, { token: a.token })).status).toBe(
      200,
    );
    const deletedAt = Date.now();
    expect(await sees(socket, desk, DESK, 500)).toBe(false);
    expect(await listed(socket)).toEqual([HALL]);
    desk.commands.length = 0;
    const call = await socket.ask({
      type: 'call_service',
      domain: 'light',
      service: 'turn_on',
      target: { entity_id: DESK },
    });
    expect(call).toMatchObject({ success: false, error: { code: 'not_found' } });
    expect(Date.now() - deletedAt).toBeLessThan(1000 + 500);
    await sleep(200);
    expect(desk.commands).toEqual([]);
    // A downgrade, not a close: the organization's edge is still there.
    expect(socket.isOpen()).toBe(true);
    expect(await sees(socket, hall, HALL, 5000)).toBe(true);
  });

  it('a share patched to view-only refuses call_service at once and keeps its id; patched back, control returns', async () => {
    const share = await cloud.post(`/v1/organizations/${orgId}/shares`, {
      token: a.token,
      body: { resource_type: 'entity', resource_id: DESK, can_view: true, can_control: true },
    });
    expect(share.status).toBe(201);
    const path = `/v1/organizations/${orgId}/shares/${share.body.id}`;
    const socket = await appSocket(cloud, m.token);
    const turnOn = () =>
      socket.ask({ type: 'call_service', domain: 'light', service: 'turn_on', target: { entity_id: DESK } });
    expect((await turnOn()).success).toBe(true);

    const down = await cloud.patch(path, { token: a.token, body: { can_control: false } });
    expect(down.status).toBe(200);
    expect(down.body).toEqual({ ...share.body, can_control: false });
    desk.commands.length = 0;
    expect(await turnOn()).toMatchObject({ success: false, error: { code: 'unauthorized' } });
    await sleep(200);
    expect(desk.commands).toEqual([]);
    // still a viewer: the same share, narrowed
    expect(await listed(socket)).toEqual([DESK, HALL]);
    expect(await sees(socket, desk, DESK, 5000)).toBe(true);

    const up = await cloud.patch(path, { token: a.token, body: { can_control: true } });
    expect(up.body).toEqual(share.body);
    expect((await turnOn()).success).toBe(true);
    expect((await cloud.delete(path, { token: a.token })).status).toBe(200);
  });

  it('a member removed from the organization stops seeing and controlling its edge within 1 s', async () => {
    const socket = await appSocket(cloud, m.token);
    expect(await listed(socket)).toEqual([HALL]);
    expect(await sees(socket, hall, HALL, 5000)).toBe(true);

    expect((await cloud.delete(`/v1/organizations/${orgId}/members/${m.id}`, { token: a.token })).status).toBe(200);
    const removedAt = Date.now();
    expect(await sees(socket, hall, HALL, 500)).toBe(false);
    expect(await listed(socket)).toEqual([]);
    hall.commands.length = 0;
    const call = await socket.ask({
      type: 'call_service',
      domain: 'light',
      service: 'turn_on',
      target: { entity_id: HALL },
    });
    expect(call).toMatchObject({ success: false, error: { code: 'not_found' } });
    expect(Date.now() - removedAt).toBeLessThan(1000 + 500);
    await sleep(200);
    expect(hall.commands).toEqual([]);
  });
});
