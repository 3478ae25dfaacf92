import { randomBytes, randomUUID } from 'node:crypto';
import type { Automation, AutomationBody, Trace, Trigger } from '@smarthome/protocol';
import { EdgeError } from '../errors.ts';
import { UrlCaller } from './call-url.ts';
import { evaluateAll } from './conditions.ts';
import { systemClock, type AutomationDeps, type AutomationLogger, type Clock, type RunCause } from './ports.ts';
import { TokenBuckets } from './rate-limit.ts';
import { RunAborted, StopRun, runSequence, type RunEnv, type RunState } from './script.ts';
import { AutomationStore, type StoredTimer } from './store.ts';
import { AutomationTemplates } from './template.ts';
import { armTrigger, type ArmedTrigger, type TriggerData } from './triggers.ts';
import { durationMs } from './time.ts';

/**
 * The automation engine: definitions (SQLite), armed triggers, runs with HA's modes,
 * traces, webhook dispatch, and waits that survive a restart.
 * Lifecycle: constructor assigns; start() loads, arms and resumes; stop() disarms and
 * aborts runs (their persisted waits and queued runs stay for the next start()).
 *
 * Webhooks: the receivers are POST-only (`POST /v1/automations/webhook/{webhook_id}`,
 * portal-api.md), locally (routes.ts) and through the cloud relay (handleWebhook). HA's
 * `allowed_methods` (default POST, PUT) is accepted by the schema only when it includes POST
 * (protocol WebhookTrigger); a PUT/GET/HEAD receiver would need its own route.
 */

export type WebhookOrigin = 'local' | 'cloud';
export type WebhookResult =
  { status: 200 } | { status: 400 | 404; message: string } | { status: 429; error: 'rate_limited'; retryAfter: number };

/** A definition the engine refuses (400) or an unknown automation (404); onError answers it. */
export class AutomationError extends EdgeError {
  constructor(kind: 'invalid_input' | 'not_found', message: string) {
    super(kind, message);
    this.name = 'AutomationError';
  }
}

interface ActiveRun {
  state: RunState;
  controller: AbortController;
  trigger: TriggerData;
  startedAt: string;
}
interface Instance {
  def: Automation;
  /** trigger index → armed trigger */
  armed: Map<number, ArmedTrigger>;
  runs: Map<string, ActiveRun>;
  /** mode: queued runs waiting behind a running one; each is persisted (kind 'queued') under its future run id */
  queue: QueuedRun[];
}
interface QueuedRun {
  runId: string;
  trigger: TriggerData;
  vars: Record<string, unknown>;
  chain: number;
}

const silent: AutomationLogger = { debug() {}, info() {}, warn() {}, error() {} };
const DEFAULT_MAX = 10;
/** Runs one event may lead to in a row (A fires an event that triggers B, which fires …, or A itself). */
const DEFAULT_MAX_EVENT_CHAIN = 20;

/** ≥128 random bits: 32 bytes, base64url. */
export function newWebhookId(): string {
  return randomBytes(32).toString('base64url');
}

export class AutomationEngine {
  private readonly deps: AutomationDeps;
  private readonly clock: Clock;
  private readonly log: AutomationLogger;
  private readonly store: AutomationStore;
  private readonly instances = new Map<string, Instance>();
  private readonly webhooks = new Map<
    string,
    { automationId: string; trigger: Extract<Trigger, { platform: 'webhook' }>; index: number }
  >();
  private buckets: TokenBuckets | null = null;
  private env: RunEnv | null = null;
  private started = false;

  constructor(deps: AutomationDeps) {
    this.deps = deps;
    this.clock = deps.clock ?? systemClock;
    this.log = deps.log ?? silent;
    this.store = new AutomationStore(deps.sqlite, deps.traceRetention ?? 20);
  }

