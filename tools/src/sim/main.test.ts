import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createEdge, type Edge } from '@smarthome/edge/edge';
import { silentLogger } from '@smarthome/edge/log';
import { spawnReady, type Spawned } from '@smarthome/cloud/testing/process';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function edgeWithSimUser(): Promise<{ edge: Edge; url: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sim-main-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const edge = createEdge({ port: 0, mqttPort: 0, dataDir: dir, host: '127.0.0.1', logger: silentLogger });
  await edge.start();
  cleanups.push(() => edge.stop());
  const creds = await edge.createMqttCredentials({ username: 'sim' });
  return { edge, url: `mqtt://${creds.username}:${creds.password}@127.0.0.1:${edge.ports.mqtt}` };
}

async function simulator(url: string): Promise<Spawned> {
  const sim = await spawnReady(
    'tools/src/sim/main.ts',
    ['--mqtt', url, '--devices', '2', '--interval', '200'],
    {},
    60_000,
  );
  cleanups.push(() => {
    if (sim.child.exitCode === null && sim.child.signalCode === null) sim.child.kill('SIGKILL');
  });
  return sim;
}

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<string>((r) => setTimeout(() => r(`still running after ${ms} ms`), ms))]);

describe('pnpm sim process', () => {
  it('exits 0 on SIGTERM, marking its devices offline', async () => {
    const { edge, url } = await edgeWithSimUser();
    const sim = await simulator(url);
    const avail = 'sim/sim/status';
    await new Promise((r) => setTimeout(r, 300));
    sim.child.kill('SIGTERM');
    expect(await within(sim.exit, 10_000)).toBe(0);
    expect((await edge.broker.retained(avail))?.payload.toString()).toBe('offline');
  }, 90_000);

  it('exits 0 on SIGTERM while its broker is down', async () => {
    const { edge, url } = await edgeWithSimUser();
    const sim = await simulator(url);
    await edge.stop();
    await new Promise((r) => setTimeout(r, 300));
    sim.child.kill('SIGTERM');
    expect(await within(sim.exit, 10_000)).toBe(0);
  }, 90_000);
});
