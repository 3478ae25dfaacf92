/**
 * The config flow engine: runs flows step by step, validates input against each step's
 * data_schema, turns create_entry into a config entry, and forgets abandoned flows after
 * a TTL (swept by a timer; also checked on every access). How a flow ended stays readable
 * (get()) for a TTL too: an OAuth redirect ends a flow in a browser that then asks for it.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { ConfigFlowResult } from '@smarthome/protocol';
import { conflict, notFound } from '@smarthome/protocol/server';
import type { Logger } from '../log.ts';
import type { ConfigEntryManager } from './entries.ts';
import { checkStepInput } from './schema.ts';
import type { ConfigFlow, Integration, StepResult } from './types.ts';

export const DEFAULT_FLOW_TTL_MS = 10 * 60_000;
export const DEFAULT_MAX_FLOWS = 200;

export interface FlowManagerOptions {
  integrations: ReadonlyMap<string, Integration>;
  entries: ConfigEntryManager;
  log: Logger;
  /** an abandoned flow is forgotten this long after its last step (default 10 minutes) */
  ttlMs?: number;
  /** how often the sweeper runs (default min(ttl, 60 s)) */
  sweepIntervalMs?: number;
  /** flows in progress at once (default 200); more answers 409 */
  maxFlows?: number;
  now?: () => number;
}

type OpenStep = Extract<StepResult, { type: 'form' | 'external' }>;

interface RunningFlow {
  id: string;
  handler: string;
  owner: string | undefined;
  flow: ConfigFlow;
  current: OpenStep;
  /** what the last step answered (the open step, with its errors) */
  last: ConfigFlowResult;
  expiresAt: number;
  /** serializes steps of one flow */
  queue: Promise<unknown>;
}

export class FlowManager {
  private readonly opts: FlowManagerOptions;
  private readonly flows = new Map<string, RunningFlow>();
  /** ended flows: their final result, for get() */
  private readonly ended = new Map<
    string,
    { owner: string | undefined; result: ConfigFlowResult; expiresAt: number }
  >();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(opts: FlowManagerOptions) {
    this.opts = opts;
    this.ttlMs = opts.ttlMs ?? DEFAULT_FLOW_TTL_MS;
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    if (this.sweeper) return;
    const every = this.opts.sweepIntervalMs ?? Math.min(this.ttlMs, 60_000);
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.flows.clear();
    this.ended.clear();
  }

  /** number of flows in progress (expired ones not yet swept excluded) */
  get size(): number {
    this.sweep();
    return this.flows.size;
  }

  handlers(): { domain: string; name: string }[] {
    return [...this.opts.integrations.values()]
      .map((i) => ({ domain: i.domain, name: i.name }))
      .sort((a, b) => a.domain.localeCompare(b.domain));
  }

  sweep(): number {
    const now = this.now();
    let removed = 0;
    for (const [id, f] of this.flows) {
      if (f.expiresAt <= now) {
        this.flows.delete(id);
        removed++;
      }
    }
    for (const [id, e] of this.ended) if (e.expiresAt <= now) this.ended.delete(id);
    if (removed) this.opts.log.debug(`config flow: ${removed} abandoned flow(s) expired`);
    return removed;
  }

  async startFlow(handler: string, owner?: string): Promise<ConfigFlowResult> {
    const integration = this.opts.integrations.get(handler);
    if (!integration) throw notFound('unknown handler');
    if (this.size >= (this.opts.maxFlows ?? DEFAULT_MAX_FLOWS)) throw conflict('too many config flows in progress');
    const id = randomBytes(16).toString('hex');
    const flow = integration.createFlow({
      flowId: id,
      handler,
      entries: () => this.opts.entries.listByDomain(handler),
      log: this.opts.log,
    });
    const running: RunningFlow = {
      id,
      handler,
      owner,
      flow,
      current: { type: 'form', stepId: flow.firstStep, data_schema: [] },
      last: { type: 'form', flowId: id, handler, stepId: flow.firstStep, data_schema: [], errors: {} },
      expiresAt: this.now() + this.ttlMs,
      queue: Promise.resolve(),
    };
    this.flows.set(id, running);
    return this.serialize(running, () => this.runStep(running, flow.firstStep, undefined));
  }

