import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const NODE24 = path.join(ROOT, 'node_modules/node/bin/node');
const BUILD = path.join(ROOT, 'tools/src/build-edge/build.ts');
const NAME = 'smarthome-edge-linux-x64';

const canRun = process.platform === 'linux' && process.arch === 'x64';

let tmp = '';
let built = '';
const children: ChildProcess[] = [];

/** Always builds (about 2-10 s), into the test's own folder: never stale, never racing dist/. */
beforeAll(async () => {
  if (!canRun) return;
  tmp = mkdtempSync(path.join(os.tmpdir(), 'edge-binary-test-'));
  const out = path.join(tmp, 'build');
  const child = spawn(NODE24, [BUILD, '--arch', 'x64', '--out', out, '--archive', 'off'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (d) => {
    log += d;
  });
  child.stderr.on('data', (d) => {
    log += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`pnpm build:edge failed (${code}):\n${log}`);
  console.log(log.trim());
  built = path.join(out, NAME);
}, 120_000);

afterAll(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Runs the executable from `dir` with an almost empty environment: no PATH, no NODE_*, only TMPDIR. */
function start(bin: string, dir: string, args: string[], env: Record<string, string>) {
  const started = performance.now();
  const child = spawn(bin, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = new Promise<{ http: number; mqtt: number; ms: number }>((resolve, reject) => {
    child.stdout.on('data', () => {
      const m = /^ready (\{.*\})$/m.exec(stdout);
      if (m) resolve({ ...(JSON.parse(m[1]) as { http: number; mqtt: number }), ms: performance.now() - started });
    });
    child.on('exit', (code) => reject(new Error(`exited ${code} before ready:\n${stdout}${stderr}`)));
  });
  return { child, ready, exited, out: () => ({ stdout, stderr }) };
}

async function poll<T>(fn: () => Promise<T | undefined>, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!canRun)('one-file edge executable (linux-x64)', () => {
  it('runs alone in an empty folder: ready line, token, MQTT discovery, state read, clean SIGTERM, state kept', async () => {
    const dir = path.join(tmp, 'run');
    const tmpdir = path.join(tmp, 'tmpdir');
    mkdirSync(dir);
    mkdirSync(tmpdir);
    const bin = path.join(dir, 'smarthome-edge');
    copyFileSync(built, bin);
    chmodSync(bin, 0o755);
    const data = path.join(dir, 'data');
    const env = { TMPDIR: tmpdir };
    const args = ['--port', '0', '--mqtt-port', '0', '--data-dir', data];

    const edge = start(bin, dir, args, env);
    const ports = await edge.ready;
    console.log(`time to ready: ${Math.round(ports.ms)} ms`);
    expect(edge.out().stdout).toBe(`ready {"http":${ports.http},"mqtt":${ports.mqtt}}\n`);
    expect(edge.out().stderr).not.toMatch(/ExperimentalWarning|single executable/i);
    const base = `http://127.0.0.1:${ports.http}`;
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    // the SQLite addon was loaded from a private temp dir that is gone (the recorder's writer
    // thread loads its own copy the same way, while the edge goes on starting)
    await poll(async () => (readdirSync(tmpdir).length === 0 ? true : undefined));
    // the portal comes from the executable itself (no web/dist next to it): the page and its hashed script
    const page = await fetch(`${base}/`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('<meta name="smarthome-portal" content="edge">');
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    const js = await fetch(`${base}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await js.text()).length).toBeGreaterThan(10_000);

    // the executable's own CLI, while the edge runs
    const created = spawnSync(bin, ['token', 'create', '--name', 'binary-test', '--data-dir', data], {
      cwd: dir,
      env,
      encoding: 'utf8',
    });
    expect(created.status, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^sht_[A-Za-z0-9_-]{43}$/);
    const auth = { authorization: `Bearer ${token}` };

    const credsRes = await fetch(`${base}/v1/mqtt/credentials`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(credsRes.status).toBe(201);
    const creds = (await credsRes.json()) as { username: string; password: string };

    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${ports.mqtt}`, {
      ...creds,
      reconnectPeriod: 0,
      clientId: 'binary-test',
    });
    try {
      await client.publishAsync(
        'homeassistant/sensor/binary_test/temperature/config',
        JSON.stringify({
          name: 'Temperature',
          unique_id: 'binary_test_temperature',
          default_entity_id: 'sensor.binary_test_temperature',
          state_topic: 'binary_test/temperature',
          device_class: 'temperature',
          unit_of_measurement: '°C',
          device: { identifiers: ['binary_test'], name: 'Binary test probe' },
        }),
        { qos: 1, retain: true },
      );
      const url = `${base}/v1/entities/states/sensor.binary_test_temperature`;
      await poll(async () => ((await fetch(url, { headers: auth })).status === 200 ? true : undefined));
      await client.publishAsync('binary_test/temperature', '21.5', { qos: 1 });
      const state = await poll(async () => {
        const s = (await (await fetch(url, { headers: auth })).json()) as {
          state: string;
          attributes: Record<string, unknown>;
        };
        return s.state === '21.5' ? s : undefined;
      });
      expect(state.attributes).toMatchObject({ unit_of_measurement: '°C', device_class: 'temperature' });
      // the recorder's writer thread runs inside the executable too (its code is one of the assets)
      const since = new Date(Date.now() - 3_600_000).toISOString();
      const history = (await (
        await fetch(
          `${base}/api/history/period/${since}?filter_entity_id=sensor.binary_test_temperature&minimal_response`,
          { headers: auth },
        )
      ).json()) as { state: string }[][];
      expect(history[0].map((s) => s.state)).toContain('21.5');
    } finally {
      await client.endAsync();
    }

    const stopAt = performance.now();
    edge.child.kill('SIGTERM');
    expect(await edge.exited).toBe(0);
    console.log(`stopped in ${Math.round(performance.now() - stopAt)} ms`);

    // the state is on disk: a second start reads it back
    const again = start(bin, dir, args, env);
    const ports2 = await again.ready;
    const kept = (await (
      await fetch(`http://127.0.0.1:${ports2.http}/v1/entities/states/sensor.binary_test_temperature`, {
        headers: auth,
      })
    ).json()) as { state: string };
    expect(kept.state).toBe('21.5');
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);

    // nothing was written next to the executable except the data dir, nothing left in TMPDIR
    expect(readdirSync(dir).sort()).toEqual(['data', 'smarthome-edge']);
    expect(readdirSync(tmpdir)).toEqual([]);
  }, 60_000);
});
