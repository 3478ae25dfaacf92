import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { benchAccess, spawnEdge } from './edge-process.ts';
import { statCpuMs } from './proc-cpu.ts';

/**
 * An edge executable (`pnpm build:edge`) in its own process as an mqtt-ingest target: what the
 * in-process targets cannot show, the executable's own Node flags (SEA execArgv) and the glibc
 * setting it starts with. Its CPU is read from /proc: the main thread's and the process's
 * (the publishers run in the bench's process, so "process" is the edge alone here).
 */
export interface BinaryTarget {
  name: string;
  url: string;
  username: string;
  password: string;
  stop: () => Promise<void>;
  settle: () => Promise<void>;
  /** CPU used so far (µs): the edge's main thread and its whole process */
  cpu: () => { main: number; process: number };
}

export async function edgeBinaryTarget(
  bin: string,
  entities: number,
  topicFor: (i: number) => string,
  log: (m: string) => void,
  name = `edge binary ${bin}`,
): Promise<BinaryTarget> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-edge-bin-'));
  const edge = await spawnEdge(bin, dir, { args: ['--history-days', '0'] });
  const stop = async () => {
    await edge.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const { base, auth, creds } = await benchAccess(bin, dir, edge);
    const url = `mqtt://127.0.0.1:${edge.ports.mqtt}`;
    const c = await mqtt.connectAsync(url, { ...creds, reconnectPeriod: 0 });
    // the same sensors as the in-process edge (mqtt-ingest.ts edgeTarget)
    await Promise.all(
      Array.from({ length: entities }, (_, i) =>
        c.publishAsync(
          `homeassistant/sensor/bench/s${i}/config`,
          JSON.stringify({
            name: `Bench ${i}`,
            uniq_id: `bench-${i}`,
            stat_t: topicFor(i),
            val_tpl: '{{ value_json.value }}',
            unit_of_meas: 'W',
            json_attr_t: topicFor(i),
          }),
          { qos: 1, retain: true },
        ),
      ),
    );
    await c.endAsync();
    for (;;) {
      const states = (await (await fetch(`${base}/v1/entities/states`, { headers: auth })).json()) as unknown[];
      if (states.length >= entities) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    log(`${name}: ${entities} sensor entities discovered`);
    const pid = edge.pid;
    return {
      name,
      url,
      ...creds,
      stop,
      // the states' write-behind (250 ms) happens after the last acknowledgement: not waited for,
      // there is no flush to call from outside
      settle: async () => {},
      cpu: () => ({
        main: statCpuMs(`/proc/${pid}/task/${pid}/stat`) * 1000,
        process: statCpuMs(`/proc/${pid}/stat`) * 1000,
      }),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
