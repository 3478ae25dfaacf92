import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { tempDir } from './test-helpers.ts';
import { killEdgeProcesses, MAIN, NODE, startEdgeProcess as startMain } from './test-process.ts';

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
    const tmp = tempDir(); tmps.push(tmp);
    const p = startMain(['--port', '0', '--mqtt-port', '0', '--data-dir', tmp.dir, '--cloud-url', 'https://cloud.example', '--token', 't']);
    const ports = await p.ready;
    expect(ports.http).toBeGreaterThan(0);
    expect(ports.mqtt).toBeGreaterThan(0);
    expect(p.out().stdout).toBe(`ready {"http":${ports.http},"mqtt":${ports.mqtt}}\n`);
    const health = await fetch(`http://127.0.0.1:${ports.http}/healthz`);
    expect(await health.json() as any).toEqual({ status: 'ok' });

    // a token created by the CLI while the edge runs works at once
    const created = spawnSync(NODE, [MAIN, 'token', 'create', '--name', 'ci', '--data-dir', tmp.dir], { encoding: 'utf8' });
    expect(created.status).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^sht_[A-Za-z0-9_-]{43}$/);
    expect((await fetch(`http://127.0.0.1:${ports.http}/v1/devices`)).status).toBe(401);
    const creds = await (await fetch(`http://127.0.0.1:${ports.http}/v1/mqtt/credentials`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' })).json() as any;

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
    const state = await (await fetch(`http://127.0.0.1:${ports2.http}/v1/entities/states/sensor.t`, { headers: { authorization: `Bearer ${token}` } })).json() as any;
    expect(state.state).toBe('42');
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
  });

  it('takes ports from the environment; flags win over env', async () => {
    const tmp = tempDir(); tmps.push(tmp);
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
    const tmp = tempDir(); tmps.push(tmp);
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
