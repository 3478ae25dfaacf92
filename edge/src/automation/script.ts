import type { Action, Condition, TraceStep, Trigger } from '@smarthome/protocol';
import { evaluateAll, evaluateCondition } from './conditions.ts';
import type { RunCause, ServicePort } from './ports.ts';
import type { UrlCaller } from './call-url.ts';
import { AutomationTemplates } from './template.ts';
import { durationMs } from './time.ts';
import { armTrigger, clockTimer, type TriggerData, type TriggerEnv } from './triggers.ts';

/**
 * Runs an action sequence. Every step is traced with its path (`action/2/choose/0/sequence/1`)
 * and a numeric cursor ([2, 0, 1]: sequence index, chosen option or -1 for default,
 * repeat iteration, …). A delay or wait_for_trigger is persisted with that cursor through
 * `env.suspend`, so a new engine can resume the run at that step after a restart.
 */

export type AbortReason = 'shutdown' | 'cancel';
export class RunAborted extends Error {
  readonly reason: AbortReason;
  constructor(reason: AbortReason) {
    super(reason === 'shutdown' ? 'engine stopped' : 'cancelled');
    this.name = 'RunAborted';
    this.reason = reason;
  }
}
/** `stop` action, a failing `condition` action, or a wait that timed out without continue_on_timeout. */
export class StopRun extends Error {
  readonly failed: boolean;
  constructor(message: string, failed = false) {
    super(message);
    this.name = 'StopRun';
    this.failed = failed;
  }
}

export interface RunState {
  runId: string;
  automationId: string;
  variables: Record<string, unknown>;
  steps: TraceStep[];
  signal: AbortSignal;
  /** what the run's service calls and events carry: its context and the chain of runs behind it */
  cause: RunCause;
  /** set while resuming a persisted wait; consumed by the step the cursor leads to */
  resume?: { cursor: number[]; dueAt: number | null };
}

export interface RunEnv extends TriggerEnv {
  services: ServicePort;
  caller: UrlCaller;
  maxRepeat: number;
  maxTraceSteps: number;
  suspend: {
    save(run: RunState, kind: 'delay' | 'wait', stepPath: string, cursor: number[], dueAt: number | null): void;
    clear(run: RunState): void;
  };
}

const MAX_STEP_RESULT = 4096;

function abortError(signal: AbortSignal): RunAborted {
  return new RunAborted(signal.reason === 'shutdown' ? 'shutdown' : 'cancel');
}

