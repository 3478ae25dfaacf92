/**
 * What the automation engine needs from the edge core. The core adapts its state
 * machine, service registry, MQTT broker and event bus to these ports; memory-ports.ts
 * has in-memory versions used by the tests and the benchmark.
 */
import type Database from 'better-sqlite3';
import type { Automation, EntityState, ws } from '@smarthome/protocol';
import type { Logger } from '../log.ts';
import type { CallUrlOptions } from './call-url.ts';

export interface StateChange {
  entity_id: string;
  old_state: EntityState | null;
  new_state: EntityState | null;
}

export interface StatePort {
  get(entityId: string): EntityState | undefined;
  all(): EntityState[];
  /** Called synchronously for every state change; returns an unsubscribe function. */
  onStateChanged(listener: (event: StateChange) => void): () => void;
}

/**
 * The automation run behind a service call or an event: its context (the event's parent) and
 * `chain`, how many runs led to it one after another (the engine refuses long chains: loops).
 */
export interface RunCause {
  context: ws.EventContext;
  chain: number;
}

export interface ServicePort {
  /** `data.entity_id` carries the target (string or array) when the action names one. */
  call(domain: string, service: string, data: Record<string, unknown>, cause?: RunCause): Promise<unknown>;
}

export interface MqttPort {
  /** MQTT topic filter with + and # wildcards. */
  subscribe(topicFilter: string, listener: (topic: string, payload: string) => void): () => void;
  publish?(topic: string, payload: string, options?: { retain?: boolean; qos?: 0 | 1 }): Promise<void> | void;
}

/**
 * Home Assistant's event bus: named events (state_changed and call_service included, as HA
 * shapes them). Listeners may be called synchronously; the engine defers what they trigger.
 */
export interface EventBusPort {
  /** `cause`: the run firing it (the event's context then has the run's as parent) */
  fire(eventType: string, data: Record<string, unknown>, cause?: RunCause): void;
  /** `'*'` listens to every event; `chain` is the cause's (0 when no automation run caused it). */
  on(eventType: string, listener: (event: ws.BusEvent, chain: number) => void): () => void;
}

export type TimerHandle = unknown;
export interface Clock {
  /** epoch milliseconds */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** The cloud's plan limit (403 plan_limit_reached); the edge default allows everything. */
export interface PlanLimit {
  assertCanCreate(currentCount: number): void | Promise<void>;
}

export interface AutomationDeps {
  /** the edge's own better-sqlite3 connection; the engine creates its automation_* tables on it */
  sqlite: Database.Database | (() => Database.Database);
  states: StatePort;
  services: ServicePort;
  mqtt?: MqttPort;
  events?: EventBusPort;
  clock?: Clock;
  planLimit?: PlanLimit;
  /** the shared structured logger; lines about an automation carry automation_id (and run_id for a run) */
  log?: Logger;
  /** this edge's id in the cloud (echoed in Automation.edge_id) */
  edgeId?: number | null;
  callUrl?: CallUrlOptions;
  /** webhook flood control; defaults: 10 requests/s, burst 20 per webhook_id */
  webhookRate?: { perSecond: number; burst: number };
  /** keep this many runs per automation (and as many failed runs): default 20 */
  traceRetention?: number;
  /** hard cap on repeat iterations in one repeat action: default 10,000 */
  maxRepeat?: number;
  /** automation runs one event may lead to in a row, each firing what triggers the next (loop guard): default 20 */
  maxEventChain?: number;
  /** told about every definition change (the cloud tunnel mirrors them) */
  onChange?: (change: { kind: 'upsert'; automation: Automation } | { kind: 'remove'; id: string }) => void;
}
