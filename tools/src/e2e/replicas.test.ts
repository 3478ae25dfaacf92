import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair } from 'jose';
import type { MqttClient } from 'mqtt';
import { spawnReady, type Spawned } from '@smarthome/cloud/testing/process';
import { TEST_REDIS_URL, deleteTestPrefix, redisReachable, testRedisPrefix } from '@smarthome/cloud/testing/redis';
import { connect, startEdge, tempDir } from '@smarthome/edge/testing/edge';
import type { Edge } from '@smarthome/edge/edge';
import { createTestSchema, testDatabaseUrl } from '@smarthome/cloud/testing/database';
import { failoverProxy, openAppSocket, until } from './support.ts';
import { outboxToken } from '@smarthome/cloud/testing/mail';

/** What an operator copies to every replica: the access-token signing key and the VoIP secret key. */
async function provisionSharedKeys(dirs: string[]): Promise<void> {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const jwk = JSON.stringify(await exportJWK(privateKey));
  const voipKey = randomBytes(32).toString('base64') + '\n';
  for (const dir of dirs) {
    fs.writeFileSync(path.join(dir, 'jwt-signing-key.json'), jwk, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, 'voip-secret.key'), voipKey, { mode: 0o600 });
  }
}

/**
 * Two cloud processes on one database (a shared SQLite file in one data dir, or with
 * TEST_DATABASE_URL one PostgreSQL schema and a data dir each, holding the same keys) and one
 * Redis (REDIS_URL), acting as one: an edge whose
 * tunnel is on replica B is reachable through replica A, its state changes reach A's app
 * sockets, login throttling is shared, revocation on A drops B's tunnel and ends B's app sockets
 * opened with a revoked PAT, and when B is killed
 * the edge reconnects through the "load balancer" (a failover TCP proxy: B first, then A) to A.
 */
const reachable = await redisReachable();
if (!reachable)
  console.warn(
    `SKIPPED tools/src/e2e/replicas.test.ts: no Redis at ${TEST_REDIS_URL} (start redis-server or set REDIS_URL)`,
  );

const DESK = 'light.desk_lamp_desk';
const children: Spawned[] = [];
const cleanups: Array<() => Promise<unknown> | unknown> = [];

async function call(base: string, method: string, urlPath: string, opts: { token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + urlPath, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body };
}

async function startReplica(
  dataDir: string,
  prefix: string,
  databaseUrl?: string,
): Promise<{ proc: Spawned; url: string; port: number }> {
  const args = ['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--redis-url', TEST_REDIS_URL];
  if (databaseUrl) args.push('--database-url', databaseUrl);
  const proc = await spawnReady('cloud/src/main.ts', args, { REDIS_PREFIX: prefix }, 20_000);
  children.push(proc);
  return { proc, url: `http://127.0.0.1:${proc.ready.http}`, port: proc.ready.http };
}