function sleepUntil(env: RunEnv, dueAt: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = () => {
      stop();
      reject(abortError(signal));
    };
    const stop = clockTimer(env.clock, dueAt, () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function traceResult(result: unknown): unknown {
  if (result === undefined) return undefined;
  const text = JSON.stringify(result);
  return text && text.length > MAX_STEP_RESULT ? { truncated: text.slice(0, MAX_STEP_RESULT) } : result;
}

function record(run: RunState, env: RunEnv, step: TraceStep): void {
  if (run.steps.length < env.maxTraceSteps) run.steps.push(step);
  else if (run.steps.length === env.maxTraceSteps)
    run.steps.push({
      path: 'trace',
      started_at: step.started_at,
      duration_ms: 0,
      error: `more than ${env.maxTraceSteps} steps; the rest are not traced`,
    });
}

export async function runSequence(
  actions: Action[],
  basePath: string,
  cursor: number[],
  run: RunState,
  env: RunEnv,
  resume?: number[],
): Promise<void> {
  const start = resume && resume.length > 0 ? resume[0] : 0;
  for (let i = start; i < actions.length; i++) {
    if (run.signal.aborted) throw abortError(run.signal);
    await runAction(
      actions[i],
      `${basePath}/${i}`,
      [...cursor, i],
      run,
      env,
      resume && i === start ? resume.slice(1) : undefined,
    );
  }
}

async function runAction(
  action: Action,
  path: string,
  cursor: number[],
  run: RunState,
  env: RunEnv,
  resume: number[] | undefined,
): Promise<void> {
  const startedMs = env.clock.now();
  const startedAt = new Date(startedMs).toISOString();
  const done = (result?: unknown, error?: string) =>
    record(run, env, {
      path,
      started_at: startedAt,
      duration_ms: Math.max(0, env.clock.now() - startedMs),
      ...(result !== undefined ? { result: traceResult(result) } : {}),
      ...(error !== undefined ? { error } : {}),
    });
  if (action.enabled === false) {
    done({ enabled: false });
    return;
  }
  try {
    const result = await execute(action, path, cursor, run, env, resume);
    // containers (choose/repeat) record their own children; still record the container
    done(result);
  } catch (err) {
    if (err instanceof RunAborted) throw err;
    if (err instanceof StopRun) {
      done({ stop: err.message }, err.failed ? err.message : undefined);
      throw err;
    }
    const message = (err as Error).message ?? String(err);
    done(undefined, message);
    if (action.continue_on_error === true) return;
    throw err;
  }
}

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

async function execute(
  action: Action,
  path: string,
  cursor: number[],
  run: RunState,
  env: RunEnv,
  resume: number[] | undefined,
): Promise<unknown> {
  const vars = run.variables;
  const t = env.templates;
  if ('service' in action) {
    const [domain, service] = String(action.service).split('.', 2);
    const data = (t.renderDeep(action.data ?? {}, vars) ?? {}) as Record<string, unknown>;
    const target = t.renderDeep(action.target ?? {}, vars) as { entity_id?: unknown };
    if (target.entity_id !== undefined) data.entity_id = target.entity_id;
    const response = await env.services.call(domain, service, data, run.cause);
    if (typeof action.response_variable === 'string') vars[action.response_variable] = response ?? null;
    return { service: `${domain}.${service}`, data };
  }
  if ('call_url' in action) {
    const c = action.call_url as {
      method: string;
      url: string;
      headers?: Record<string, string>;
      body?: string | Record<string, unknown>;
      timeout?: number;
    };
    const url = t.renderString(c.url, vars);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(c.headers ?? {})) headers[k] = t.renderString(v, vars);
    const body =
      typeof c.body === 'string'
        ? t.renderString(c.body, vars)
        : c.body !== undefined
          ? (t.renderDeep(c.body, vars) as Record<string, unknown>)
          : undefined;
    const res = await env.caller.call({ method: c.method, url, headers, body, timeout: c.timeout }, run.signal);
    if (typeof action.response_variable === 'string')
      vars[action.response_variable] = {
        status: res.status,
        headers: res.headers,
        body: res.body,
        json: res.json ?? null,
      };
    return { method: c.method, url, status: res.status };
  }
  if ('delay' in action) {
    let dueAt: number;
    if (resume !== undefined && run.resume) {
      dueAt = run.resume.dueAt ?? env.clock.now();
      run.resume = undefined;
    } else {
      const raw = AutomationTemplates.isTemplate(action.delay) ? t.renderNative(action.delay, vars) : action.delay;
      dueAt = env.clock.now() + durationMs(raw);
    }
    const from = env.clock.now();
    env.suspend.save(run, 'delay', path, cursor, dueAt);
    await sleepUntil(env, dueAt, run.signal);
    env.suspend.clear(run);
    return { delay_ms: Math.max(0, dueAt - from) };
  }
  if ('wait_for_trigger' in action) return waitForTrigger(action, path, cursor, run, env, resume);
  if ('choose' in action) {
    const options = action.choose as { conditions: Condition[]; sequence: Action[] }[];
    const fallback = action.default as Action[] | undefined;
    let chosen: number;
    if (resume !== undefined && resume.length > 0) chosen = resume[0];
    else
      chosen = options.findIndex((o) => {
        const r = evaluateAll(list(o.conditions), env, vars);
        if (r.error) throw new Error(`choose condition failed: ${r.error}`);
        return r.ok;
      });
    const inner = resume && resume.length > 0 ? resume.slice(1) : undefined;
    if (chosen >= 0)
      await runSequence(
        options[chosen].sequence,
        `${path}/choose/${chosen}/sequence`,
        [...cursor, chosen],
        run,
        env,
        inner,
      );
    else if (fallback) await runSequence(fallback, `${path}/default`, [...cursor, -1], run, env, inner);
    return { choice: chosen >= 0 ? chosen : 'default' };
  }
  if ('repeat' in action) return repeat(action.repeat as Record<string, unknown>, path, cursor, run, env, resume);
  if ('variables' in action) {
    for (const [k, v] of Object.entries(action.variables as Record<string, unknown>)) vars[k] = t.renderDeep(v, vars);
    return { variables: Object.keys(action.variables as object) };
  }
  if ('condition' in action) {
    const ok = evaluateCondition(action as unknown as Condition, env, vars);
    if (!ok) throw new StopRun('condition did not pass');
    return { result: true };
  }
  if ('event' in action) {
    if (!env.events) throw new Error('no event bus');
    const data = {
      ...(t.renderDeep(action.event_data ?? {}, vars) as Record<string, unknown> | null),
      ...(t.renderDeep(action.event_data_template ?? {}, vars) as Record<string, unknown> | null),
    };
    env.events.fire(String(action.event), data, run.cause);
    return { event: action.event, data };
  }
  if ('stop' in action) throw new StopRun(String(action.stop), action.error === true);
  throw new Error(`unknown action at ${path}`);
}

async function waitForTrigger(
  action: Action,
  path: string,
  cursor: number[],
  run: RunState,
  env: RunEnv,
  resume: number[] | undefined,
): Promise<unknown> {
  const triggers = list(action.wait_for_trigger as Trigger | Trigger[]);
  let dueAt: number | null;
  if (resume !== undefined && run.resume) {
    dueAt = run.resume.dueAt;
    run.resume = undefined;
  } else dueAt = action.timeout !== undefined ? env.clock.now() + durationMs(action.timeout) : null;
  env.suspend.save(run, 'wait', path, cursor, dueAt);
  const fired = await new Promise<TriggerData | null>((resolve, reject) => {
    const disarms: (() => void)[] = [];
    const finish = (v: TriggerData | null) => {
      cleanup();
      resolve(v);
    };
    const onAbort = () => {
      cleanup();
      reject(abortError(run.signal));
    };
    const cleanup = () => {
      for (const d of disarms) d();
      run.signal.removeEventListener('abort', onAbort);
    };
    try {
      triggers.forEach((trig, i) => {
        if (trig.platform === 'webhook') throw new Error('webhook triggers cannot be waited for');
        disarms.push(
          armTrigger(trig, i, { ...env, forTimers: undefined }, (data) => finish(data), `wait:${run.runId}:`).disarm,
        );
      });
    } catch (err) {
      cleanup();
      reject(err);
      return;
    }
    if (dueAt !== null) disarms.push(clockTimer(env.clock, dueAt, () => finish(null)));
    if (run.signal.aborted) onAbort();
    else run.signal.addEventListener('abort', onAbort, { once: true });
  });
  env.suspend.clear(run);
  const remaining = dueAt === null ? null : Math.max(0, (dueAt - env.clock.now()) / 1000);
  run.variables.wait = { trigger: fired, remaining };
  if (!fired && action.continue_on_timeout === false) throw new StopRun('wait_for_trigger timed out');
  return { triggered: fired !== null, ...(fired ? { trigger: fired } : { timeout: true }) };
}

async function repeat(
  r: Record<string, unknown>,
  path: string,
  cursor: number[],
  run: RunState,
  env: RunEnv,
  resume: number[] | undefined,
): Promise<unknown> {
  const vars = run.variables;
  const sequence = r.sequence as Action[];
  let count: number | undefined;
  if (r.count !== undefined) {
    const raw = typeof r.count === 'string' ? env.templates.renderNative(r.count, vars) : r.count;
    count = Number(raw);
    if (!Number.isInteger(count) || count < 0)
      throw new Error(`repeat count must be a non-negative integer, got ${JSON.stringify(raw)}`);
    if (count > env.maxRepeat) throw new Error(`repeat count ${count} is above the limit of ${env.maxRepeat}`);
  }
  const check = (conds: Condition[]) => {
    const res = evaluateAll(conds, env, vars);
    if (res.error) throw new Error(`repeat condition failed: ${res.error}`);
    return res.ok;
  };
  const outer = vars.repeat;
  let i = resume && resume.length > 0 ? resume[0] : 0;
  let resumed = resume && resume.length > 0;
  try {
    for (; ; i++) {
      if (run.signal.aborted) throw abortError(run.signal);
      if (i >= env.maxRepeat) throw new Error(`repeat stopped after ${env.maxRepeat} iterations (limit)`);
      if (count !== undefined && i >= count) break;
      vars.repeat = { index: i + 1, first: i === 0, ...(count !== undefined ? { last: i === count - 1 } : {}) };
      if (r.while !== undefined && !resumed && !check(r.while as Condition[])) break;
      await runSequence(
        sequence,
        `${path}/repeat/sequence`,
        [...cursor, i],
        run,
        env,
        resumed ? resume!.slice(1) : undefined,
      );
      resumed = false;
      if (r.until !== undefined && check(r.until as Condition[])) {
        i++;
        break;
      }
      // let timers and I/O in between long synchronous loops
      if (i % 100 === 99) await new Promise((res) => setImmediate(res));
    }
  } finally {
    if (outer === undefined) delete vars.repeat;
    else vars.repeat = outer;
  }
  return { iterations: i };
}
