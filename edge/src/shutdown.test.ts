import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { connect as tcpConnect, createServer, type Socket } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir, waitFor } from './testing/edge.ts';
import { killEdgeProcesses, MAIN, NODE, startEdgeProcess, type EdgeProcess } from './testing/process.ts';

/**
 * Shutdown and crashes of the real edge process (signals, kill -9), with a real mqtt.js client
 * publishing at QoS 1: what the broker acknowledged must be there after a restart, except what
 * a kill -9 catches inside the documented write-behind window.
 */
const cleanups: (() => unknown)[] = [];
afterEach(() => {
  killEdgeProcesses();
  for (const c of cleanups.splice(0).reverse()) c();
});
const PROCESS_TEST_MS = 150_000;

function dataDir(): string {
  const tmp = tempDir('edge-shutdown-');
  cleanups.push(tmp.cleanup);
  return tmp.dir;
}

function localToken(dir: string): string {
  const created = spawnSync(NODE, [MAIN, 'token', 'create', '--name', 'test', '--data-dir', dir], { encoding: 'utf8' });
  if (created.status !== 0) throw new Error(`token create failed: ${created.stderr}`);
  return created.stdout.trim();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function api(
  port: number,
  token: string,
  method: string,
  urlPath: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}${urlPath}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function stateOf(port: number, token: string, entityId: string): Promise<string | null> {
  const res = await api(port, token, 'GET', `/v1/entities/states/${entityId}`);
  if (res.status !== 200) throw new Error(`GET ${entityId}: ${res.status}`);
  return res.body.state;
}

/** A new device user on the edge's broker, connected (real mqtt.js, no reconnect). */
async function device(
  edge: { http: number; mqtt: number },
  token: string,
): Promise<MqttClient & { creds: { username: string; password: string } }> {
  const creds = (await api(edge.http, token, 'POST', '/v1/mqtt/credentials', { role: 'device' })).body;
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${edge.mqtt}`, { ...creds, reconnectPeriod: 0 });
  client.on('error', () => {});
  cleanups.push(() => client.end(true));
  return Object.assign(client, { creds });
}

/** Sensors `sensor.load_<i>` announced over MQTT discovery, each reading `load/<i>`. */
async function announce(client: MqttClient, count: number, edge: { http: number }, token: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    await client.publishAsync(
      `homeassistant/sensor/load_${i}/config`,
      JSON.stringify({ name: `Load ${i}`, uniq_id: `load-${i}`, stat_t: `load/${i}` }),
      { qos: 1, retain: true },
    );
    ids.push(`sensor.load_${i}`);
  }
  for (const id of ids) await pollOk(edge.http, token, id);
  return ids;
}

async function pollOk(port: number, token: string, entityId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await api(port, token, 'GET', `/v1/entities/states/${entityId}`)).status === 200) return;
    await sleep(25);
  }
  throw new Error(`${entityId} never appeared`);
}

/**
 * QoS 1 publishes of increasing numbers on every sensor, as fast as the broker acknowledges
 * them, until the connection ends. Records, per sensor, each acknowledged value with its time.
 */
function load(client: MqttClient, sensors: number, retain: (i: number) => boolean = () => false) {
  const sent = new Array<number>(sensors).fill(0);
  const acks: { value: number; at: number }[][] = Array.from({ length: sensors }, () => []);
  let running = true;
  const ended = new Promise<void>((resolve) =>
    client.once('close', () => {
      running = false;
      resolve();
    }),
  );
  for (let i = 0; i < sensors; i++) {
    void (async () => {
      while (running) {
        const value = ++sent[i];
        try {
          await client.publishAsync(`load/${i}`, String(value), { qos: 1, retain: retain(i) });
        } catch {
          return;
        }
        acks[i].push({ value, at: Date.now() });
      }
    })();
  }
  return {
    sent,
    acks,
    ended,
    lastAcked: (i: number, before = Infinity) => acks[i].filter((a) => a.at <= before).at(-1)?.value ?? 0,
    stop: () => {
      running = false;
    },
  };
}

/**
 * A cloud that takes the tunnel's WebSocket upgrade and then never answers anything, not even
 * the close handshake: closing the tunnel takes the edge its full 1 s timeout.
 */
async function silentCloud(): Promise<{ url: string; upgraded: Promise<void> }> {
  const sockets = new Set<Socket>();
  let upgradedNow = () => {};
  const upgraded = new Promise<void>((resolve) => {
    upgradedNow = resolve;
  });
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    let head = '';
    socket.on('data', (chunk) => {
      if (head.includes('\r\n\r\n')) return;
      head += chunk.toString('latin1');
      const key = /sec-websocket-key: *(\S+)/i.exec(head)?.[1];
      if (!head.includes('\r\n\r\n') || !key) return;
      const accept = createHash('sha1')
        .update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11')
        .digest('base64');
      socket.write(
        `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
      );
      upgradedNow();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, upgraded };
}

