import { randomUUID } from 'node:crypto';
import type { Automation, Trace } from '@smarthome/protocol';
import type { Logger } from '../log.ts';
import { evaluateAll } from './conditions.ts';
import type { Clock, EventBusPort, RunCause } from './ports.ts';
import { RunAborted, StopRun, runSequence, type RunEnv, type RunState } from './script.ts';
import type { AutomationStore, StoredTimer } from './store.ts';
import type { ArmedTrigger, TriggerData } from './triggers.ts';

/** An installed automation: its definition, what is armed, what runs and what waits. */
export interface Instance {
  def: Automation;
  /** trigger index → armed trigger */
  armed: Map<number, ArmedTrigger>;
  runs: Map<string, ActiveRun>;
  /** mode: queued runs waiting behind a running one; each is persisted (kind 'queued') under its future run id */
  queue: QueuedRun[];
}
export interface ActiveRun {
  state: RunState;
  controller: AbortController;
  trigger: TriggerData;
  startedAt: string;
}
export interface QueuedRun {
  runId: string;
  trigger: TriggerData;
  vars: Record<string, unknown>;
  chain: number;
}

/** How a run starts: new (from a trigger or the queue), or resumed at a persisted wait. */
export interface StartRun {
  trigger: TriggerData;
  /** runs in a row that led to this one (the event-loop guard); 1 when none */
  chain?: number;
  /** the id it was persisted under (queued, resumed); a new id otherwise */
  runId?: string;
  /** a new run's variables (`trigger` and `this` are added) */
  variables?: Record<string, unknown>;
  /** a run picked up after a restart: its variables, steps so far and where it waited */
  resumed?: {
    variables: Record<string, unknown>;
    steps: Trace['steps'];
    startedAt: string;
    resume: { cursor: number[]; dueAt: number | null };
  };
}

export interface RunnerDeps {
  env: RunEnv;
  store: AutomationStore;
  clock: Clock;
  log: Logger;
  events?: EventBusPort;
  maxEventChain: number;
  /** false once the engine stopped */
  started(): boolean;
  /** the engine is started and `inst` is still installed (not replaced or removed) */
  current(inst: Instance): boolean;
  persist(t: StoredTimer): void;
  unpersist(id: string): void;
  /** a store write whose failure is logged, not thrown */
  safe(fn: () => void): void;
}

const DEFAULT_MAX = 10;

/** The runs of installed automations: conditions, HA's modes (single, restart, queued, parallel), traces. */
export class Runner {
  private readonly deps: RunnerDeps;

  constructor(deps: RunnerDeps) {
    this.deps = deps;
  }

