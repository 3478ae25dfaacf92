/**
 * The integration contract: an integration provides a config flow (steps) and knows how
 * to set up (and unload) a config entry created by that flow.
 */
import type { DataSchemaField } from '@smarthome/protocol';
import type { Logger } from '../log.ts';
import type { DeviceRegistryPort, MaybePromise, ServicePlatformPort, StatePort, StoredConfigEntry } from './ports.ts';

export type StepErrors = Record<string, string>;

/** What a flow step answers; the engine turns it into the wire ConfigFlowResult. */
export type StepResult =
  | {
      type: 'form';
      stepId: string;
      data_schema: DataSchemaField[];
      errors?: StepErrors;
      description_placeholders?: Record<string, string>;
      /**
       * A random, unguessable value (an OAuth 2.0 `state`): `GET /v1/config_flow/oauth/callback?state=<it>&…`
       * advances this step with the callback's query parameters, without a bearer token.
       * Never sent to clients by the engine (put it in a placeholder if the client needs it).
       */
      callback_state?: string;
    }
  | {
      type: 'external';
      stepId: string;
      url: string;
      data_schema: DataSchemaField[];
      errors?: StepErrors;
      callback_state?: string;
    }
  | { type: 'create_entry'; title: string; data: Record<string, unknown> }
  | { type: 'abort'; reason: string };

export interface FlowContext {
  readonly flowId: string;
  readonly handler: string;
  /** existing config entries of this integration (for duplicate checks) */
  entries(): Promise<StoredConfigEntry[]>;
  log: Logger;
}

/**
 * One running flow (one per POST /v1/config_flow). The engine calls `step(stepId)` without
 * input to get the first form, and `step(stepId, input)` with input that already passed the
 * step's data_schema (required fields present, types coerced, defaults applied).
 */
export interface ConfigFlow {
  readonly firstStep: string;
  step(stepId: string, input?: Record<string, unknown>): MaybePromise<StepResult>;
}

export interface EntryContext {
  readonly devices: DeviceRegistryPort;
  readonly states: StatePort;
  /** lets the entry's entities answer service calls (light.turn_on, …) */
  readonly services: ServicePlatformPort;
  log: Logger;
  /** persists new entry data (e.g. refreshed OAuth tokens) */
  updateData(data: Record<string, unknown>): Promise<void>;
}

/** What a set-up entry keeps running (timers, connections); unload stops it. */
export interface EntryRuntime {
  unload(): MaybePromise<void>;
}

export interface Integration {
  /** e.g. "mqtt"; the `handler` of config flows and the `domain` of config entries */
  readonly domain: string;
  /** human-readable name for GET /v1/config_flow/handlers */
  readonly name: string;
  createFlow(ctx: FlowContext): ConfigFlow;
  /** Creates devices/entities and starts timers; may throw (entry state becomes setup_error). */
  setupEntry?(entry: StoredConfigEntry, ctx: EntryContext): MaybePromise<EntryRuntime | void>;
}
