import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { spawnReady } from '@smarthome/cloud/testing/process';
import { eventLatencyMs, pct, pool, sleep } from './fleet-http.ts';
import { SimulatedFleet } from './fleet-processes.ts';
import { processCpuMs } from './proc-cpu.ts';

export interface BareResult {
  /** the bare relay's CPU per 1,000 deltas (ms) */
  cpuPer1000: number;
  eventP50: number;
  eventP99: number;
  /** the bare relay's longest event-loop delay in the steady state (ms) */
  loopMs: number;
}

/**
 * The fleet's steady state against the bare relay (fleet-bare.ts) instead of the replica, in the
 * same run: the same simulated edges (`n`, `entities` each, a change every `everyMs`), one app
 * socket per 10 homes, the same warm-up and window. Its delta→event and CPU per delta are what
 * the machine and the harness give before any work of the replica's own.
 */
export async function bareRun(opts: {
  n: number;
  entities: number;
  perProcess: number;
  everyMs: number;
  windowMs: number;
}): Promise<BareResult> {
  const relay = await spawnReady('tools/bench/lib/fleet-bare.ts', []);
  const { child } = relay;
  const port = relay.ready.http!;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-bare-'));
  let fleet: SimulatedFleet | null = null;
  const apps: WebSocket[] = [];
  try {
    const url = `http://127.0.0.1:${port}`;
    const tokens = Array.from({ length: opts.n }, (_, i) => `bare-${i}`);
    fleet = new SimulatedFleet(dir, { cloudUrl: url, tokens, entities: opts.entities, perProcess: opts.perProcess });
    await fleet.start();
    const end = Date.now() + 600_000;
    while ((await fleet.stats()).synced < opts.n) {
      if (Date.now() > end) throw new Error(`the fleet did not sync with the bare relay: ${relay.stderr()}`);
      await sleep(100);
    }
    const latencies: number[] = [];
    let measuring = false;
    await pool(
      Array.from({ length: Math.ceil(opts.n / 10) }, (_, i) => i),
      32,
      (owner) =>
        new Promise<void>((resolve, reject) => {
          const ws = new WebSocket(`ws://127.0.0.1:${port}/app?owner=${owner}`);
          apps.push(ws);
          ws.once('open', () => resolve());
          ws.once('error', reject);
          ws.on('message', (raw) => {
            if (!measuring) return;
            const ms = eventLatencyMs(JSON.parse(raw.toString()));
            if (ms !== null) latencies.push(ms);
          });
        }),
    );
    fleet.send({ cmd: 'deltas', everyMs: opts.everyMs });
    await sleep(5000);
    const loopNow = async () => ((await (await fetch(`${url}/loop`)).json()) as { maxMs: number }).maxMs;
    await loopNow();
    measuring = true;
    const before = { cpu: processCpuMs(child.pid!), deltas: (await fleet.stats()).deltas };
    await sleep(opts.windowMs);
    const after = { cpu: processCpuMs(child.pid!), deltas: (await fleet.stats()).deltas };
    measuring = false;
    const loopMs = await loopNow();
    fleet.send({ cmd: 'quiet' });
    return {
      cpuPer1000: ((after.cpu - before.cpu) / (after.deltas - before.deltas)) * 1000,
      eventP50: pct(latencies, 0.5),
      eventP99: pct(latencies, 0.99),
      loopMs,
    };
  } finally {
    for (const ws of apps) ws.terminate();
    await fleet?.stop();
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await relay.exit;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