  /**
   * Conditions first, then the mode decides: run, queue, restart or drop. `chain`: how many runs
   * led to the triggering event; a run that would be one too many is dropped (an event loop).
   */
  dispatch(inst: Instance, trigger: TriggerData, skipConditions = false, chain = 0): void {
    const { env, clock, log } = this.deps;
    if (!this.deps.started() || !inst.def.enabled) return;
    const at = { automation_id: inst.def.id, alias: inst.def.alias };
    const vars: Record<string, unknown> = { trigger, this: { id: inst.def.id, alias: inst.def.alias } };
    const triggerVars = inst.def.trigger[Number(trigger.idx)]?.variables;
    if (triggerVars) {
      try {
        for (const [k, v] of Object.entries(triggerVars)) vars[k] = env.templates.renderDeep(v, vars);
      } catch (err) {
        log.warn(`trigger variables failed: ${(err as Error).message}`, at);
      }
    }
    // HA's automation-level `variables:` rendered once, in order (each sees the ones before it),
    // after the trigger and its variables and before the conditions; a failure fails the run
    if (inst.def.variables) {
      const started = clock.now();
      try {
        for (const [k, v] of Object.entries(inst.def.variables)) vars[k] = env.templates.renderDeep(v, vars);
      } catch (err) {
        const message = `variables: ${(err as Error).message}`;
        const startedAt = new Date(started).toISOString();
        const runId = randomUUID();
        log.warn(message, { ...at, run_id: runId });
        this.saveTrace({
          run_id: runId,
          automation_id: inst.def.id,
          started_at: startedAt,
          finished_at: new Date(clock.now()).toISOString(),
          state: 'failed',
          trigger,
          steps: [
            {
              path: 'variables',
              started_at: startedAt,
              duration_ms: Math.max(0, clock.now() - started),
              error: message,
            },
          ],
          error: message,
        });
        return;
      }
    }
    if (!skipConditions && inst.def.condition.length > 0) {
      const res = evaluateAll(inst.def.condition, env, vars);
      if (!res.ok) {
        const now = new Date(clock.now()).toISOString();
        this.saveTrace({
          run_id: randomUUID(),
          automation_id: inst.def.id,
          started_at: now,
          finished_at: now,
          state: res.error ? 'failed' : 'stopped',
          trigger,
          steps: [
            {
              path: `condition/${res.index ?? 0}`,
              started_at: now,
              duration_ms: 0,
              result: { result: false },
              ...(res.error ? { error: res.error } : {}),
            },
          ],
          error: res.error ?? null,
        });
        return;
      }
    }
    const runChain = chain + 1;
    const maxChain = this.deps.maxEventChain;
    if (runChain > maxChain)
      return this.dropped(
        inst,
        trigger,
        `${maxChain} automation runs in a row fired events that triggered each other (a loop?)`,
        true,
      );
    const mode = inst.def.mode;
    const max = inst.def.max ?? DEFAULT_MAX;
    const busy = inst.runs.size;
    if (busy > 0 && mode === 'single') return this.dropped(inst, trigger, 'already running (mode single)');
    if (mode === 'restart') for (const run of inst.runs.values()) run.controller.abort('cancel');
    if (mode === 'parallel' && busy >= max) return this.dropped(inst, trigger, `${max} runs already (mode parallel)`);
    if (mode === 'queued' && busy > 0) {
      if (busy + inst.queue.length >= max) return this.dropped(inst, trigger, `queue full: ${max} (mode queued)`);
      const entry: QueuedRun = { runId: randomUUID(), trigger, vars, chain: runChain };
      inst.queue.push(entry);
      // survives a restart: resumed in order by the engine's resumeTimers()
      this.deps.persist({
        id: entry.runId,
        automationId: inst.def.id,
        kind: 'queued',
        stepPath: 'queue',
        dueAt: null,
        context: { trigger: jsonSafe(trigger), variables: jsonSafe(vars), chain: runChain },
      });
      return;
    }
    this.startRun(inst, { trigger, variables: vars, chain: runChain });
  }

  /** A queued run's turn: it leaves the persisted queue and starts under the id it was queued with. */
  startQueued(inst: Instance, entry: QueuedRun): void {
    this.deps.unpersist(entry.runId);
    this.startRun(inst, { trigger: entry.trigger, variables: entry.vars, runId: entry.runId, chain: entry.chain });
  }

  startRun(inst: Instance, start: StartRun): void {
    const { trigger, resumed } = start;
    const controller = new AbortController();
    const runId = start.runId ?? randomUUID();
    // HA: the run's context is the triggering event's child; what the run fires or calls carries it
    const parent = (trigger.event as { context?: { id?: unknown } } | undefined)?.context?.id;
    const cause: RunCause = {
      context: { id: runId, parent_id: typeof parent === 'string' ? parent : null, user_id: null },
      chain: start.chain ?? 1,
    };
    const state: RunState = {
      runId,
      automationId: inst.def.id,
      signal: controller.signal,
      cause,
      variables: resumed?.variables ?? {
        ...(start.variables ?? {}),
        trigger,
        this: { id: inst.def.id, alias: inst.def.alias },
      },
      steps: resumed?.steps ?? [],
      resume: resumed?.resume,
    };
    const run: ActiveRun = {
      state,
      controller,
      trigger,
      startedAt: resumed?.startedAt ?? new Date(this.deps.clock.now()).toISOString(),
    };
    inst.runs.set(runId, run);
    if (!resumed) {
      try {
        this.deps.events?.fire(
          'automation_triggered',
          { name: inst.def.alias, entity_id: `automation.${inst.def.id}`, source: describeTrigger(trigger) },
          cause,
        );
      } catch (err) {
        this.deps.log.error('automation_triggered listener failed', err, { automation_id: inst.def.id, run_id: runId });
      }
    }
    void this.execute(inst, run).finally(() => {
      inst.runs.delete(runId);
      const next = inst.queue.shift();
      if (next && this.deps.current(inst)) this.startQueued(inst, next);
    });
  }