  start(): void {
    if (this.started) return;
    this.store.start();
    const templates = new AutomationTemplates(this.deps.states, {}, this.clock);
    this.buckets = new TokenBuckets(
      this.clock,
      this.deps.webhookRate?.perSecond ?? 10,
      this.deps.webhookRate?.burst ?? 20,
    );
    this.env = {
      states: this.deps.states,
      mqtt: this.deps.mqtt,
      events: this.deps.events,
      clock: this.clock,
      templates,
      log: this.log,
      services: this.deps.services,
      caller: new UrlCaller(this.deps.callUrl),
      maxRepeat: this.deps.maxRepeat ?? 10_000,
      maxTraceSteps: 500,
      suspend: {
        save: (run, kind, stepPath, cursor, dueAt) =>
          this.persist({
            id: run.runId,
            automationId: run.automationId,
            kind,
            stepPath,
            dueAt,
            context: {
              cursor,
              variables: run.variables,
              steps: run.steps,
              started_at: this.instances.get(run.automationId)?.runs.get(run.runId)?.startedAt,
            },
          }),
        clear: (run) => this.unpersist(run.runId),
      },
    };
    this.started = true;
    for (const def of this.store.list()) this.install(def);
    this.resumeTimers(this.store.timers());
  }

  /** Disarms triggers and aborts runs; persisted waits stay in SQLite for the next start(). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    for (const inst of this.instances.values()) {
      for (const a of inst.armed.values()) a.disarm();
      inst.armed.clear();
      inst.queue = [];
      for (const run of inst.runs.values()) run.controller.abort('shutdown');
    }
    this.instances.clear();
    this.webhooks.clear();
    // let aborted runs unwind before the caller closes the database
    await new Promise((r) => setImmediate(r));
  }

  /* ------------------------------ definitions ------------------------------ */

  list(): Automation[] {
    return this.store.list();
  }
  get(id: string): Automation | undefined {
    return this.store.get(id);
  }

  async create(body: AutomationBody): Promise<Automation> {
    this.assertStarted();
    this.validate(body);
    await this.deps.planLimit?.assertCanCreate(this.store.count());
    const id = randomUUID();
    const webhookId = body.trigger.some((t) => t.platform === 'webhook') ? newWebhookId() : null;
    const def = this.store.save(
      id,
      withWebhookIds(body, webhookId),
      webhookId,
      this.deps.edgeId ?? null,
      new Date(this.clock.now()).toISOString(),
    );
    this.install(def);
    this.deps.onChange?.({ kind: 'upsert', automation: def });
    return def;
  }

  /** Replaces a definition; an existing webhook_id is kept while the automation has a webhook trigger. */
  update(id: string, body: AutomationBody): Automation {
    this.assertStarted();
    const existing = this.store.get(id);
    if (!existing) throw new AutomationError('not_found', 'automation not found');
    this.validate(body);
    const hasWebhook = body.trigger.some((t) => t.platform === 'webhook');
    const webhookId = hasWebhook ? (existing.webhook_id ?? newWebhookId()) : null;
    this.uninstall(id, 'cancel');
    const def = this.store.save(
      id,
      withWebhookIds(body, webhookId),
      webhookId,
      this.deps.edgeId ?? null,
      new Date(this.clock.now()).toISOString(),
      existing,
    );
    this.install(def);
    this.deps.onChange?.({ kind: 'upsert', automation: def });
    return def;
  }

  /** Deletes the automation, its traces and pending waits, and revokes its webhook_id. */
  remove(id: string): boolean {
    this.assertStarted();
    this.uninstall(id, 'cancel');
    const removed = this.store.remove(id);
    if (removed) this.deps.onChange?.({ kind: 'remove', id });
    return removed;
  }

  /** Stored runs plus the ones in flight, newest first. */
  traces(id: string): Trace[] {
    const inst = this.instances.get(id);
    const running = inst ? [...inst.runs.values()].map((r) => this.traceOf(r, 'running', null)) : [];
    const stored = this.store.traces(id).filter((t) => !inst?.runs.has(t.run_id));
    return [...running, ...stored].sort((a, b) =>
      a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0,
    );
  }

