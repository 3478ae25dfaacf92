import net from 'node:net';
import { expect } from 'vitest';
import WebSocket from 'ws';
import type { MqttClient } from 'mqtt';
import type { TestCloud } from '@smarthome/cloud/testing/harness';
import { connect, startEdge, tempDir } from '@smarthome/edge/test-helpers';
import type { Edge } from '@smarthome/edge/edge';

/** Shared by the end-to-end tests (not a test file). */

/** Polls until fn returns something truthy (sync or async), or throws after ms. */
export async function until<T>(fn: () => Promise<T | undefined | null | false> | T | undefined | null | false, ms = 10_000, what = 'condition'): Promise<T> {
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
      if (ports.length === 0) { client.destroy(); return; }
      const upstream = net.connect({ host: '127.0.0.1', port: ports[0] });
      upstream.once('error', () => { upstream.destroy(); attempt(ports.slice(1)); });
      upstream.once('connect', () => {
        sockets.add(upstream);
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        upstream.on('close', () => { sockets.delete(upstream); client.destroy(); });
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
    close: () => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
  };
}

/** What a test undoes afterwards, last first. */
export type Cleanups = Array<() => Promise<unknown> | unknown>;

/** An edge created in `cloud` (personal, or in organization `org`) and started paired with it over the tunnel. */
export async function pairEdge(cloud: TestCloud, cleanups: Cleanups, token: string, name: string, org?: string): Promise<{ id: number; edge: Edge }> {
  const created = await cloud.post('/v1/edges', { token, org, body: { name } });
  expect(created.status, `edge ${name}: ${created.text}`).toBe(201);
  const data = tempDir();
  cleanups.push(data.cleanup);
  const edge = await startEdge(data.dir, { cloudUrl: cloud.url, token: created.body.token });
  cleanups.push(() => edge.stop());
  return { id: created.body.edge.id as number, edge };
}

/**
 * A discovered MQTT light `<device> <name>` (name: the key capitalised unless given) whose state is OFF;
 * the device's client and the commands it receives.
 */
export async function mqttLamp(
  edge: Edge, cleanups: Cleanups, key: string, device: string, opts: { name?: string; manufacturer?: string } = {},
): Promise<{ client: MqttClient; commands: string[] }> {
  const creds = await edge.createMqttCredentials({ role: 'device' });
  const client = await connect(edge, creds);
  cleanups.push(() => client.endAsync());
  const name = opts.name ?? key[0].toUpperCase() + key.slice(1);
  const dev = { ids: `${key}-1`, name: device, ...(opts.manufacturer ? { mf: opts.manufacturer, mdl: 'L1' } : {}) };
  await client.publishAsync(`homeassistant/light/${key}/config`, JSON.stringify({
    name, uniq_id: key, cmd_t: `${key}/set`, stat_t: `${key}/state`, dev,
  }), { qos: 1, retain: true });
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
    return until(() => inbox.find((m) => m.id === id && (m.type === 'result' || m.type === 'pong')), ms, `an answer to ${String(msg.type)}`);
  };
  return { inbox, fire, ask, closed, isOpen: () => ws.readyState === ws.OPEN };
}
