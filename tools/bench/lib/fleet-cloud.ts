import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';
import WebSocket from 'ws';
import { NODE } from '@smarthome/cloud/testing/process';
import { processCpuMs } from './proc-cpu.ts';

/**
 * The fleet bench's cloud replica: the bundle in a child process with an inspector (for a forced
 * GC), its RSS and CPU read from /proc.
 */
export class CloudProcess {
  child!: ChildProcess;
  port = 0;
  private inspector: string | null = null;
  private readonly bundle: string;
  private readonly args: string[];
  constructor(bundle: string, args: string[]) {
    this.bundle = bundle;
    this.args = args;
  }

  /** Starts and answers the ms from spawn to the ready line. */
  async start(port: number): Promise<number> {
    const started = performance.now();
    // FLEET_CLOUD_NODE_ARGS: extra Node flags for the replica, e.g. --cpu-prof --cpu-prof-dir=/tmp/prof
    const extra = (process.env.FLEET_CLOUD_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    // FLEET_CLOUD_ENV: variables for the replica only, e.g. GLIBC_TUNABLES=glibc.malloc.mmap_threshold=32768
    // (the edges' process and the bench keep theirs)
    const env = { ...process.env };
    for (const pair of (process.env.FLEET_CLOUD_ENV ?? '').split(/\s+/).filter(Boolean)) {
      const at = pair.indexOf('=');
      if (at > 0) env[pair.slice(0, at)] = pair.slice(at + 1);
    }
    this.child = spawn(NODE, ['--inspect=127.0.0.1:0', ...extra, this.bundle, '--port', String(port), ...this.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    // FLEET_CLOUD_LOG: the replica's output appended to this file (its log says why a tunnel failed)
    if (process.env.FLEET_CLOUD_LOG) {
      const out = fs.createWriteStream(process.env.FLEET_CLOUD_LOG, { flags: 'a' });
      this.child.stdout!.pipe(out);
      this.child.stderr!.pipe(out);
    }
    readline.createInterface({ input: this.child.stderr! }).on('line', (line) => {
      const m = /Debugger listening on (ws:\/\/\S+)/.exec(line);
      if (m) this.inspector = m[1];
    });
    this.port = await new Promise<number>((resolve, reject) => {
      readline.createInterface({ input: this.child.stdout! }).on('line', (line) => {
        const m = /^ready (\{.*\})$/.exec(line);
        if (m) resolve((JSON.parse(m[1]) as { http: number }).http);
      });
      this.child.once('exit', (code) => reject(new Error(`cloud exited ${code} before ready`)));
    });
    return performance.now() - started;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** VmRSS, or VmHWM: the peak so far */
  rssMb(field = 'VmRSS'): number {
    return (
      Number(
        new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${this.child.pid}/status`, 'utf8'))?.[1] ?? NaN,
      ) / 1024
    );
  }

  /** user + system CPU ms so far */
  cpuMs(): number {
    return processCpuMs(this.child.pid!);
  }

  /** A full garbage collection in the cloud process, through the inspector protocol. */
  async collectGarbage(): Promise<void> {
    if (!this.inspector) return;
    const ws = new WebSocket(this.inspector);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    await new Promise<void>((resolve) => {
      ws.on('message', (d) => {
        if ((JSON.parse(d.toString()) as { id?: number }).id === 1) resolve();
      });
      ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' }));
    });
    ws.close();
  }

  async stop(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await exited;
  }
}