  /** Runs an automation's actions now (conditions skipped), as HA's automation.trigger. */
  triggerNow(id: string, data: TriggerData = { platform: null }): boolean {
    const inst = this.instances.get(id);
    if (!inst) return false;
    this.dispatch(inst, data, true);
    return true;
  }

  /* -------------------------------- webhooks -------------------------------- */

  /**
   * 404 for an unknown, revoked or disabled webhook (and for a cloud call to a local_only
   * trigger); 429 when this webhook is flooded. Takes a rate-limit token on success.
   */
  webhookPrecheck(webhookId: string, origin: WebhookOrigin): WebhookResult {
    const hook = this.webhooks.get(webhookId);
    const inst = hook ? this.instances.get(hook.automationId) : undefined;
    if (!hook || !inst || !inst.def.enabled) return { status: 404, message: 'webhook not found' };
    if (origin === 'cloud' && hook.trigger.local_only === true) return { status: 404, message: 'webhook not found' };
    const wait = this.buckets!.take(webhookId);
    if (wait > 0) return { status: 429, error: 'rate_limited', retryAfter: Math.max(1, Math.ceil(wait)) };
    return { status: 200 };
  }

  /** Fires the automation after a successful precheck. `body` must be a JSON object. */
  dispatchWebhook(
    webhookId: string,
    body: unknown,
    origin: WebhookOrigin,
    meta: { remote_addr?: string | null; method?: string } = {},
  ): WebhookResult {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      return { status: 400, message: 'body must be a JSON object' };
    const hook = this.webhooks.get(webhookId);
    const inst = hook ? this.instances.get(hook.automationId) : undefined;
    if (!hook || !inst) return { status: 404, message: 'webhook not found' };
    this.dispatch(inst, {
      platform: 'webhook',
      id: hook.trigger.id ?? String(hook.index),
      idx: String(hook.index),
      webhook_id: webhookId,
      json: body,
      origin,
      remote_addr: meta.remote_addr ?? null,
      method: meta.method ?? 'POST',
    });
    return { status: 200 };
  }

  /** The whole receiver in one call: what the cloud relay (through the tunnel) uses, with origin 'cloud'. */
  handleWebhook(
    webhookId: string,
    body: unknown,
    origin: WebhookOrigin,
    meta: { remote_addr?: string | null } = {},
  ): WebhookResult {
    if (!this.started) return { status: 404, message: 'webhook not found' };
    const pre = this.webhookPrecheck(webhookId, origin);
    return pre.status === 200 ? this.dispatchWebhook(webhookId, body, origin, meta) : pre;
  }

  /* -------------------------------- internals -------------------------------- */

  private assertStarted(): void {
    if (!this.started) throw new Error('automation engine is not started');
  }

  /** Checks what the schema cannot: templates parse, durations and patterns are valid. */
  private validate(body: AutomationBody): void {
    const templates = this.env!.templates;
    const walk = (v: unknown, path: string): void => {
      if (
        path.endsWith('.delay') &&
        (typeof v === 'number' || (typeof v === 'string' && !AutomationTemplates.isTemplate(v)))
      ) {
        try {
          durationMs(v);
        } catch (err) {
          throw new AutomationError('invalid_input', `${path}: ${(err as Error).message}`);
        }
      }
      if (typeof v === 'string' && AutomationTemplates.isTemplate(v)) {
        try {
          templates.validate(v);
        } catch (err) {
          throw new AutomationError('invalid_input', `${path}: ${(err as Error).message}`);
        }
      } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
    };
    walk({ variables: body.variables, trigger: body.trigger, condition: body.condition, action: body.action }, '');
    body.trigger.forEach((t, i) => {
      if (t.platform === 'mqtt' && !this.deps.mqtt)
        throw new AutomationError('invalid_input', `trigger[${i}]: mqtt triggers need the MQTT broker`);
      if (t.platform === 'event' && !this.deps.events)
        throw new AutomationError('invalid_input', `trigger[${i}]: event triggers need the event bus`);
      if (t.platform === 'device' && !this.deps.events)
        throw new AutomationError('invalid_input', `trigger[${i}]: device triggers need the event bus`);
      try {
        const off = armTrigger(
          t,
          i,
          {
            ...this.env!,
            states: { get: () => undefined, all: () => [], onStateChanged: () => () => {} },
            mqtt: { subscribe: () => () => {} },
            events: { fire() {}, on: () => () => {} },
            forTimers: undefined,
          },
          () => {},
        );
        off.disarm();
      } catch (err) {
        throw new AutomationError('invalid_input', `trigger[${i}]: ${(err as Error).message}`);
      }
    });
  }

