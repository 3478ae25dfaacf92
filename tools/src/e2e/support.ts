import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import WebSocket from 'ws';
import type { MqttClient } from 'mqtt';
import { TestCloud } from '@smarthome/cloud/testing/harness';
import { createCloud } from '@smarthome/cloud/cloud';
import { defaultCloudConfig } from '@smarthome/cloud/config';
import { createLogger } from '@smarthome/cloud/log';
import { TEST_REDIS_URL, deleteTestPrefix, testRedisPrefix } from '@smarthome/cloud/testing/redis';
import { createTestSchema, testDatabaseUrl } from '@smarthome/cloud/testing/database';
import { connect, startEdge, tempDir } from '@smarthome/edge/testing/edge';
import type { Edge, EdgeConfig } from '@smarthome/edge/edge';

/** Shared by the end-to-end tests (not a test file). */

/** Polls until fn returns something truthy (sync or async), or throws after ms. */
export async function until<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  ms = 10_000,
  what = 'condition',
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The load balancer's stand-in: each connection goes to the first target that accepts it. */
export async function failoverProxy(targets: () => number[]): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    const attempt = (ports: number[]) => {
      if (ports.length === 0) {
        client.destroy();
        return;
      }
      const upstream = net.connect({ host: '127.0.0.1', port: ports[0] });
      upstream.once('error', () => {
        upstream.destroy();
        attempt(ports.slice(1));
      });
      upstream.once('connect', () => {
        sockets.add(upstream);
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        upstream.on('close', () => {
          sockets.delete(upstream);
          client.destroy();
        });
        client.on('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    attempt(targets());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What a test undoes afterwards, last first. */
export type Cleanups = Array<() => Promise<unknown> | unknown>;

/** An edge created in `cloud` (personal, or in organization `org`) and started paired with it over the tunnel. */
export async function pairEdge(
  cloud: TestCloud,
  cleanups: Cleanups,
  token: string,
  name: string,
  org?: string,
  config: Partial<EdgeConfig> = {},
): Promise<{ id: number; edge: Edge }> {
  const created = await cloud.post('/v1/edges', { token, org, body: { name } });
  expect(created.status, `edge ${name}: ${created.text}`).toBe(201);
  const data = tempDir();
  cleanups.push(data.cleanup);
  const edge = await startEdge(data.dir, { ...config, cloudUrl: cloud.url, token: created.body.token });
  cleanups.push(() => edge.stop());
  return { id: created.body.edge.id as number, edge };
}

/**
 * A discovered MQTT light `<device> <name>` (name: the key capitalised unless given) whose state is OFF;
 * the device's client and the commands it receives.
 */
export async function mqttLamp(
  edge: Edge,
  cleanups: Cleanups,
  key: string,
  device: string,
  opts: { name?: string; manufacturer?: string } = {},
): Promise<{ client: MqttClient; commands: string[] }> {
  const creds = await edge.createMqttCredentials({ role: 'device' });
  const client = await connect(edge, creds);
  cleanups.push(() => client.endAsync());
  const name = opts.name ?? key[0].toUpperCase() + key.slice(1);
  const dev = { ids: `${key}-1`, name: device, ...(opts.manufacturer ? { mf: opts.manufacturer, mdl: 'L1' } : {}) };
  await client.publishAsync(
    `homeassistant/light/${key}/config`,
    JSON.stringify({
      name,
      uniq_id: key,
      cmd_t: `${key}/set`,
      stat_t: `${key}/state`,
      dev,
    }),
    { qos: 1, retain: true },
  );
  await client.publishAsync(`${key}/state`, 'OFF', { qos: 1 });
  const commands: string[] = [];
  await client.subscribeAsync(`${key}/set`);
  client.on('message', (topic, payload) => commands.push(`${topic} ${payload}`));
  return { client, commands };
}

export interface AppSocket {
  /** every message received, in order */
  inbox: any[];
  /** sends `{id, ...msg}` with the next id, without waiting (nothing when the socket is closing); answers the id */
  fire: (msg: Record<string, unknown>) => number;
  /** sends and waits for its result (or pong) */
  ask: (msg: Record<string, unknown>, ms?: number) => Promise<any>;
  closed: Promise<{ code: number; reason: string; at: number }>;
  isOpen: () => boolean;
}

/** An app WebSocket (`<base>/v1/websocket`) authenticated with `token`. */
export async function openAppSocket(base: string, token: string, cleanups: Cleanups): Promise<AppSocket> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/v1/websocket`);
  cleanups.push(() => ws.close());
  const inbox: any[] = [];
  ws.on('message', (d) => inbox.push(JSON.parse(d.toString())));
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) => {
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString(), at: Date.now() }));
  });
  await until(() => inbox.find((m) => m.type === 'auth_required'));
  ws.send(JSON.stringify({ type: 'auth', access_token: token }));
  await until(() => inbox.find((m) => m.type === 'auth_ok'));
  let next = 1;
  const fire = (msg: Record<string, unknown>) => {
    const id = next++;
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ id, ...msg }), () => {});
    return id;
  };
  const ask = async (msg: Record<string, unknown>, ms?: number) => {
    const id = fire(msg);
    return until(
      () => inbox.find((m) => m.id === id && (m.type === 'result' || m.type === 'pong')),
      ms,
      `an answer to ${String(msg.type)}`,
    );
  };
  return { inbox, fire, ask, closed, isOpen: () => ws.readyState === ws.OPEN };
}

/**
 * Two in-process cloud replicas on one database (SQLite in a shared data dir, or a fresh
 * PostgreSQL schema when the suite runs on one) and one Redis prefix. Needs Redis.
 */
export async function startReplicaPair(cleanups: Cleanups, name: string): Promise<[TestCloud, TestCloud]> {
  const prefix = testRedisPrefix();
  cleanups.push(() => deleteTestPrefix(prefix));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const baseUrl = testDatabaseUrl();
  const schema = baseUrl ? await createTestSchema(baseUrl) : null;
  if (schema) cleanups.push(() => schema.drop());
  const replica = async () => {
    const config = defaultCloudConfig({
      port: 0,
      host: '127.0.0.1',
      dataDir: dir,
      fastHashing: true,
      databaseUrl: schema?.url,
      redisUrl: TEST_REDIS_URL,
    });
    const cloud = createCloud(config, {
      log: createLogger('cloud', { silent: !process.env.DEBUG }),
      redisPrefix: prefix,
    });
    await cloud.start();
    cleanups.push(() => cloud.stop());
    return new TestCloud(cloud, dir);
  };
  const a = await replica();
  return [a, await replica()];
}

/** The entity of the HA API tests' desk lamp (sharedDeskLamp). */
export const DESK_LAMP = 'light.desk_lamp_desk';

/** An MQTT desk lamp on `edge`, awaited on the cloud, shared with `userId` view-only through `org`. */
export async function sharedDeskLamp(
  cloud: TestCloud,
  cleanups: Cleanups,
  edge: Edge,
  ownerToken: string,
  org: string,
  userId: string,
): Promise<{ lamp: Awaited<ReturnType<typeof mqttLamp>>; shareId: string }> {
  const lamp = await mqttLamp(edge, cleanups, 'desk', 'Desk lamp');
  await until(
    async () => (await cloud.get(`/v1/entities/states/${DESK_LAMP}`, { token: ownerToken })).body?.state === 'off',
    10_000,
    'lamp mirrored',
  );
  const share = await cloud.post(`/v1/organizations/${org}/shares`, {
    token: ownerToken,
    body: { resource_type: 'entity', resource_id: DESK_LAMP, can_view: true, user_id: userId },
  });
  expect(share.status, share.text).toBe(201);
  return { lamp, shareId: share.body.id as string };
}

/** A new user made a member of a new organization of `ownerToken`, sharing `entityId` with it view-only. */
export async function viewOnlyMember(
  cloud: TestCloud,
  ownerToken: string,
  entityId: string,
): Promise<Awaited<ReturnType<TestCloud['user']>>> {
  const org = await cloud.post('/v1/organizations', { token: ownerToken, body: { name: 'Family' } });
  const member = await cloud.user();
  const inv = await cloud.post(`/v1/organizations/${org.body.id}/invitations`, {
    token: ownerToken,
    body: { email: member.email, role: 'member' },
  });
  expect((await cloud.post(`/v1/invitations/${inv.body.token}/accept`, { token: member.token })).status).toBe(200);
  expect(
    (
      await cloud.post(`/v1/organizations/${org.body.id}/shares`, {
        token: ownerToken,
        body: { resource_type: 'entity', resource_id: entityId, can_view: true, can_control: false, can_edit: false },
      })
    ).status,
  ).toBe(201);
  return member;
}
