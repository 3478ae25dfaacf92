import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AutomationBody } from '@smarthome/protocol';
import { AutomationEngine } from '../automation/engine.ts';
import { MemoryEvents, MemoryMqtt, MemoryServices, MemoryStates } from '../automation/memory-ports.ts';
import type { AutomationDeps, Clock } from '../automation/ports.ts';

/** Test helpers: a controllable clock and an engine on a real SQLite file in a temp dir. */

export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  constructor(start = Date.UTC(2026, 0, 5, 12, 0, 0)) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  get pending(): number {
    return this.timers.size;
  }
  /** Moves time forward, firing due timers in order and letting async work settle in between. */
  async advance(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      await settle();
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= target && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = target;
    await settle();
  }
  /** Jumps without firing anything (like a process that was down). */
  set(ms: number): void {
    this.t = ms;
  }
}

export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((r) => setImmediate(r));
}

export async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

export interface Harness {
  dir: string;
  file: string;
  sqlite: Database.Database;
  states: MemoryStates;
  services: MemoryServices;
  mqtt: MemoryMqtt;
  events: MemoryEvents;
  clock: Clock;
  engine: AutomationEngine;
  create(body: unknown): Promise<ReturnType<AutomationEngine['get']> & object>;
  /** stop the engine, close the db, open it again and start a new engine (same ports) */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function harness(options: { clock?: Clock; deps?: Partial<AutomationDeps> } = {}): Promise<Harness> {
  const dir = mkdtempSync(path.join(tmpdir(), 'automation-'));
  const file = path.join(dir, 'edge.db');
  const clock = options.clock ?? {
    now: () => Date.now(),
    setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
    clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout),
  };
  const states = new MemoryStates(() => clock.now());
  const services = new MemoryServices();
  const mqtt = new MemoryMqtt();
  const events = new MemoryEvents();
  const open = () => {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    return db;
  };
  const h: Harness = {
    dir,
    file,
    sqlite: open(),
    states,
    services,
    mqtt,
    events,
    clock,
    engine: undefined as unknown as AutomationEngine,
    async create(body) {
      const parsed = AutomationBody.parse(body);
      return h.engine.create(parsed);
    },
    async restart() {
      await h.engine.stop();
      h.sqlite.close();
      h.sqlite = open();
      h.engine = new AutomationEngine({ ...deps(), sqlite: h.sqlite });
      h.engine.start();
    },
    async close() {
      await h.engine.stop();
      h.sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const deps = (): AutomationDeps => ({ sqlite: h.sqlite, states, services, mqtt, events, clock, ...options.deps });
  h.engine = new AutomationEngine(deps());
  h.engine.start();
  return h;
}