  private install(def: Automation): void {
    const inst: Instance = { def, armed: new Map(), runs: new Map(), queue: [] };
    this.instances.set(def.id, inst);
    if (!def.enabled) return;
    def.trigger.forEach((t, i) => {
      if (t.enabled === false) return;
      if (t.platform === 'webhook') {
        if (t.webhook_id) this.webhooks.set(t.webhook_id, { automationId: def.id, trigger: t, index: i });
        return;
      }
      try {
        inst.armed.set(
          i,
          armTrigger(
            t,
            i,
            {
              ...this.env!,
              forTimers: {
                started: (key, dueAt, data) =>
                  this.persist({
                    id: `for:${def.id}:${key}`,
                    automationId: def.id,
                    kind: 'for',
                    stepPath: `trigger/${i}`,
                    dueAt,
                    context: { key, entity_id: data.entity_id, trigger: data },
                  }),
                ended: (key) => this.unpersist(`for:${def.id}:${key}`),
              },
            },
            (data, chain) => this.dispatch(inst, data, false, chain ?? 0),
          ),
        );
      } catch (err) {
        this.log.warn(`automation ${def.id}: trigger ${i} not armed: ${(err as Error).message}`);
      }
    });
  }

  private uninstall(id: string, reason: 'cancel'): void {
    const inst = this.instances.get(id);
    if (inst) {
      for (const a of inst.armed.values()) a.disarm();
      inst.queue = [];
      for (const run of inst.runs.values()) run.controller.abort(reason);
      this.instances.delete(id);
    }
    for (const [wid, hook] of this.webhooks)
      if (hook.automationId === id) {
        this.webhooks.delete(wid);
        this.buckets?.forget(wid);
      }
    this.safe(() => this.store.deleteTimersOf([id]));
  }

