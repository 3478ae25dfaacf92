import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import mqtt, { type MqttClient } from 'mqtt';
import { NODE, REPO_ROOT, spawnReady, type Spawned } from '@smarthome/cloud/testing/process';
import { EdgeDatabase } from '@smarthome/edge/db/database';
import { until } from './support.ts';

/**
 * End to end with real processes (the real Node 24 binary, signals included): `pnpm start`,
 * cloud and edge as separate processes over the tunnel, and a cloud replica. Port 0 everywhere.
 */
const DESK = 'light.desk_lamp_desk';
const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<unknown> | unknown> = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) {
    try {
      await c();
    } catch {
      /* best effort */
    }
  }
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
  }
});

function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'process-e2e-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function ready(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Spawned> {
  const p = await spawnReady(script, args, env, 20_000);
  children.push(p.child);
  return p;
}

/** Like spawnReady, but keeps every stdout line (pnpm start prints its token before the ready line). */
function start(dataDir: string): Promise<{
  child: ChildProcess;
  ready: Record<string, number>;
  stdout: string[];
  exit: Promise<number | null>;
  stderr: () => string;
}> {
  const child = spawn(
    NODE,
    [
      path.join(REPO_ROOT, 'tools/src/start.ts'),
      '--port',
      '0',
      '--edge-port',
      '0',
      '--mqtt-port',
      '0',
      '--data-dir',
      dataDir,
      '--devices',
      '4',
    ],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d) => {
    err += d;
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stdout: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`pnpm start: no ready line: ${err}`)), 25_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      stdout.push(line);
      const m = /^ready (\{.*\})$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve({ child, ready: JSON.parse(m[1]), stdout, exit, stderr: () => err });
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`pnpm start exited ${code}: ${err}`));
    });
  });
}

async function api(
  base: string,
  method: string,
  urlPath: string,
  opts: { token?: string; body?: unknown } = {},
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(new URL(urlPath, base), {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** `pnpm edge token create`: a local API token, printed on stdout. */
function localToken(dataDir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      NODE,
      [path.join(REPO_ROOT, 'edge/src/main.ts'), 'token', 'create', '--name', 'test', '--data-dir', dataDir],
      (err, stdout) => {
        if (err) reject(err);
        else resolve(stdout.trim());
      },
    );
  });
}

async function user(cloudUrl: string): Promise<string> {
  const email = `u${Math.random().toString(36).slice(2)}@example.com`;
  const reg = await api(cloudUrl, 'POST', '/v1/auth/register', { body: { email, password: 'correct horse battery' } });
  expect(reg.status).toBe(201);
  return reg.body.access_token;
}

async function mqttClient(port: number, username: string, password: string): Promise<MqttClient> {
  const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { username, password, reconnectPeriod: 0 });
  cleanups.push(() => client.endAsync(true));
  return client;
}

const stateList = (states: { entity_id: string; state: string | null }[]) =>
  states.map((s) => `${s.entity_id}=${s.state}`).sort();

