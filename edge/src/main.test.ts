import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { LocalTokenStore } from './auth/tokens.ts';
import { EdgeDatabase } from './db/database.ts';
import type { MqttOwnerAction } from './cli.ts';
import { runMqttOwnerCommand } from './mqtt/owner-cli.ts';
import { granted, tempDir } from './testing/edge.ts';
import { killEdgeProcesses, MAIN, NODE, REPO_ROOT, startEdgeProcess as startMain } from './testing/process.ts';

const tmps: ReturnType<typeof tempDir>[] = [];
afterEach(() => {
  killEdgeProcesses();
  for (const t of tmps.splice(0)) t.cleanup();
});

async function occupy(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  return { server, port: (server.address() as { port: number }).port };
}

describe('edge process (main.ts)', () => {
  it('prints one ready line with both ports, serves, and exits 0 on SIGTERM with state flushed', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const p = startMain([
      '--port',
      '0',
      '--mqtt-port',
      '0',
      '--data-dir',
      tmp.dir,
      '--cloud-url',
      'https://cloud.example',
      '--token',
      't',
    ]);
    const ports = await p.ready;
    expect(ports.http).toBeGreaterThan(0);
    expect(ports.mqtt).toBeGreaterThan(0);
    expect(p.out().stdout).toBe(`ready {"http":${ports.http},"mqtt":${ports.mqtt}}\n`);
    const health = await fetch(`http://127.0.0.1:${ports.http}/healthz`);
    expect((await health.json()) as any).toEqual({ status: 'ok' });

    // a token created by the CLI while the edge runs works at once
    const created = spawnSync(NODE, [MAIN, 'token', 'create', '--name', 'ci', '--data-dir', tmp.dir], {
      encoding: 'utf8',
    });
    expect(created.status).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^sht_[A-Za-z0-9_-]{43}$/);
    expect((await fetch(`http://127.0.0.1:${ports.http}/v1/devices`)).status).toBe(401);
    const creds = (await (
      await fetch(`http://127.0.0.1:${ports.http}/v1/mqtt/credentials`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      })
    ).json()) as any;

    const c = await mqtt.connectAsync(`mqtt://127.0.0.1:${ports.mqtt}`, { ...creds, reconnectPeriod: 0 });
    await c.publishAsync('homeassistant/sensor/t/config', JSON.stringify({ name: 'T', stat_t: 't/state' }), { qos: 1 });
    await new Promise((r) => setTimeout(r, 100));
    await c.publishAsync('t/state', '42', { qos: 1 });
    // SIGTERM right after the PUBACK: the state must still be on disk afterwards
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    c.end(true);

    const again = startMain(['--port', '0', '--mqtt-port', '0', '--data-dir', tmp.dir]);
    const ports2 = await again.ready;
    const state = (await (
      await fetch(`http://127.0.0.1:${ports2.http}/v1/entities/states/sensor.t`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).json()) as any;
    expect(state.state).toBe('42');
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
  });

  it('takes ports from the environment; flags win over env', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const { server, port } = await occupy();
    try {
      // env names a taken MQTT port, the flag overrides it
      const p = startMain(['--mqtt-port', '0'], { EDGE_PORT: '0', MQTT_PORT: String(port), DATA_DIR: tmp.dir });
      const ports = await p.ready;
      expect(ports.mqtt).not.toBe(port);
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
    } finally {
      server.close();
    }
  });

  it('reports a taken port in one line on stderr and exits 1', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const { server, port } = await occupy();
    try {
      const mq = startMain(['--port', '0', '--mqtt-port', String(port), '--data-dir', tmp.dir]);
      expect(await mq.exited).toBe(1);
      expect(mq.out().stderr).toBe(`error: MQTT port ${port} is already in use (try --mqtt-port 0)\n`);
      expect(mq.out().stdout).toBe('');
      const http = startMain(['--port', String(port), '--mqtt-port', '0', '--data-dir', tmp.dir]);
      expect(await http.exited).toBe(1);
      expect(http.out().stderr).toBe(`error: HTTP port ${port} is already in use (try --port 0)\n`);
    } finally {
      server.close();
    }
  });

  it('rejects unknown flags with usage and exit code 2', async () => {
    const p = startMain(['--nope']);
    expect(await p.exited).toBe(2);
    expect(p.out().stderr).toMatch(/^error: .*nope/);
  });
});

