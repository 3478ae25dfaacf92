import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { NODE, REPO_ROOT } from '@smarthome/cloud/testing/process';
import { sleep } from './fleet-http.ts';
import { processCpuMs } from './proc-cpu.ts';

/** What each edges' process reads from its FLEET_CONFIG_FILE (a file: ten thousand tokens exceed one variable's size limit). */
export interface FleetProcessConfig {
  cloudUrl: string;
  tokens: string[];
  entities: number;
  /** the index of this process's first edge in the fleet */
  offset: number;
  /** processes in the fleet: the fleet as a whole starts 200 edges per 20 ms */
  processes: number;
}

/** The fleet's edges, and how many go to one process. */
export type FleetOptions = Omit<FleetProcessConfig, 'offset' | 'processes'> & { perProcess: number };

/** One process's answer to `stats`, and the fleet's (summed; `loopMaxMs` the longest of them). */
export interface FleetStats {
  type: 'stats';
  online: number;
  synced: number;
  deltas: number;
  rpcs: number;
  handshakeTimeouts: number;
  errors: number;
  /** tunnels that closed, by close code and reason (e.g. "1006", "4000 replaced by a new connection") */
  closes: Record<string, number>;
  /** the longest event-loop delay of the simulating process since the last `resetLoop` */
  loopMaxMs: number;
}

/** Counts by key, added up. */
export function addCounts(counts: readonly Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of counts) for (const [k, n] of Object.entries(c)) out[k] = (out[k] ?? 0) + n;
  return out;
}

/** What grew from `before` to `after`, by key, most first (keys that did not grow are left out). */
export function grownSince(before: Record<string, number>, after: Record<string, number>): [string, number][] {
  return Object.entries(after)
    .map(([k, n]): [string, number] => [k, n - (before[k] ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** What `after` counts more than `before`, as "n × key" parts ('none' when nothing). */
export function countsSince(before: Record<string, number>, after: Record<string, number>): string {
  const parts = grownSince(before, after).map(([k, n]) => `${n} × ${k}`);
  return parts.length ? parts.join(', ') : 'none';
}

export interface LaggingGroup {
  state: string;
  count: number;
  edges: number[];
}

/**
 * The fleet's simulated edges in one or more processes (fleet-edges.ts, `perProcess` edges each),
 * driven over IPC. Each reports its own longest loop delay: while a simulating process's loop is
 * blocked, its edges' frames wait and then leave together, so its turns shape the replica's
 * arrivals as no fleet of independent edges would (session 18: one process for 10,000 edges was
 * blocked 2.6–3.2 s at a time in a storm, and the replica's longest turn overlapped the end of one).
 */
export class SimulatedFleet {
  private readonly children: ChildProcess[] = [];
  private readonly dir: string;
  private readonly config: FleetOptions;

  constructor(dir: string, config: FleetOptions) {
    this.dir = dir;
    this.config = config;
  }

  /** Forks the processes; resolves once each has begun connecting its edges. */
  async start(): Promise<void> {
    const { tokens, perProcess } = this.config;
    for (let offset = 0; offset < tokens.length; offset += perProcess) {
      const file = path.join(this.dir, `fleet-${offset}.json`);
      const config: FleetProcessConfig = {
        cloudUrl: this.config.cloudUrl,
        tokens: tokens.slice(offset, offset + perProcess),
        entities: this.config.entities,
        offset,
        processes: Math.max(1, Math.ceil(tokens.length / perProcess)),
      };
      fs.writeFileSync(file, JSON.stringify(config));
      this.children.push(
        fork(path.join(REPO_ROOT, 'tools/bench/lib/fleet-edges.ts'), [], {
          env: { ...process.env, FLEET_CONFIG_FILE: file },
          execPath: NODE,
          stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        }),
      );
    }
    await this.all('', 'started');
  }

  /** Sends `cmd` (deltas, quiet, resetLoop) to every process. */
  send(msg: { cmd: string; everyMs?: number }): void {
    for (const child of this.children) child.send(msg);
  }

  async stats(): Promise<FleetStats> {
    const all = await this.all<FleetStats>('stats', 'stats');
    const sum = (k: keyof FleetStats) => all.reduce((n, s) => n + (s[k] as number), 0);
    return {
      type: 'stats',
      online: sum('online'),
      synced: sum('synced'),
      deltas: sum('deltas'),
      rpcs: sum('rpcs'),
      handshakeTimeouts: sum('handshakeTimeouts'),
      errors: sum('errors'),
      closes: addCounts(all.map((s) => s.closes)),
      loopMaxMs: Math.max(...all.map((s) => s.loopMaxMs)),
    };
  }

  /** The edges not synced, grouped by state and last close, refusal or error (a few edge indexes each). */
  async lagging(): Promise<LaggingGroup[]> {
    const merged = new Map<string, LaggingGroup>();
    for (const { groups } of await this.all<{ groups: LaggingGroup[] }>('lagging', 'lagging'))
      for (const g of groups) {
        const m = merged.get(g.state) ?? { state: g.state, count: 0, edges: [] };
        m.count += g.count;
        m.edges = [...m.edges, ...g.edges].slice(0, 5);
        merged.set(g.state, m);
      }
    return [...merged.values()];
  }

  /** user + system CPU ms so far of all the processes */
  cpuMs(): number {
    return this.children.reduce((n, c) => n + processCpuMs(c.pid!), 0);
  }

  /** Stops every process (their edges close their tunnels), killing one that does not exit within 10 s. */
  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((r) => child.once('exit', r));
        child.send({ cmd: 'stop' });
        await Promise.race([gone, sleep(10_000)]);
        child.kill('SIGKILL');
      }),
    );
  }

  /** One message of `type` from each process, after sending `cmd` (bounded: a dead child does not hang the bench). */
  private all<T>(cmd: string, type: string): Promise<T[]> {
    return Promise.all(
      this.children.map(
        (child) =>
          new Promise<T>((resolve, reject) => {
            const timer = setTimeout(
              () => done(new Error(`an edges' process did not answer ${cmd || type} within 30 s`)),
              30_000,
            );
            const onMessage = (m: { type?: string }) => m.type === type && done(null, m as T);
            const onExit = () => done(new Error(`an edges' process exited (${child.exitCode})`));
            const done = (err: Error | null, value?: T) => {
              clearTimeout(timer);
              child.off('message', onMessage);
              child.off('exit', onExit);
              if (err) reject(err);
              else resolve(value!);
            };
            child.on('message', onMessage);
            child.once('exit', onExit);
            if (cmd) child.send({ cmd });
          }),
      ),
    );
  }
}