describe('real processes', () => {
  it('pnpm start: ready line, a working token with demo and simulator entities, SIGTERM exits 0, a second start reuses the data', async () => {
    const data = tmp();
    const first = await start(data);
    expect(Object.keys(first.ready).sort()).toEqual(['edge', 'http', 'mqtt']);
    const cloudUrl = `http://127.0.0.1:${first.ready.http}`;
    const printed = first.stdout.join('\n');
    const token = /export TOKEN=(\S+)/.exec(printed)?.[1] as string;
    expect(token).toMatch(/^shp_pat_/);
    expect(printed).toContain(`${cloudUrl}/docs`);
    expect(printed).toContain(`http://127.0.0.1:${first.ready.edge}`);
    expect(printed).toContain(`mqtt://127.0.0.1:${first.ready.mqtt}`);
    expect((fs.statSync(path.join(data, 'start.json')).mode & 0o777).toString(8)).toBe('600');

    // 6 demo entities + the simulator's (4 devices: light, climate sensor ×2, motion, plug ×2)
    const settled = async () => {
      let last = -1;
      return until(
        async () => {
          const res = await api(cloudUrl, 'GET', '/v1/entities/states', { token });
          const states = res.body as { entity_id: string; platform: string }[];
          const ok =
            res.status === 200 &&
            states.some((s) => s.platform === 'demo') &&
            states.filter((s) => s.platform === 'mqtt').length >= 4 &&
            states.length === last;
          last = states.length;
          if (ok) return states;
          await new Promise((r) => setTimeout(r, 300));
          return null;
        },
        15_000,
        'demo and simulator entities in the cloud',
      );
    };
    const states1 = await settled();
    const edges1 = await api(cloudUrl, 'GET', '/v1/edges', { token });
    expect(edges1.body).toHaveLength(1);
    expect(edges1.body[0].status).toBe('online');

    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);

    const second = await start(data);
    const cloudUrl2 = `http://127.0.0.1:${second.ready.http}`;
    const token2 = /export TOKEN=(\S+)/.exec(second.stdout.join('\n'))?.[1];
    expect(token2).toBe(token);
    expect(second.stdout.join('\n')).toContain('already set up');
    const edges2 = await api(cloudUrl2, 'GET', '/v1/edges', { token });
    expect(edges2.body.map((e: { id: number }) => e.id)).toEqual([edges1.body[0].id]);
    const states2 = await until(
      async () => {
        const res = await api(cloudUrl2, 'GET', '/v1/entities/states', { token });
        return res.status === 200 && res.body.length >= states1.length ? (res.body as unknown[]) : null;
      },
      15_000,
      'entities after restart',
    );
    await new Promise((r) => setTimeout(r, 500));
    const again = await api(cloudUrl2, 'GET', '/v1/entities/states', { token });
    expect(again.body.length).toBe(states1.length);
    expect(states2.length).toBe(states1.length);
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe(0);
  }, 60_000);

  it('pnpm start: more signals while stopping are ignored; a failed final commit of the edge exits 1 and says why', async () => {
    const data = tmp();
    const p = await start(data);
    const edgeUrl = `http://127.0.0.1:${p.ready.edge}`;
    const edgeToken = await localToken(path.join(data, 'edge'));
    const creds = await api(edgeUrl, 'POST', '/v1/mqtt/credentials', { token: edgeToken, body: { role: 'device' } });
    const device = await mqttClient(p.ready.mqtt, creds.body.username, creds.body.password);
    await device.publishAsync(
      'homeassistant/sensor/probe/config',
      JSON.stringify({ name: 'Probe', uniq_id: 'probe', stat_t: 'probe/state' }),
      { qos: 1, retain: true },
    );
    await until(
      async () => (await api(edgeUrl, 'GET', '/v1/entities/states/sensor.probe', { token: edgeToken })).status === 200,
      10_000,
      'the probe entity',
    );
    // the edge's database starts refusing state writes (as a full or failing disk would)
    const db = new EdgeDatabase(path.join(data, 'edge'));
    db.open();
    db.sqlite
      .exec(`CREATE TRIGGER refuse_insert BEFORE INSERT ON states BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END;
                    CREATE TRIGGER refuse_update BEFORE UPDATE ON states BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END;`);
    db.close();
    await device.publishAsync('probe/state', '1', { qos: 1 });

    // as a terminal's Ctrl-C after a supervisor's SIGTERM: the second arrives while the first stop runs
    p.child.kill('SIGTERM');
    p.child.kill('SIGINT');
    expect(await p.exit).toBe(1);
    // (pending signals reach the process lowest number first: SIGINT, then SIGTERM)
    expect(p.stderr()).toMatch(/(SIGINT|SIGTERM) while stopping: ignored/);
    expect(p.stderr()).toMatch(
      /error: stopping the edge failed: could not commit \d+ states? to the database before stopping: disk full \(test\)/,
    );
  }, 90_000);

  it('cloud and edge processes: pair, discovery over MQTT, service call through the cloud, SIGKILL → offline and 503, restart → consistent mirror', async () => {
    const data = tmp();
    const cloud = await ready('cloud/src/main.ts', ['--port', '0', '--data-dir', path.join(data, 'cloud')], {
      HOST: '127.0.0.1',
    });
    const cloudUrl = `http://127.0.0.1:${cloud.ready.http}`;
    const owner = await user(cloudUrl);
    const created = await api(cloudUrl, 'POST', '/v1/edges', { token: owner, body: { name: 'Home' } });
    expect(created.status).toBe(201);
    const edgeId = created.body.edge.id as number;
    const edgeData = path.join(data, 'edge');
    const local = await localToken(edgeData);
    const edgeArgs = [
      '--port',
      '0',
      '--mqtt-port',
      '0',
      '--data-dir',
      edgeData,
      '--cloud-url',
      cloudUrl,
      '--token',
      created.body.token,
    ];
    const edge = await ready('edge/src/main.ts', edgeArgs);
    const status = async () =>
      (await api(cloudUrl, 'GET', `/v1/edges/${edgeId}`, { token: owner })).body.status as string;
    await until(async () => (await status()) === 'online', 10_000, 'online');

    // MQTT credentials through the cloud (relayed to the edge), then HA discovery.
    const creds = await api(cloudUrl, 'POST', `/v1/edges/${edgeId}/mqtt-credentials`, {
      token: owner,
      body: { role: 'device' },
    });
    expect(creds.status).toBe(201);
    const device = await mqttClient(edge.ready.mqtt, creds.body.username, creds.body.password);
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
    await until(
      async () => (await api(cloudUrl, 'GET', `/v1/entities/states/${DESK}`, { token: owner })).body?.state === 'off',
      10_000,
      'mirrored entity',
    );

    const commands: string[] = [];
    await device.subscribeAsync('desk/set');
    device.on('message', (topic, payload) => commands.push(`${topic} ${payload}`));
    const call = await api(cloudUrl, 'POST', '/v1/services/light/turn_on', { token: owner, body: { entity_id: DESK } });
    expect(call.status).toBe(200);
    await until(async () => commands.includes('desk/set ON'), 5_000, 'MQTT command');

    // SIGKILL: no goodbye; the cloud must notice by itself.
    const killedAt = Date.now();
    edge.child.kill('SIGKILL');
    await edge.exit;
    await until(async () => (await status()) === 'offline', 15_000, 'offline within 15 s');
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    const offline = await api(cloudUrl, 'POST', '/v1/services/light/turn_on', {
      token: owner,
      body: { entity_id: DESK },
    });
    expect(offline.status).toBe(503);
    expect(offline.body).toEqual({ error: 'edge_offline' });
    expect((await api(cloudUrl, 'GET', `/v1/entities/states/${DESK}`, { token: owner })).status).toBe(200);

    const edge2 = await ready('edge/src/main.ts', edgeArgs);
    await until(async () => (await status()) === 'online', 10_000, 'online again');
    const device2 = await mqttClient(edge2.ready.mqtt, creds.body.username, creds.body.password);
    await device2.publishAsync('desk/state', 'ON', { qos: 1 });
    const edgeUrl = `http://127.0.0.1:${edge2.ready.http}`;
    await until(
      async () => {
        const mirrored = await api(cloudUrl, 'GET', '/v1/entities/states', { token: owner });
        const own = await api(edgeUrl, 'GET', '/v1/entities/states', { token: local });
        expect(own.status).toBe(200);
        const a = stateList(mirrored.body);
        const b = stateList(own.body);
        return a.includes(`${DESK}=on`) && JSON.stringify(a) === JSON.stringify(b);
      },
      10_000,
      'mirror equals the edge',
    );
  }, 60_000);

  it('cloud replica: registers with FLEET_TOKEN, appears online in the fleet, keeps its id across restarts, installs its MQTT user', async () => {
    const data = tmp();
    const fleet = { FLEET_TOKEN: 'fleet-secret-for-tests-0123456789' };
    const cloud = await ready('cloud/src/main.ts', ['--port', '0', '--data-dir', path.join(data, 'cloud')], {
      ...fleet,
      HOST: '127.0.0.1',
    });
    const cloudUrl = `http://127.0.0.1:${cloud.ready.http}`;
    const anyone = await user(cloudUrl);
    const edgeData = path.join(data, 'replica');
    const local = await localToken(edgeData);
    const args = [
      '--cloud-replica',
      '--cloud-url',
      cloudUrl,
      '--port',
      '0',
      '--mqtt-port',
      '0',
      '--data-dir',
      edgeData,
    ];

    const replica = await ready('edge/src/main.ts', args, fleet);
    const listed = await until(
      async () => {
        const res = await api(cloudUrl, 'GET', '/v1/edges/cloud-fleet', { token: anyone });
        return res.status === 200 && res.body.length === 1 && res.body[0].status === 'online' ? res.body[0] : null;
      },
      10_000,
      'replica online in the fleet',
    );
    expect(listed.hostname).toBe(os.hostname());

    const users = await api(`http://127.0.0.1:${replica.ready.http}`, 'GET', '/v1/mqtt/credentials', { token: local });
    expect(users.status).toBe(200);
    expect(users.body).toContainEqual(expect.objectContaining({ username: `edge-${listed.id}`, role: 'integration' }));

    replica.child.kill('SIGTERM');
    expect(await replica.exit).toBe(0);
    const again = await ready('edge/src/main.ts', args, fleet);
    const relisted = await until(
      async () => {
        const res = await api(cloudUrl, 'GET', '/v1/edges/cloud-fleet', { token: anyone });
        return res.status === 200 && res.body.length === 1 && res.body[0].status === 'online' ? res.body[0] : null;
      },
      10_000,
      'replica online again',
    );
    expect(relisted.id).toBe(listed.id);
    const users2 = await api(`http://127.0.0.1:${again.ready.http}`, 'GET', '/v1/mqtt/credentials', { token: local });
    expect(users2.body.filter((u: { username: string }) => u.username.startsWith('edge-'))).toHaveLength(1);
  }, 60_000);
});
