import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

export const REPO_ROOT = path.resolve(import.meta.dirname, '../../..');
/** The real Node 24 binary of the root devDependency (node_modules/.bin/node is a shell shim that would swallow signals). */
export const NODE = path.join(REPO_ROOT, 'node_modules/node/bin/node');

export interface Spawned {
  child: ChildProcess;
  ready: Record<string, number>;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** Spawns a product process and waits for its `ready {json}` line. */
export function spawnReady(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 15_000,
): Promise<Spawned> {
  const child = spawn(NODE, [path.join(REPO_ROOT, script), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => {
    err += d;
  });
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no ready line within ${timeoutMs} ms: ${err}`));
    }, timeoutMs);
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = /^ready (\{.*\})$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve({ child, ready: JSON.parse(m[1]), stderr: () => err, exit });
      }
    });
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before ready: ${err}`));
    });
  });
}