  async advance(flowId: string, input: Record<string, unknown>, owner?: string): Promise<ConfigFlowResult> {
    const running = this.lookup(flowId, owner);
    return this.serialize(running, async () => {
      // The flow may have finished or expired while this request waited its turn.
      if (this.flows.get(flowId) !== running) throw notFound('flow not found');
      const step = running.current;
      const checked = checkStepInput(step.data_schema, input);
      if (!checked.ok) {
        running.expiresAt = this.now() + this.ttlMs;
        running.last = this.toWire(running, { ...step, errors: checked.errors });
        return running.last;
      }
      return this.runStep(running, step.stepId, checked.data);
    });
  }

  /**
   * Advances the flow whose open step declared `callback_state === state` (an OAuth redirect
   * carrying the flow's random state) with `input`, on behalf of the flow's owner: knowing
   * the unguessable state is the authorization. Unknown or expired state → 404.
   */
  async advanceByCallbackState(state: string, input: Record<string, unknown>): Promise<ConfigFlowResult> {
    this.sweep();
    const wanted = Buffer.from(state);
    let match: RunningFlow | undefined;
    for (const f of this.flows.values()) {
      const own = f.current.callback_state;
      if (!own) continue;
      const have = Buffer.from(own);
      if (have.length === wanted.length && timingSafeEqual(have, wanted)) match = f;
    }
    if (!match) throw notFound('unknown or expired state');
    return this.advance(match.id, input, match.owner);
  }

  /**
   * The flow's current step (as its last step answered it, errors included), or how it ended
   * (for a TTL after the end); someone else's flow → 404 like a missing one.
   */
  get(flowId: string, owner?: string): ConfigFlowResult {
    this.sweep();
    const done = this.ended.get(flowId);
    if (done) {
      if (done.owner !== undefined && done.owner !== owner) throw notFound('flow not found');
      return done.result;
    }
    return this.lookup(flowId, owner).last;
  }

  abort(flowId: string, owner?: string): void {
    this.lookup(flowId, owner);
    this.flows.delete(flowId);
  }

  private lookup(flowId: string, owner: string | undefined): RunningFlow {
    const f = this.flows.get(flowId);
    if (!f || f.expiresAt <= this.now()) {
      if (f) this.flows.delete(flowId);
      throw notFound('flow not found');
    }
    // Someone else's flow is indistinguishable from a missing one.
    if (f.owner !== undefined && f.owner !== owner) throw notFound('flow not found');
    return f;
  }

  private serialize<T>(running: RunningFlow, fn: () => Promise<T>): Promise<T> {
    const next = running.queue.then(fn, fn);
    running.queue = next.catch(() => undefined);
    return next;
  }

  private async runStep(
    running: RunningFlow,
    stepId: string,
    input: Record<string, unknown> | undefined,
  ): Promise<ConfigFlowResult> {
    let result: StepResult;
    try {
      result = await running.flow.step(stepId, input);
    } catch (err) {
      this.opts.log.error(`config flow ${running.handler} step ${stepId} failed`, err);
      result = { type: 'abort', reason: 'unknown' };
    }
    if (result.type === 'form' || result.type === 'external') {
      running.current = result;
      running.expiresAt = this.now() + this.ttlMs;
      running.last = this.toWire(running, result);
      return running.last;
    }
    this.flows.delete(running.id);
    const end = await this.finish(running, result);
    // Bounded like the flows in progress: the oldest ended flow goes first.
    if (this.ended.size >= (this.opts.maxFlows ?? DEFAULT_MAX_FLOWS))
      this.ended.delete(this.ended.keys().next().value!);
    this.ended.set(running.id, { owner: running.owner, result: end, expiresAt: this.now() + this.ttlMs });
    return end;
  }

  private async finish(
    running: RunningFlow,
    result: Extract<StepResult, { type: 'abort' | 'create_entry' }>,
  ): Promise<ConfigFlowResult> {
    if (result.type === 'abort')
      return { type: 'abort', flowId: running.id, handler: running.handler, reason: result.reason };
    const entry = await this.opts.entries.create({
      domain: running.handler,
      title: result.title,
      data: result.data,
      source: 'user',
    });
    return {
      type: 'create_entry',
      flowId: running.id,
      handler: running.handler,
      stepId: 'done',
      title: entry.title,
      result: { config_entry_id: entry.id },
    };
  }

  private toWire(running: RunningFlow, step: OpenStep): ConfigFlowResult {
    // callback_state stays on the edge.
    const base = {
      flowId: running.id,
      handler: running.handler,
      stepId: step.stepId,
      data_schema: step.data_schema,
      errors: step.errors ?? {},
    };
    if (step.type === 'external') return { type: 'external', ...base, url: step.url };
    return step.description_placeholders
      ? { type: 'form', ...base, description_placeholders: step.description_placeholders }
      : { type: 'form', ...base };
  }
}
