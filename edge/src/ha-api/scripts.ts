import { randomUUID } from 'node:crypto';
import { Action, Trigger, normalizeTrigger, type EntityState } from '@smarthome/protocol';
import type { HaContext } from '@smarthome/protocol/ha/index';
import { describeZodError } from '@smarthome/protocol/server';
import { HaCommandError, newContextId, type Unsubscribe } from '@smarthome/protocol/server/ha/index';
import { UrlCaller } from '../automation/call-url.ts';
import { systemClock, type MqttPort, type StatePort } from '../automation/ports.ts';
import { RunAborted, StopRun, runSequence, type RunEnv, type RunState } from '../automation/script.ts';
import { AutomationTemplates, TemplateError } from '../automation/template.ts';
import { armTrigger, topicMatches, type TriggerData } from '../automation/triggers.ts';
import { haEventBus } from '../bus-events.ts';
import type { EventBus } from '../bus.ts';
import type { Logger } from '../log.ts';
import type { MqttBroker } from '../mqtt/broker.ts';
import { ServiceCallError, UnknownEntityError, type ServiceRegistry } from '../services/services.ts';
import type { StateMachine } from '../states/state-machine.ts';
import { toHaState } from './states.ts';

export interface HaScriptsDeps {
  states: StateMachine;
  services: ServiceRegistry;
  bus: EventBus;
  broker?: MqttBroker;
  log: Logger;
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);
const context = (): HaContext => ({ id: newContextId(), parent_id: null, user_id: null });

export function parseTriggers(config: unknown): Trigger[] {
  return list(config).map((t, i) => {
    const parsed = Trigger.safeParse(normalizeTrigger(t));
    if (!parsed.success) throw new HaCommandError('invalid_format', `trigger[${i}]: ${describeZodError(parsed.error)}`);
    return parsed.data;
  });
}

export function parseActions(config: unknown): Action[] {
  return list(config).map((a, i) => {
    const parsed = Action.safeParse(a);
    if (!parsed.success)
      throw new HaCommandError('invalid_format', `sequence[${i}]: ${describeZodError(parsed.error)}`);
    return parsed.data;
  });
}

/** Trigger data in HA's shapes: the states as HA state objects. */
function haTriggerData(data: TriggerData): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  for (const key of ['from_state', 'to_state'] as const) {
    const s = data[key] as EntityState | null | undefined;
    if (s && typeof s === 'object') out[key] = toHaState(s, s.last_updated ?? new Date().toISOString());
  }
  return out;
}

/**
 * The context HA passes with a fire: the new state's (state, numeric_state triggers) or the
 * event's (event triggers); other triggers (time, time_pattern, mqtt) have none.
 */
function triggerContext(trigger: Record<string, unknown>): HaContext | null {
  const source = (trigger.to_state ?? trigger.event) as { context?: HaContext } | null | undefined;
  const ctx = source?.context;
  return ctx && typeof ctx.id === 'string'
    ? { id: ctx.id, parent_id: ctx.parent_id ?? null, user_id: ctx.user_id ?? null }
    : null;
}

/**
 * subscribe_trigger and execute_script on the automation engine's own trigger and action code
 * (armTrigger, runSequence), outside any automation: no trace is kept, nothing is persisted.
 */
export class HaScripts {
  private readonly env: RunEnv;
  private readonly running = new Set<AbortController>();

