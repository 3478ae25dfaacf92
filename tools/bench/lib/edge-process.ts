import { spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import readline from 'node:readline';

/** An edge executable started by a bench, once it printed its ready line. */
export interface EdgeProcess {
  ports: { http: number; mqtt: number };
  /** from spawn to the ready line */
  readyMs: number;
  pid: number;
  /** SIGTERM, and the exit awaited */
  stop(): Promise<void>;
}

/**
 * Starts an edge executable on `data` with ephemeral ports, in an almost empty environment like a
 * systemd unit (no NODE_OPTIONS from the bench's own shell), and waits for its ready line (60 s).
 */
export async function spawnEdge(
  bin: string,
  data: string,
  options: { args?: string[]; env?: Record<string, string> } = {},
): Promise<EdgeProcess> {
  const started = performance.now();
  const child = spawn(bin, ['--port', '0', '--mqtt-port', '0', '--data-dir', data, ...(options.args ?? [])], {
    env: { TMPDIR: os.tmpdir(), ...options.env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const ready = await new Promise<{ http: number; mqtt: number; ms: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${bin}: no ready line within 60 s`)), 60_000);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('ready ')) return;
      clearTimeout(timer);
      resolve({ ...(JSON.parse(line.slice(6)) as { http: number; mqtt: number }), ms: performance.now() - started });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${bin} exited ${code} before ready`));
    });
  });
  return {
    ports: { http: ready.http, mqtt: ready.mqtt },
    readyMs: ready.ms,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * A local API token (`<bin> token create`) and MQTT credentials of a new device user from the
 * running edge's API: what a bench needs to publish discovery configs and read states.
 */
export async function benchAccess(
  bin: string,
  data: string,
  edge: EdgeProcess,
): Promise<{ base: string; auth: { authorization: string }; creds: { username: string; password: string } }> {
  const created = spawnSync(bin, ['token', 'create', '--name', 'bench', '--data-dir', data], {
    encoding: 'utf8',
    env: { TMPDIR: os.tmpdir() },
  });
  if (created.status !== 0) throw new Error(`token create failed: ${created.stderr}`);
  const auth = { authorization: `Bearer ${created.stdout.trim()}` };
  const base = `http://127.0.0.1:${edge.ports.http}`;
  const res = await fetch(`${base}/v1/mqtt/credentials`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: '{}',
  });
  return { base, auth, creds: (await res.json()) as { username: string; password: string } };
}
