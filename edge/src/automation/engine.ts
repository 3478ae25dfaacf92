import { randomBytes, randomUUID } from 'node:crypto';
import type { Automation, AutomationBody, Trace, Trigger } from '@smarthome/protocol';
import { silentLogger, type Logger } from '../log.ts';
import { UrlCaller } from './call-url.ts';
import { systemClock, type AutomationDeps, type Clock } from './ports.ts';
import { TokenBuckets } from './rate-limit.ts';
import { Runner, type Instance, type QueuedRun } from './runs.ts';
import type { RunEnv } from './script.ts';
import { AutomationStore, type StoredTimer } from './store.ts';
import { AutomationTemplates } from './template.ts';
import { armTrigger, type TriggerData } from './triggers.ts';
import { AutomationError, validateAutomation } from './validate.ts';

export { AutomationError };

/**
 * The automation engine: definitions (SQLite), armed triggers, runs with HA's modes,
 * traces, webhook dispatch, and waits that survive a restart.
 * Lifecycle: constructor assigns; start() loads, arms and resumes; stop() disarms and
 * aborts runs (their persisted waits and queued runs stay for the next start()).
 * validate.ts checks a definition before it is stored; runs.ts runs it (conditions, modes, traces).
 *
 * Webhooks: the receivers are POST-only (`POST /v1/automations/webhook/{webhook_id}`,
 * portal-api.md), locally (routes.ts) and through the cloud relay (handleWebhook). HA's
 * `allowed_methods` (default POST, PUT) is accepted by the schema only when it includes POST
 * (protocol WebhookTrigger); a PUT/GET/HEAD receiver would need its own route.
 */

export type WebhookOrigin = 'local' | 'cloud';
export type WebhookResult =
  { status: 200 } | { status: 400 | 404; message: string } | { status: 429; error: 'rate_limited'; retryAfter: number };

/** Runs one event may lead to in a row (A fires an event that triggers B, which fires …, or A itself). */
const DEFAULT_MAX_EVENT_CHAIN = 20;

/** ≥128 random bits: 32 bytes, base64url. */
export function newWebhookId(): string {
  return randomBytes(32).toString('base64url');
}

export class AutomationEngine {
  private readonly deps: AutomationDeps;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly store: AutomationStore;
  private readonly instances = new Map<string, Instance>();
  private readonly webhooks = new Map<
    string,
    { automationId: string; trigger: Extract<Trigger, { platform: 'webhook' }>; index: number }
  >();
  private buckets: TokenBuckets | null = null;
  private env: RunEnv | null = null;
  private runner: Runner | null = null;
  private started = false;

  constructor(deps: AutomationDeps) {
    this.deps = deps;
    this.clock = deps.clock ?? systemClock;
    this.log = deps.log ?? silentLogger;
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
    this.runner = new Runner({
      env: this.env,
      store: this.store,
      clock: this.clock,
      log: this.log,
      events: this.deps.events,
      maxEventChain: this.deps.maxEventChain ?? DEFAULT_MAX_EVENT_CHAIN,
      started: () => this.started,
      current: (inst) => this.started && this.instances.get(inst.def.id) === inst,
      persist: (t) => this.persist(t),
      unpersist: (id) => this.unpersist(id),
      safe: (fn) => this.safe(fn),
    });
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
    validateAutomation(body, this.env!);
    await this.deps.planLimit?.assertCanCreate(this.store.count());
    const id = randomUUID();
    const webhookId = body.trigger.some((t) => t.platform === 'webhook') ? newWebhookId() : null;
    return this.saveAndInstall(id, body, webhookId);
  }

  /** Replaces a definition; an existing webhook_id is kept while the automation has a webhook trigger. */
  update(id: string, body: AutomationBody): Automation {
    this.assertStarted();
    const existing = this.store.get(id);
    if (!existing) throw new AutomationError('not_found', 'automation not found');
    validateAutomation(body, this.env!);
    const hasWebhook = body.trigger.some((t) => t.platform === 'webhook');
    const webhookId = hasWebhook ? (existing.webhook_id ?? newWebhookId()) : null;
    this.uninstall(id, 'cancel');
    return this.saveAndInstall(id, body, webhookId, existing);
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
    const running = inst ? [...inst.runs.values()].map((r) => this.runner!.traceOf(r, 'running', null)) : [];
    const stored = this.store.traces(id).filter((t) => !inst?.runs.has(t.run_id));
    return [...running, ...stored].sort((a, b) =>
      a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0,
    );
  }

  /** Runs an automation's actions now (conditions skipped), as HA's automation.trigger. */
  triggerNow(id: string, data: TriggerData = { platform: null }): boolean {
    const inst = this.instances.get(id);
    if (!inst) return false;
    this.runner!.dispatch(inst, data, true);
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
    this.runner!.dispatch(inst, {
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

  /** Stores a definition (its webhook triggers carry `webhookId`), arms it and tells onChange. */
  private saveAndInstall(
    id: string,
    body: AutomationBody,
    webhookId: string | null,
    existing?: Automation,
  ): Automation {
    const now = new Date(this.clock.now()).toISOString();
    const def = this.store.save(
      id,
      withWebhookIds(body, webhookId),
      webhookId,
      this.deps.edgeId ?? null,
      now,
      existing,
    );
    this.install(def);
    this.deps.onChange?.({ kind: 'upsert', automation: def });
    return def;
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
            (data, chain) => this.runner!.dispatch(inst, data, false, chain ?? 0),
          ),
        );
      } catch (err) {
        this.log.warn(`trigger ${i} not armed: ${(err as Error).message}`, { automation_id: def.id });
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
    const runner = this.runner!;
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
      const ctx = t.context;
      runner.startRun(inst, {
        trigger: (ctx.variables.trigger ?? {}) as TriggerData,
        runId: t.id,
        resumed: {
          variables: ctx.variables,
          steps: ctx.steps ?? [],
          startedAt: ctx.started_at ?? new Date(this.clock.now()).toISOString(),
          resume: { cursor: ctx.cursor, dueAt: due },
        },
      });
    }
    // queued runs, in the order they were queued, behind any run resumed above
    for (const t of timers) {
      if (t.kind !== 'queued') continue;
      const inst = this.instances.get(t.automationId);
      if (!inst || !inst.def.enabled) continue; // unpersisted in the first pass
      const entry: QueuedRun = {
        runId: t.id,
        trigger: t.context.trigger ?? { platform: null },
        vars: t.context.variables ?? {},
        chain: t.context.chain ?? 1,
      };
      if (inst.def.mode !== 'queued' && inst.runs.size > 0) {
        this.unpersist(t.id);
        continue;
      }
      if (inst.runs.size > 0) inst.queue.push(entry);
      else runner.startQueued(inst, entry);
    }
  }
}

function withWebhookIds(body: AutomationBody, webhookId: string | null): AutomationBody {
  return {
    ...body,
    trigger: body.trigger.map((t) => (t.platform === 'webhook' ? { ...t, webhook_id: webhookId ?? undefined } : t)),
  };
}