  constructor(deps: HaScriptsDeps) {
    const clock = systemClock;
    const statePort: StatePort = {
      get: (id) => deps.states.get(id),
      all: () => deps.states.all(),
      onStateChanged: (l) => deps.bus.on('state_changed', l),
    };
    const mqtt: MqttPort | undefined = deps.broker && {
      subscribe: (filter, listener) =>
        deps.broker!.onMessage((topic, payload) => {
          if (topicMatches(filter, topic)) listener(topic, payload.toString('utf8'));
        }),
      publish: (topic, payload, options) => deps.broker!.publish(topic, payload, options),
    };
    this.env = {
      states: statePort,
      mqtt,
      events: haEventBus(deps.bus),
      clock,
      templates: new AutomationTemplates(statePort, {}, clock),
      log: deps.log,
      services: {
        call: async (domain, service, data, cause) => {
          const { entity_id: target, ...rest } = data;
          const ids = target === undefined ? [] : Array.isArray(target) ? target.map(String) : [String(target)];
          return deps.services.call({ domain, service, entity_ids: ids, data: rest, cause });
        },
      },
      caller: new UrlCaller({ policy: 'lan-allowed' }),
      maxRepeat: 10_000,
      maxTraceSteps: 0,
      suspend: { save: () => {}, clear: () => {} },
    };
  }

  /** subscribe_trigger: `listener` gets `{variables: {trigger}, context}` each time one fires. */
  subscribeTrigger(
    config: unknown,
    variables: Record<string, unknown>,
    listener: (event: { variables: Record<string, unknown>; context: HaContext | null }) => void,
  ): Unsubscribe {
    const triggers = parseTriggers(config);
    const armed: { disarm(): void }[] = [];
    try {
      triggers.forEach((t, i) => {
        if (t.platform === 'webhook')
          throw new HaCommandError('invalid_format', `trigger[${i}]: webhook triggers belong to automations`);
        armed.push(
          armTrigger(t, i, this.env, (data) => {
            const trigger = haTriggerData(data);
            listener({ variables: { ...variables, trigger }, context: triggerContext(trigger) });
          }),
        );
      });
    } catch (err) {
      for (const a of armed) a.disarm();
      if (err instanceof HaCommandError) throw err;
      throw new HaCommandError('invalid_format', (err as Error).message);
    }
    return () => {
      for (const a of armed) a.disarm();
    };
  }

  /**
   * execute_script: runs the sequence; `response` is what a top-level `stop` with
   * `response_variable` returns (HA's script response), else null.
   */
  async executeScript(
    sequence: unknown,
    variables: Record<string, unknown>,
  ): Promise<{ context: HaContext; response: unknown }> {
    const actions = parseActions(sequence);
    // the action schema keeps no response_variable on `stop`: read it from what was sent
    const raw = list(sequence) as Record<string, unknown>[];
    const ctx = context();
    const controller = new AbortController();
    this.running.add(controller);
    const run: RunState = {
      runId: randomUUID(),
      automationId: 'execute_script',
      variables: { ...variables, context: ctx },
      steps: [],
      signal: controller.signal,
      cause: { context: { id: ctx.id, parent_id: null, user_id: null }, chain: 0 },
    };
    try {
      for (let i = 0; i < actions.length; i++) {
        const responseVariable = 'stop' in actions[i] ? raw[i]?.response_variable : undefined;
        if (typeof responseVariable === 'string')
          return { context: ctx, response: run.variables[responseVariable] ?? null };
        await runSequence([actions[i]], 'sequence', [i], run, this.env);
      }
      return { context: ctx, response: null };
    } catch (err) {
      if (err instanceof StopRun) {
        if (err.failed) throw new HaCommandError('home_assistant_error', err.message);
        return { context: ctx, response: null };
      }
      if (err instanceof RunAborted) throw new HaCommandError('home_assistant_error', 'Script stopped');
      // HA: these (and template errors) are HomeAssistantError
      if (err instanceof UnknownEntityError || err instanceof ServiceCallError || err instanceof TemplateError)
        throw new HaCommandError('home_assistant_error', err.message);
      if (err instanceof HaCommandError) throw err;
      throw new HaCommandError('unknown_error', (err as Error).message ?? String(err));
    } finally {
      this.running.delete(controller);
    }
  }

  /** Aborts running scripts (the edge stops). */
  stop(): void {
    for (const c of this.running) c.abort('shutdown');
    this.running.clear();
  }
}