  traceOf(run: ActiveRun, state: Trace['state'], error: string | null, finishedAt: string | null = null): Trace {
    return {
      run_id: run.state.runId,
      automation_id: run.state.automationId,
      started_at: run.startedAt,
      finished_at: finishedAt,
      state,
      trigger: jsonSafe(run.trigger),
      steps: [...run.state.steps],
      error,
    };
  }

  /** `loop`: an event loop was cut, always logged (max_exceeded: silent is about the mode's limits). */
  private dropped(inst: Instance, trigger: TriggerData, why: string, loop = false): void {
    const runId = randomUUID();
    if (loop || this.deps.store.maxExceeded(inst.def.id) !== 'silent')
      this.deps.log.warn(`trigger dropped, ${why}`, {
        automation_id: inst.def.id,
        alias: inst.def.alias,
        run_id: runId,
      });
    const now = new Date(this.deps.clock.now()).toISOString();
    this.saveTrace({
      run_id: runId,
      automation_id: inst.def.id,
      started_at: now,
      finished_at: now,
      state: 'aborted',
      trigger,
      steps: [],
      error: `dropped: ${why}`,
    });
  }

  private async execute(inst: Instance, run: ActiveRun): Promise<void> {
    let state: Trace['state'] = 'finished';
    let error: string | null = null;
    try {
      await runSequence(inst.def.action, 'action', [], run.state, this.deps.env, run.state.resume?.cursor);
    } catch (err) {
      if (err instanceof RunAborted) {
        if (err.reason === 'shutdown') return; // the persisted wait (if any) resumes on the next start()
        state = 'aborted';
        error = 'cancelled';
        this.deps.unpersist(run.state.runId);
      } else if (err instanceof StopRun) {
        state = err.failed ? 'failed' : 'stopped';
        error = err.failed ? err.message : null;
      } else {
        state = 'failed';
        error = (err as Error)?.message ?? String(err);
        this.deps.unpersist(run.state.runId);
        this.deps.log.warn(`automation run failed: ${error}`, {
          automation_id: inst.def.id,
          alias: inst.def.alias,
          run_id: run.state.runId,
        });
      }
    }
    this.saveTrace(this.traceOf(run, state, error, new Date(this.deps.clock.now()).toISOString()));
  }

  private saveTrace(trace: Trace): void {
    if (!this.deps.started()) return;
    this.deps.safe(() => this.deps.store.saveTrace({ ...trace, trigger: jsonSafe(trace.trigger) }));
  }
}

/** HA's `source` of automation_triggered: what fired the run. */
function describeTrigger(t: TriggerData): string {
  switch (t.platform) {
    case 'state':
      return `state of ${String(t.entity_id)}`;
    case 'numeric_state':
      return `numeric state of ${String(t.entity_id)}`;
    case 'event':
      return `event '${String((t.event as { event_type?: unknown } | undefined)?.event_type)}'`;
    case 'mqtt':
      return `mqtt topic ${String(t.topic)}`;
    case 'time':
      return `time ${String(t.at)}`;
    case 'time_pattern':
      return 'time pattern';
    case 'webhook':
      return 'webhook';
    case 'device':
      return `device ${String(t.device_id)} ${String(t.type)} ${String(t.subtype ?? '')}`.trim();
    default:
      return 'manual';
  }
}

function jsonSafe(v: Record<string, unknown>): Record<string, unknown> {
  try {
    return JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
  } catch {
    return { error: 'trigger data is not serializable' };
  }
}