  private persist(t: StoredTimer): void {
    this.safe(() => this.store.putTimer(t));
  }
  private unpersist(id: string): void {
    this.safe(() => this.store.deleteTimer(id));
  }
  private safe(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error('automation store write failed', err);
    }
  }

  private resumeTimers(timers: StoredTimer[]): void {
    for (const t of timers) {
      const inst = this.instances.get(t.automationId);
      if (!inst || !inst.def.enabled) {
        this.unpersist(t.id);
        continue;
      }
      const due = t.dueAt ?? null;
      if (t.kind === 'for') {
        const index = Number(t.stepPath.split('/')[1]);
        const key = String(t.context.key ?? '');
        const armed = inst.armed.get(index);
        if (armed?.restoreFor && key)
          armed.restoreFor(String(t.context.entity_id), due ?? this.clock.now(), t.context.trigger as TriggerData);
        else this.unpersist(t.id);
        continue;
      }
      if (t.kind === 'queued') continue; // second pass, below
      const ctx = t.context as {
        cursor: number[];
        variables: Record<string, unknown>;
        steps: Trace['steps'];
        started_at?: string;
      };
      this.startRun(inst, (ctx.variables.trigger ?? {}) as TriggerData, {
        runId: t.id,
        variables: ctx.variables,
        steps: ctx.steps ?? [],
        startedAt: ctx.started_at ?? new Date(this.clock.now()).toISOString(),
        resume: { cursor: ctx.cursor, dueAt: due },
      });
    }
    // queued runs, in the order they were queued, behind any run resumed above
    for (const t of timers) {
      if (t.kind !== 'queued') continue;
      const inst = this.instances.get(t.automationId);
      if (!inst || !inst.def.enabled) continue; // unpersisted in the first pass
      const ctx = t.context as { trigger?: TriggerData; variables?: Record<string, unknown>; chain?: number };
      const entry: QueuedRun = {
        runId: t.id,
        trigger: ctx.trigger ?? { platform: null },
        vars: ctx.variables ?? {},
        chain: ctx.chain ?? 1,
      };
      if (inst.def.mode !== 'queued' && inst.runs.size > 0) {
        this.unpersist(t.id);
        continue;
      }
      if (inst.runs.size > 0) inst.queue.push(entry);
      else this.startQueued(inst, entry);
    }
  }

  /**
   * Conditions first, then the mode decides: run, queue, restart or drop. `chain`: how many runs
   * led to the triggering event; a run that would be one too many is dropped (an event loop).
   */
  private dispatch(inst: Instance, trigger: TriggerData, skipConditions = false, chain = 0): void {
    if (!this.started || !inst.def.enabled) return;
    const vars: Record<string, unknown> = { trigger, this: { id: inst.def.id, alias: inst.def.alias } };
    const triggerVars = inst.def.trigger[Number(trigger.idx)]?.variables;
    if (triggerVars) {
      try {
        for (const [k, v] of Object.entries(triggerVars)) vars[k] = this.env!.templates.renderDeep(v, vars);
      } catch (err) {
        this.log.warn(`automation ${inst.def.alias}: trigger variables failed: ${(err as Error).message}`);
      }
    }
    // HA's automation-level `variables:` rendered once, in order (each sees the ones before it),
    // after the trigger and its variables and before the conditions; a failure fails the run
    if (inst.def.variables) {
      const started = this.clock.now();
      try {
        for (const [k, v] of Object.entries(inst.def.variables)) vars[k] = this.env!.templates.renderDeep(v, vars);
      } catch (err) {
        const message = `variables: ${(err as Error).message}`;
        this.log.warn(`automation ${inst.def.alias}: ${message}`);
        const at = new Date(started).toISOString();
        this.saveTrace({
          run_id: randomUUID(),
          automation_id: inst.def.id,
          started_at: at,
          finished_at: new Date(this.clock.now()).toISOString(),
          state: 'failed',
          trigger,
          steps: [
            { path: 'variables', started_at: at, duration_ms: Math.max(0, this.clock.now() - started), error: message },
          ],
          error: message,
        });
        return;
      }
    }
    if (!skipConditions && inst.def.condition.length > 0) {
      const res = evaluateAll(inst.def.condition, this.env!, vars);
      if (!res.ok) {
        const now = new Date(this.clock.now()).toISOString();
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
    const maxChain = this.deps.maxEventChain ?? DEFAULT_MAX_EVENT_CHAIN;
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
      // survives a restart: resumed in order by resumeTimers()
      this.persist({
        id: entry.runId,
        automationId: inst.def.id,
        kind: 'queued',
        stepPath: 'queue',
        dueAt: null,
        context: { trigger: jsonSafe(trigger), variables: jsonSafe(vars), chain: runChain },
      });
      return;
    }
    this.startRun(inst, trigger, undefined, vars, undefined, runChain);
  }

  /** `loop`: an event loop was cut, always logged (max_exceeded: silent is about the mode's limits). */
  private dropped(inst: Instance, trigger: TriggerData, why: string, loop = false): void {
    if (loop || this.store.maxExceeded(inst.def.id) !== 'silent')
      this.log.warn(`automation ${inst.def.alias}: trigger dropped, ${why}`);
    const now = new Date(this.clock.now()).toISOString();
    this.saveTrace({
      run_id: randomUUID(),
      automation_id: inst.def.id,
      started_at: now,
      finished_at: now,
      state: 'aborted',
      trigger,
      steps: [],
      error: `dropped: ${why}`,
    });
  }

  /** A queued run's turn: it leaves the persisted queue and starts under the id it was queued with. */
  private startQueued(inst: Instance, entry: QueuedRun): void {
    this.unpersist(entry.runId);
    this.startRun(inst, entry.trigger, undefined, entry.vars, entry.runId, entry.chain);
  }

  private startRun(
    inst: Instance,
    trigger: TriggerData,
    resumed?: {
      runId: string;
      variables: Record<string, unknown>;
      steps: Trace['steps'];
      startedAt: string;
      resume: { cursor: number[]; dueAt: number | null };
    },
    vars?: Record<string, unknown>,
    newRunId?: string,
    chain = 1,
  ): void {
    const controller = new AbortController();
    const runId = resumed?.runId ?? newRunId ?? randomUUID();
    // HA: the run's context is the triggering event's child; what the run fires or calls carries it
    const parent = (trigger.event as { context?: { id?: unknown } } | undefined)?.context?.id;
    const cause: RunCause = {
      context: { id: runId, parent_id: typeof parent === 'string' ? parent : null, user_id: null },
      chain,
    };
    const state: RunState = {
      runId,
      automationId: inst.def.id,
      signal: controller.signal,
      cause,
      variables: resumed?.variables ?? { ...(vars ?? {}), trigger, this: { id: inst.def.id, alias: inst.def.alias } },
      steps: resumed?.steps ?? [],
      resume: resumed?.resume,
    };
    const run: ActiveRun = {
      state,
      controller,
      trigger,
      startedAt: resumed?.startedAt ?? new Date(this.clock.now()).toISOString(),
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
        this.log.error('automation_triggered listener failed', err);
      }
    }
    void this.execute(inst, run).finally(() => {
      inst.runs.delete(runId);
      const next = inst.queue.shift();
      if (next && this.started && this.instances.get(inst.def.id) === inst) this.startQueued(inst, next);
    });
  }

  private async execute(inst: Instance, run: ActiveRun): Promise<void> {
    let state: Trace['state'] = 'finished';
    let error: string | null = null;
    try {
      await runSequence(inst.def.action, 'action', [], run.state, this.env!, run.state.resume?.cursor);
    } catch (err) {
      if (err instanceof RunAborted) {
        if (err.reason === 'shutdown') return; // the persisted wait (if any) resumes on the next start()
        state = 'aborted';
        error = 'cancelled';
        this.unpersist(run.state.runId);
      } else if (err instanceof StopRun) {
        state = err.failed ? 'failed' : 'stopped';
        error = err.failed ? err.message : null;
      } else {
        state = 'failed';
        error = (err as Error)?.message ?? String(err);
        this.unpersist(run.state.runId);
        this.log.warn(`automation ${inst.def.alias} failed: ${error}`);
      }
    }
    this.saveTrace(this.traceOf(run, state, error, new Date(this.clock.now()).toISOString()));
  }

  private traceOf(
    run: ActiveRun,
    state: Trace['state'],
    error: string | null,
    finishedAt: string | null = null,
  ): Trace {
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

  private saveTrace(trace: Trace): void {
    if (!this.started) return;
    this.safe(() => this.store.saveTrace({ ...trace, trigger: jsonSafe(trace.trigger) }));
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

function withWebhookIds(body: AutomationBody, webhookId: string | null): AutomationBody {
  return {
    ...body,
    trigger: body.trigger.map((t) => (t.platform === 'webhook' ? { ...t, webhook_id: webhookId ?? undefined } : t)),
  };
}