describe('pnpm edge mqtt-owner (against the running edge)', () => {
  it('lists, reassigns and releases; the broker follows at once; errors are one line; no token is left behind', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const p = startMain(['--port', '0', '--mqtt-port', '0', '--data-dir', tmp.dir]);
    const ports = await p.ready;
    const database = new EdgeDatabase(tmp.dir);
    database.open();
    const token = new LocalTokenStore(database).create('ci').token;
    const api = async (method: string, path: string, body?: unknown) =>
      (
        await fetch(`http://127.0.0.1:${ports.http}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      ).json() as any;
    const dev1 = await api('POST', '/v1/mqtt/credentials', { username: 'dev1' });
    const dev2 = await api('POST', '/v1/mqtt/credentials', { username: 'dev2' });
    const url = `mqtt://127.0.0.1:${ports.mqtt}`;
    const c1 = await mqtt.connectAsync(url, { ...dev1, reconnectPeriod: 0 });
    await c1.publishAsync(
      'homeassistant/switch/plug1/config',
      JSON.stringify({
        name: 'Plug',
        uniq_id: 'plug1',
        cmd_t: 'cmnd/plug1/POWER',
        dev: { ids: 'plug-1', name: 'Plug' },
      }),
      { qos: 1, retain: true },
    );
    await c1.endAsync();
    let devices: { id: number }[] = [];
    for (let i = 0; i < 100 && devices.length === 0; i++) {
      devices = await api('GET', '/v1/devices');
      if (devices.length === 0) await new Promise((r) => setTimeout(r, 30));
    }
    const deviceId = devices[0].id;
    const row = (who: string) => `homeassistant/switch/plug1/config\t${who}\t${deviceId}\tswitch.plug\n`;

    // the command as a process (node startup is slow on a loaded machine: the rest runs in-process)
    const set = spawnSync(
      NODE,
      [MAIN, 'mqtt-owner', 'set', String(deviceId), 'dev2', '--port', String(ports.http), '--data-dir', tmp.dir],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    expect([set.status, set.stdout, set.stderr]).toEqual([
      0,
      row('dev2'),
      'homeassistant/switch/plug1/config now owned by dev2\n',
    ]);
    const newOwner = await mqtt.connectAsync(url, { ...dev2, reconnectPeriod: 0 });
    expect(await granted(newOwner, 'cmnd/plug1/POWER')).toBe(1);
    await newOwner.endAsync();
    const formerOwner = await mqtt.connectAsync(url, { ...dev1, reconnectPeriod: 0 });
    expect(await granted(formerOwner, 'cmnd/plug1/POWER')).toBe(128);
    await formerOwner.endAsync();

    const owner = async (action: MqttOwnerAction, dataDir = tmp.dir) => {
      const out = { status: 0, stdout: '', stderr: '' };
      out.status = await runMqttOwnerCommand(
        { dataDir, port: ports.http, action },
        {
          stdout: (t) => {
            out.stdout += t;
          },
          stderr: (t) => {
            out.stderr += t;
          },
        },
      );
      return out;
    };
    expect(await owner({ kind: 'list' })).toEqual({ status: 0, stdout: row('dev2'), stderr: '' });
    expect(
      await owner({ kind: 'set', target: { discovery_topic: 'homeassistant/switch/plug1/config' }, username: null }),
    ).toEqual({ status: 0, stdout: row('-'), stderr: 'homeassistant/switch/plug1/config released\n' });
    expect(await owner({ kind: 'set', target: { device_id: deviceId }, username: 'nobody' })).toEqual({
      status: 1,
      stdout: '',
      stderr: 'error: MQTT user nobody not found\n',
    });
    const elsewhere = tempDir();
    tmps.push(elsewhere);
    expect(await owner({ kind: 'list' }, elsewhere.dir)).toEqual({
      status: 1,
      stdout: '',
      stderr: `error: no edge database in ${elsewhere.dir} (pass the running edge's --data-dir)\n`,
    });
    const otherEdge = tempDir();
    tmps.push(otherEdge);
    const otherDatabase = new EdgeDatabase(otherEdge.dir);
    otherDatabase.open();
    otherDatabase.close();
    expect(await owner({ kind: 'list' }, otherEdge.dir)).toEqual({
      status: 1,
      stdout: '',
      stderr: `error: the edge on port ${ports.http} does not use the data dir ${otherEdge.dir} (pass its --data-dir)\n`,
    });

    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    expect(await owner({ kind: 'list' })).toEqual({
      status: 1,
      stdout: '',
      stderr: `error: no edge answers on 127.0.0.1:${ports.http} (start it, or pass its --port)\n`,
    });

    expect(new LocalTokenStore(database).list().map((t) => t.name)).toEqual(['ci']);
    database.close();
  }, 90_000);
});