describe.skipIf(!reachable)('two cloud replicas behind a load balancer', () => {
  let A: { proc: Spawned; url: string; port: number };
  let B: { proc: Spawned; url: string; port: number };
  let dirA: string;
  let dirB: string;
  let owner: { email: string; password: string; token: string };
  let edge: Edge;
  let edgeId: number;
  let device: MqttClient;
  const commands: string[] = [];

  beforeAll(async () => {
    const prefix = testRedisPrefix();
    cleanups.push(() => deleteTestPrefix(prefix));
    const pgUrl = testDatabaseUrl();
    const schema = pgUrl ? await createTestSchema(pgUrl) : null;
    if (schema) cleanups.push(() => schema.drop());
    dirA = fs.mkdtempSync(path.join(os.tmpdir(), 'replicas-'));
    cleanups.push(() => fs.rmSync(dirA, { recursive: true, force: true }));
    // On PostgreSQL each replica has a data dir of its own (as on separate hosts), provisioned with the same keys.
    dirB = schema ? fs.mkdtempSync(path.join(os.tmpdir(), 'replicas-')) : dirA;
    if (schema) {
      cleanups.push(() => fs.rmSync(dirB, { recursive: true, force: true }));
      await provisionSharedKeys([dirA, dirB]);
    }
    // Both start at once on a fresh database: migrations must apply exactly once between them.
    [A, B] = await Promise.all([startReplica(dirA, prefix, schema?.url), startReplica(dirB, prefix, schema?.url)]);
    if (schema)
      expect(fs.existsSync(path.join(dirA, 'cloud.db')) || fs.existsSync(path.join(dirB, 'cloud.db'))).toBe(false);

    const email = `owner-${prefix}@example.test`;
    const password = 'correct horse battery';
    const reg = await call(A.url, 'POST', '/v1/auth/register', { body: { email, password, name: 'owner' } });
    expect(reg.status).toBe(201);
    owner = { email, password, token: reg.body.access_token };
    const created = await call(A.url, 'POST', '/v1/edges', { token: owner.token, body: { name: 'Home' } });
    expect(created.status).toBe(201);
    edgeId = created.body.edge.id;

    // The edge reaches the cloud through the proxy, which prefers B while B is alive.
    const proxy = await failoverProxy(() => [B.port, A.port]);
    cleanups.push(() => proxy.close());
    const data = tempDir();
    cleanups.push(data.cleanup);
    edge = await startEdge(data.dir, { cloudUrl: `http://127.0.0.1:${proxy.port}`, token: created.body.token });
    cleanups.push(() => edge.stop());

    const creds = await edge.createMqttCredentials({ role: 'device' });
    device = await connect(edge, creds);
    cleanups.push(() => device.endAsync());
    await device.publishAsync(
      'homeassistant/light/desk/config',
      JSON.stringify({
        name: 'Desk',
        uniq_id: 'desk',
        cmd_t: 'desk/set',
        stat_t: 'desk/state',
        dev: { ids: 'desk-1', name: 'Desk lamp' },
      }),
      { qos: 1, retain: true },
    );
    await device.publishAsync('desk/state', 'OFF', { qos: 1 });
    await device.subscribeAsync('desk/set');
    device.on('message', (topic, payload) => commands.push(`${topic} ${payload}`));
    await until(
      async () =>
        (await call(A.url, 'GET', `/v1/entities/states/${DESK}`, { token: owner.token })).body?.state === 'off',
      10_000,
      'the mirror',
    );
  }, 60_000);

  afterAll(async () => {
    for (const child of children.splice(0)) {
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
      await child.exit;
    }
    for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
  });

  it("shows the edge online on A while its tunnel is on B, and relays A's service call to the edge's MQTT command topic", async () => {
    const listed = (await call(A.url, 'GET', '/v1/edges', { token: owner.token })).body;
    expect(listed.find((e: { id: number }) => e.id === edgeId).status).toBe('online');
    const res = await call(A.url, 'POST', '/v1/services/light/turn_on', {
      token: owner.token,
      body: { entity_id: DESK },
    });
    expect(res.status).toBe(200);
    await until(() => commands.includes('desk/set ON'), 5000, 'the MQTT command');
  });

  it('delivers state_changed from the edge on B to an app WebSocket on A, once', async () => {
    const socket = await openAppSocket(A.url, owner.token, cleanups);
    expect((await socket.ask({ type: 'subscribe_events', event_type: 'state_changed' })).success).toBe(true);
    const inbox = socket.inbox;

    await device.publishAsync('desk/state', 'ON', { qos: 1 });
    const event = await until(
      () =>
        inbox.find(
          (m) => m.type === 'event' && m.event.data.entity_id === DESK && m.event.data.new_state?.state === 'on',
        ),
      5000,
      'state_changed on A',
    );
    expect(event.event.data.old_state.state).toBe('off');
    await new Promise((r) => setTimeout(r, 200));
    expect(inbox.filter((m) => m.type === 'event' && m.event.data.new_state?.state === 'on')).toHaveLength(1);
  });

  it('a PAT revoked on A closes the app WebSocket opened with it on B within 1 s (auth_invalid, 4001)', async () => {
    const pat = await call(A.url, 'POST', '/v1/account/tokens', { token: owner.token, body: { name: 'app on B' } });
    expect(pat.status).toBe(201);
    const socket = await openAppSocket(B.url, pat.body.token, cleanups);
    expect((await socket.ask({ type: 'get_states' })).success).toBe(true);
    const { inbox, closed } = socket;

    expect((await call(A.url, 'DELETE', `/v1/account/tokens/${pat.body.id}`, { token: owner.token })).status).toBe(200);
    const revokedAt = Date.now();
    const close = await Promise.race([closed, new Promise<null>((r) => setTimeout(() => r(null), 3000))]);
    expect(close, 'the socket on B to be closed').not.toBeNull();
    expect(close).toMatchObject({ code: 4001, reason: 'token revoked' });
    expect(close!.at - revokedAt).toBeLessThanOrEqual(1000);
    expect(inbox.find((m) => m.type === 'auth_invalid')).toEqual({
      type: 'auth_invalid',
      message: 'personal access token revoked',
    });
  });

  it('continues on B a config flow started on A (the flow directory is shared), and forgets it when done', async () => {
    const start = await call(A.url, 'POST', '/v1/config_flow', { token: owner.token, body: { handler: 'demo' } });
    expect(start.status).toBe(200);
    expect(start.body).toMatchObject({ type: 'form', handler: 'demo', stepId: 'user', flowId: expect.any(String) });
    const flowId = start.body.flowId as string;
    const done = await call(B.url, 'POST', `/v1/config_flow/${flowId}/advance`, { token: owner.token, body: {} });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ type: 'create_entry', title: 'Demo Home' });
    // create_entry forgot the flow for every replica.
    expect(
      (await call(A.url, 'POST', `/v1/config_flow/${flowId}/advance`, { token: owner.token, body: {} })).status,
    ).toBe(404);
    await until(
      async () =>
        (await call(A.url, 'GET', '/v1/config_entries', { token: owner.token })).body?.some(
          (e: { domain: string }) => e.domain === 'demo',
        ),
      5000,
      'the demo entry in the mirror',
    );
  });

  it("drops a revoked edge's tunnel held by B when it is deleted on A", async () => {
    const created = await call(A.url, 'POST', '/v1/edges', { token: owner.token, body: { name: 'Cabin' } });
    const data = tempDir();
    cleanups.push(data.cleanup);
    const cabin = await startEdge(data.dir, { cloudUrl: B.url, token: created.body.token });
    cleanups.push(() => cabin.stop());
    await until(
      async () =>
        cabin.link?.connected &&
        (await call(A.url, 'GET', '/v1/edges', { token: owner.token })).body.find(
          (e: { id: number }) => e.id === created.body.edge.id,
        ).status === 'online',
    );
    expect((await call(A.url, 'DELETE', `/v1/edges/${created.body.edge.id}`, { token: owner.token })).status).toBe(200);
    await until(() => !cabin.link?.connected, 5000, 'the tunnel on B to drop');
  });

  it('a share deleted and a member removed on A stop granting access through B (cached grants are dropped on every replica)', async () => {
    const org = (await call(A.url, 'POST', '/v1/organizations', { token: owner.token, body: { name: 'Family' } })).body
      .id as string;
    const email = `member-${org}@example.test`;
    const member = (
      await call(B.url, 'POST', '/v1/auth/register', { body: { email, password: 'correct horse battery', name: 'm' } })
    ).body.access_token as string;
    // Only a verified address claims an invitation: follow the link of the mail either replica wrote to its outbox.
    const verification = await outboxToken([dirA, dirB], email, '/verify-email');
    expect((await call(A.url, 'POST', '/v1/auth/verify-email', { body: { token: verification } })).status).toBe(200);
    const invite = await call(A.url, 'POST', `/v1/organizations/${org}/invitations`, {
      token: owner.token,
      body: { email, role: 'member' },
    });
    expect((await call(B.url, 'POST', `/v1/invitations/${invite.body.token}/accept`, { token: member })).status).toBe(
      200,
    );
    const share = await call(A.url, 'POST', `/v1/organizations/${org}/shares`, {
      token: owner.token,
      body: { resource_type: 'entity', resource_id: DESK, can_view: true, can_control: false, can_edit: false },
    });
    expect(share.status).toBe(201);
    const seesDesk = async () =>
      (await call(B.url, 'GET', '/v1/entities/states', { token: member })).body.some(
        (s: { entity_id: string }) => s.entity_id === DESK,
      );
    await until(seesDesk, 2000, 'the shared entity on B');
    expect(await seesDesk()).toBe(true); // now from B's cache
    expect(
      (await call(A.url, 'DELETE', `/v1/organizations/${org}/shares/${share.body.id}`, { token: owner.token })).status,
    ).toBe(200);
    await until(async () => !(await seesDesk()), 2000, 'the share to stop counting on B');

    const again = await call(A.url, 'POST', `/v1/organizations/${org}/shares`, {
      token: owner.token,
      body: { resource_type: 'entity', resource_id: DESK, can_view: true, can_control: false, can_edit: false },
    });
    expect(again.status).toBe(201);
    await until(seesDesk, 2000, 'the new share on B');
    expect(
      (
        await call(
          A.url,
          'DELETE',
          `/v1/organizations/${org}/members/${(await call(B.url, 'GET', '/v1/account', { token: member })).body.id}`,
          { token: owner.token },
        )
      ).status,
    ).toBe(200);
    await until(async () => !(await seesDesk()), 2000, 'the removed member to lose the entity on B');
  });

  it('shares login throttling: failures on A make B answer 429', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await call(A.url, 'POST', '/v1/auth/token', {
        body: { grant_type: 'password', email: owner.email, password: 'wrong password' },
      });
      expect(res.status).toBe(401);
    }
    const res = await call(B.url, 'POST', '/v1/auth/token', {
      body: { grant_type: 'password', email: owner.email, password: owner.password },
    });
    expect(res.status).toBe(429);
  });

  it('recovers when B is killed: the edge reconnects through the proxy to A, which serves it', async () => {
    B.proc.child.kill('SIGKILL');
    await B.proc.exit;
    await until(() => edge.link?.connected, 15_000, 'the edge to reconnect');
    commands.length = 0;
    const res = await until(
      async () => {
        const r = await call(A.url, 'POST', '/v1/services/light/turn_off', {
          token: owner.token,
          body: { entity_id: DESK },
        });
        return r.status === 200 ? r : null;
      },
      15_000,
      'a service call on A',
    );
    expect(res.status).toBe(200);
    await until(() => commands.includes('desk/set OFF'), 5000, 'the MQTT command after failover');
    const listed = (await call(A.url, 'GET', '/v1/edges', { token: owner.token })).body;
    expect(listed.find((e: { id: number }) => e.id === edgeId).status).toBe('online');
    // The mirror keeps following the edge through A.
    await device.publishAsync('desk/state', 'OFF', { qos: 1 });
    await until(
      async () =>
        (await call(A.url, 'GET', `/v1/entities/states/${DESK}`, { token: owner.token })).body?.state === 'off',
      5000,
      'the mirror after failover',
    );
  }, 40_000);
});
