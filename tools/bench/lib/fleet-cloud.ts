import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';
import WebSocket from 'ws';
import { NODE } from '@smarthome/cloud/testing/process';
import { processCpuMs, runQueueWaitMs, threadCpu } from './proc-cpu.ts';

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

  /** CPU ms so far by thread name (threadCpu): the main thread's share of cpuMs, and the rest's */
  threadCpu(): Record<string, number> {
    return threadCpu(this.child.pid!);
  }

  /**
   * Opens a window; the function it returns answers the share of the window so far that the
   * replica's main thread spent runnable but waiting for a core (the other processes starving it).
   */
  starvationWindow(): () => number {
    const pid = this.child.pid!;
    const waited = runQueueWaitMs(pid);
    const from = performance.now();
    return () => (runQueueWaitMs(pid) - waited) / (performance.now() - from);
  }

  /** A full garbage collection in the cloud process, through the inspector protocol. */
  async collectGarbage(): Promise<void> {
    await this.inspect('HeapProfiler.collectGarbage');
  }

  /**
   * Starts (again) a record of the replica's event-loop delays (perf_hooks' monitorEventLoopDelay,
   * installed through the inspector: the product is not changed for it). Unlike a /healthz probe,
   * which on PostgreSQL also waits for a pool connection and the server, this is the loop alone.
   */
  async resetLoopDelay(): Promise<void> {
    await this.evaluate(
      `(globalThis.__benchLoop ??= (() => { const h = process.getBuiltinModule('node:perf_hooks').monitorEventLoopDelay({ resolution: 5 }); h.enable(); return h; })()).reset()`,
    );
  }

  /** The longest event-loop delay (ms) since resetLoopDelay; NaN without an inspector. */
  async maxLoopDelayMs(): Promise<number> {
    const v = await this.evaluate('globalThis.__benchLoop ? globalThis.__benchLoop.max / 1e6 : NaN');
    return typeof v === 'number' ? v : NaN;
  }

  private async evaluate(expression: string): Promise<unknown> {
    const result = (await this.inspect('Runtime.evaluate', { expression, returnByValue: true })) as {
      result?: { value?: unknown };
    } | null;
    return result?.result?.value;
  }

  /** One inspector protocol call; null without an inspector. */
  private async inspect(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    if (!this.inspector) return null;
    const ws = new WebSocket(this.inspector);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    try {
      return await new Promise<unknown>((resolve, reject) => {
        ws.on('message', (d) => {
          const m = JSON.parse(d.toString()) as { id?: number; result?: unknown; error?: { message: string } };
          if (m.id !== 1) return;
          if (m.error) reject(new Error(`${method}: ${m.error.message}`));
          else resolve(m.result);
        });
        ws.send(JSON.stringify({ id: 1, method, params }));
      });
    } finally {
      ws.close();
    }
  }

  async stop(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    await exited;
  }
}
