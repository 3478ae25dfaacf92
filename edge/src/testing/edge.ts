import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import mqtt, { type MqttClient, type IClientOptions } from 'mqtt';
import WebSocket from 'ws';
import type { MqttCredentials } from '@smarthome/protocol';
import { EdgeDatabase } from '../db/database.ts';
import { createEdge, type Edge, type EdgeConfig } from '../edge.ts';
import { silentLogger, type Logger } from '../log.ts';

/** Test support (not a test file): a whole edge in-process on free ports in a temp dir. */

export function tempDir(prefix = 'edge-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh, open EdgeDatabase in a temp dir; closing it and removing the dir go onto `cleanups`. */
export function openTempDatabase(cleanups: (() => void)[]): EdgeDatabase {
  const tmp = tempDir();
  const database = new EdgeDatabase(tmp.dir);
  database.open();
  cleanups.push(() => {
    database.close();
    tmp.cleanup();
  });
  return database;
}

export async function startEdge(dataDir: string, extra: Partial<EdgeConfig> = {}): Promise<Edge> {
  const edge = createEdge({ port: 0, mqttPort: 0, dataDir, host: '127.0.0.1', logger: silentLogger, ...extra });
  await edge.start();
  return edge;
}

/** A logger that keeps what it is told, to assert on log lines. */
export function recordingLogger(): Logger & { lines: { level: string; msg: string }[]; warnings: () => string[] } {
  const lines: { level: string; msg: string }[] = [];
  const add = (level: string) => (msg: string) => {
    lines.push({ level, msg });
  };
  return {
    lines,
    debug: add('debug'),
    info: add('info'),
    warn: add('warn'),
    error: add('error'),
    warnings: () => lines.filter((l) => l.level === 'warn').map((l) => l.msg),
  };
}

export async function connect(
  edge: Edge,
  creds: MqttCredentials | null,
  options: IClientOptions = {},
): Promise<MqttClient> {
  return mqtt.connectAsync(`mqtt://127.0.0.1:${edge.ports.mqtt}`, {
    username: creds?.username,
    password: creds?.password,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ...options,
  });
}

export async function waitFor<T>(
  fn: () => T | undefined | null | false,
  timeoutMs = 3000,
  what = 'condition',
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The granted QoS of a subscription (128 = refused; mqtt.js rejects those). */
export async function granted(client: MqttClient, topic: string): Promise<number> {
  try {
    return (await client.subscribeAsync(topic, { qos: 1 }))[0].qos;
  } catch (err) {
    const packet = (err as { packet?: { granted?: (number | { qos: number })[] } }).packet;
    const g = packet?.granted?.[0];
    if (g === undefined) throw err;
    return typeof g === 'number' ? g : g.qos;
  }
}

/** Collects messages a client receives on the topics it subscribes to. */
export async function collector(
  client: MqttClient,
  topics: string | string[],
): Promise<{
  messages: { topic: string; payload: string }[];
  next: (n?: number) => Promise<{ topic: string; payload: string }[]>;
}> {
  const messages: { topic: string; payload: string }[] = [];
  client.on('message', (topic, payload) => messages.push({ topic, payload: payload.toString() }));
  await client.subscribeAsync(topics, { qos: 1 });
  let seen = 0;
  return {
    messages,
    async next(n = 1) {
      await waitFor(() => messages.length >= seen + n, 3000, `${n} message(s)`);
      const out = messages.slice(seen, seen + n);
      seen += n;
      return out;
    },
  };
}

export function hasBinary(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export const MOSQUITTO = hasBinary('mosquitto_pub') && hasBinary('mosquitto_sub');
if (!MOSQUITTO)
  console.warn(
    'mosquitto_pub/mosquitto_sub not found: tests using them are skipped (apt-get install mosquitto-clients)',
  );

/** A Home Assistant WebSocket session: `call` sends a command and resolves with its result message. */
export async function haSession(target: Edge | string, token: string) {
  // a URL (http://…) reaches another HA API server, e.g. the cloud's
  const base = typeof target === 'string' ? target.replace(/^http/, 'ws') : `ws://127.0.0.1:${target.ports.http}`;
  const ws = new WebSocket(`${base}/api/websocket`);
  const messages: Record<string, any>[] = [];
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    messages.push(...(Array.isArray(m) ? m : [m]));
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  ws.send(JSON.stringify({ type: 'auth', access_token: token }));
  await waitFor(() => messages.find((m) => m.type === 'auth_ok'), 3000, 'auth_ok');
  let id = 0;
  return {
    messages,
    close: () => ws.close(),
    call: async (msg: Record<string, unknown>) => {
      const n = ++id;
      ws.send(JSON.stringify({ id: n, ...msg }));
      return waitFor(() => messages.find((m) => m.id === n && m.type === 'result'), 3000, `result ${n}`);
    },
  };
}
