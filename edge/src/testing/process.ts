import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Test support (not a test file): the edge as a real process (`edge/src/main.ts`), signals included. */

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
// node_modules/.bin/node is a shell wrapper that does not exec (signals would stop the
// wrapper, not the edge): spawn the Node 24 binary it wraps.
const REAL_NODE = path.join(REPO_ROOT, 'node_modules/node/bin/node');
export const NODE = existsSync(REAL_NODE) ? REAL_NODE : process.execPath;
export const MAIN = path.join(REPO_ROOT, 'edge/src/main.ts');

export interface EdgeProcess {
  child: ChildProcessWithoutNullStreams;
  /** the ports of the `ready` line */
  ready: Promise<{ http: number; mqtt: number }>;
  /** the exit code (null when a signal ended it) */
  exited: Promise<number | null>;
  out(): { stdout: string; stderr: string };
}

const children: ChildProcessWithoutNullStreams[] = [];

/** Starts `edge/src/main.ts` with `args`; EDGE_PORT, MQTT_PORT and DATA_DIR are cleared unless `env` sets them. */
export function startEdgeProcess(args: string[], env: NodeJS.ProcessEnv = {}): EdgeProcess {
  const child = spawn(NODE, [MAIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, EDGE_PORT: '', MQTT_PORT: '', DATA_DIR: '', ...env },
  });
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
  const ready = new Promise<{ http: number; mqtt: number }>((resolve, reject) => {
    const check = () => {
      const m = /^ready (\{.*\})$/m.exec(stdout);
      if (m) resolve(JSON.parse(m[1]));
    };
    child.stdout.on('data', check);
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  ready.catch(() => {});
  return { child, ready, exited, out: () => ({ stdout, stderr }) };
}

/** For afterEach: SIGKILLs every edge process still running. */
export function killEdgeProcesses(): void {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