/** An HTTP client that sends a request's head and then only part of its body: in flight until the edge cuts it. */
async function heldRequest(port: number, token: string): Promise<void> {
  const socket = tcpConnect(port, '127.0.0.1');
  socket.on('error', () => {});
  cleanups.push(() => socket.destroy());
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    `POST /v1/services/sensor/reload HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"entity_id":`,
  );
  await sleep(100);
}

function logLines(p: EdgeProcess): { level: string; msg: string }[] {
  return p
    .out()
    .stderr.split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

describe('edge process: shutdown keeps what was acknowledged', () => {
  it(
    'exits 0 after more SIGTERM/SIGINTs during a slow stop, with every QoS 1-acknowledged value on disk',
    async () => {
      const dir = dataDir();
      const token = localToken(dir);
      const cloud = await silentCloud();
      const edge = startEdgeProcess([
        '--port',
        '0',
        '--mqtt-port',
        '0',
        '--data-dir',
        dir,
        '--cloud-url',
        cloud.url,
        '--token',
        'shp_edge_test',
      ]);
      const ports = await edge.ready;
      await cloud.upgraded;
      const client = await device(ports, token);
      const sensors = await announce(client, 4, ports, token);
      const traffic = load(client, sensors.length);
      await waitFor(() => traffic.acks.every((a) => a.length >= 20), 20_000, 'MQTT load');
      // stop is slow now: a tunnel peer that never closes, a request that never ends
      await heldRequest(ports.http, token);

      edge.child.kill('SIGTERM');
      await sleep(150);
      edge.child.kill('SIGTERM');
      await sleep(150);
      edge.child.kill('SIGINT');
      expect(await edge.exited).toBe(0);
      await traffic.ended;
      const ignored = logLines(edge).filter((l) => /while stopping: ignored/.test(l.msg));
      expect(ignored.map((l) => l.msg.split(' ')[0])).toEqual(['SIGTERM', 'SIGINT']);
      // (the held request, cut after its 1 s, is logged as aborted: not a stop failure)
      expect(logLines(edge).filter((l) => l.level === 'error' && /stop|commit/.test(l.msg))).toEqual([]);

      const again = startEdgeProcess(['--port', '0', '--mqtt-port', '0', '--data-dir', dir]);
      const ports2 = await again.ready;
      for (const [i, id] of sensors.entries()) {
        const value = Number(await stateOf(ports2.http, token, id));
        // everything acknowledged is there (a value sent but not yet acknowledged may be too)
        expect(value, id).toBeGreaterThanOrEqual(traffic.lastAcked(i));
        expect(value, id).toBeLessThanOrEqual(traffic.sent[i]);
      }
      again.child.kill('SIGTERM');
      expect(await again.exited).toBe(0);
    },
    PROCESS_TEST_MS,
  );

  it(
    'exits 1 with one error line saying why when the final commit fails',
    async () => {
      const dir = dataDir();
      const token = localToken(dir);
      const edge = startEdgeProcess(['--port', '0', '--mqtt-port', '0', '--data-dir', dir]);
      const ports = await edge.ready;
      const client = await device(ports, token);
      const [sensor] = await announce(client, 1, ports, token);
      // the database starts refusing state writes (as a full or failing disk would)
      const db = new Database(path.join(dir, 'edge.db'));
      db.exec(`CREATE TRIGGER refuse_insert BEFORE INSERT ON states BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END;
             CREATE TRIGGER refuse_update BEFORE UPDATE ON states BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END;`);
      db.close();
      await client.publishAsync('load/0', '7', { qos: 1 });
      expect(await stateOf(ports.http, token, sensor)).toBe('7');

      edge.child.kill('SIGTERM');
      expect(await edge.exited).toBe(1);
      const errors = logLines(edge).filter((l) => l.level === 'error');
      expect(errors).toHaveLength(1);
      expect(errors[0].msg).toMatch(/could not commit 1 state to the database before stopping: disk full \(test\)/);
    },
    PROCESS_TEST_MS,
  );
});

/** One value from the edge's database file, through a connection of its own. */
function fromDisk(dir: string, sql: string, ...params: unknown[]): unknown {
  const db = new Database(path.join(dir, 'edge.db'));
  try {
    return db
      .prepare(sql)
      .pluck()
      .get(...params);
  } finally {
    db.close();
  }
}

describe('edge process: kill -9', () => {
  it(
    'loses only what was acknowledged within the write-behind window',
    async () => {
      const STATE_MS = 100;
      const RETAINED_MS = 200;
      // how late a write-behind timer may fire on a busy 2-core machine shared with other tests
      const SLACK_MS = 900;
      const dir = dataDir();
      const token = localToken(dir);
      const edge = startEdgeProcess([
        '--port',
        '0',
        '--mqtt-port',
        '0',
        '--data-dir',
        dir,
        '--state-flush-ms',
        String(STATE_MS),
        '--retained-flush-ms',
        String(RETAINED_MS),
      ]);
      const ports = await edge.ready;
      const client = await device(ports, token);
      const sensors = await announce(client, 4, ports, token);
      // sensor 0 publishes retained: its retained message is written behind too
      const traffic = load(client, sensors.length, (i) => i === 0);
      await waitFor(() => traffic.acks.every((a) => a.length >= 20), 20_000, 'MQTT load');
      await sleep(1000);
      const killedAt = Date.now();
      edge.child.kill('SIGKILL');
      expect(await edge.exited).toBeNull();
      await traffic.ended;

      const retainedOnDisk = Number(
        (fromDisk(dir, 'SELECT payload FROM mqtt_retained WHERE topic = ?', 'load/0') as Buffer).toString(),
      );
      expect(retainedOnDisk).toBeGreaterThanOrEqual(traffic.lastAcked(0, killedAt - RETAINED_MS - SLACK_MS));
      const again = startEdgeProcess(['--port', '0', '--mqtt-port', '0', '--data-dir', dir]);
      const ports2 = await again.ready;
      for (const [i, id] of sensors.entries()) {
        const value = Number(await stateOf(ports2.http, token, id));
        expect(value, id).toBeGreaterThanOrEqual(traffic.lastAcked(i, killedAt - STATE_MS - SLACK_MS));
        expect(value, id).toBeLessThanOrEqual(traffic.sent[i]);
      }
      again.child.kill('SIGTERM');
      expect(await again.exited).toBe(0);
    },
    PROCESS_TEST_MS,
  );

  it(
    'a device re-announcing after the crash does not roll its state back to the retained value the crash kept',
    async () => {
      const dir = dataDir();
      const token = localToken(dir);
      // states committed within 50 ms, retained messages only after 3 s: a crash in between keeps the newer state and the older retained message
      const edge = startEdgeProcess([
        '--port',
        '0',
        '--mqtt-port',
        '0',
        '--data-dir',
        dir,
        '--state-flush-ms',
        '50',
        '--retained-flush-ms',
        '3000',
      ]);
      const ports = await edge.ready;
      const client = await device(ports, token);
      const [sensor] = await announce(client, 1, ports, token);
      const retainedOnDisk = () =>
        (
          fromDisk(dir, 'SELECT payload FROM mqtt_retained WHERE topic = ?', 'load/0') as Buffer | undefined
        )?.toString();
      const stateOnDisk = () => fromDisk(dir, 'SELECT state FROM states WHERE entity_id = ?', sensor);
      await client.publishAsync('load/0', 'A', { qos: 1, retain: true });
      await waitFor(() => retainedOnDisk() === 'A', 10_000, 'retained A on disk');
      await client.publishAsync('load/0', 'B', { qos: 1, retain: true });
      await waitFor(() => stateOnDisk() === 'B', 10_000, 'state B on disk');
      expect(retainedOnDisk()).toBe('A');
      edge.child.kill('SIGKILL');
      expect(await edge.exited).toBeNull();
      client.end(true);

      const again = startEdgeProcess(['--port', '0', '--mqtt-port', '0', '--data-dir', dir]);
      const ports2 = await again.ready;
      expect(await stateOf(ports2.http, token, sensor)).toBe('B');
      // the same device comes back and announces its config again: the broker replays its retained A
      const back = await mqtt.connectAsync(`mqtt://127.0.0.1:${ports2.mqtt}`, { ...client.creds, reconnectPeriod: 0 });
      cleanups.push(() => back.end(true));
      await back.publishAsync(
        'homeassistant/sensor/load_0/config',
        JSON.stringify({ name: 'Load 0', uniq_id: 'load-0', stat_t: 'load/0' }),
        { qos: 1, retain: true },
      );
      await sleep(300);
      expect(await stateOf(ports2.http, token, sensor)).toBe('B');
      again.child.kill('SIGTERM');
      expect(await again.exited).toBe(0);
    },
    PROCESS_TEST_MS,
  );
});
