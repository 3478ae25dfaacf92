import { randomUUID } from 'node:crypto';
import type { EntityState, ws } from '@smarthome/protocol';
import type { EventBusPort, MqttPort, RunCause, ServicePort, StateChange, StatePort } from './ports.ts';
import { topicMatches } from './triggers.ts';

/** In-memory ports for tests and the benchmark (and a reference for the core's adapters). */

export class MemoryStates implements StatePort {
  private readonly map = new Map<string, EntityState>();
  private readonly listeners = new Set<(e: StateChange) => void>();
  private readonly now: () => number;
  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  get(entityId: string): EntityState | undefined {
    return this.map.get(entityId);
  }
  all(): EntityState[] {
    return [...this.map.values()];
  }
  onStateChanged(listener: (e: StateChange) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Sets a state and emits state_changed synchronously (like the edge's state machine). */
  set(entityId: string, state: string | null, attributes: Record<string, unknown> = {}): EntityState {
    const old = this.map.get(entityId) ?? null;
    const at = new Date(this.now()).toISOString();
    const [domain] = entityId.split('.');
    const next: EntityState = {
      entity_id: entityId,
      name: entityId,
      domain,
      platform: 'test',
      state,
      attributes,
      last_changed: old && old.state === state ? old.last_changed : at,
      last_updated: at,
    };
    this.map.set(entityId, next);
    for (const l of [...this.listeners]) l({ entity_id: entityId, old_state: old, new_state: next });
    return next;
  }
}

export interface ServiceCall {
  domain: string;
  service: string;
  data: Record<string, unknown>;
  at: number;
}

export class MemoryServices implements ServicePort {
  readonly calls: ServiceCall[] = [];
  /** optional hook: throw to simulate a failing service, return a response */
  handler: ((call: ServiceCall) => unknown) | null = null;
  onCall: ((call: ServiceCall) => void) | null = null;
  async call(domain: string, service: string, data: Record<string, unknown>): Promise<unknown> {
    const call = { domain, service, data, at: performance.now() };
    this.onCall?.(call);
    this.calls.push(call);
    return this.handler ? this.handler(call) : { ok: true };
  }
}

export class MemoryMqtt implements MqttPort {
  private readonly subs = new Set<{ filter: string; listener: (topic: string, payload: string) => void }>();
  subscribe(topicFilter: string, listener: (topic: string, payload: string) => void): () => void {
    const sub = { filter: topicFilter, listener };
    this.subs.add(sub);
    return () => {
      this.subs.delete(sub);
    };
  }
  publish(topic: string, payload: string): void {
    for (const s of [...this.subs]) if (topicMatches(s.filter, topic)) s.listener(topic, payload);
  }
}

export class MemoryEvents implements EventBusPort {
  readonly fired: { type: string; data: Record<string, unknown> }[] = [];
  /** every event as listeners got it, with its chain */
  readonly events: { event: ws.BusEvent; chain: number }[] = [];
  private readonly listeners = new Map<string, Set<(event: ws.BusEvent, chain: number) => void>>();
  fire(eventType: string, data: Record<string, unknown>, cause?: RunCause): void {
    this.fired.push({ type: eventType, data });
    const event: ws.BusEvent = {
      event_type: eventType,
      data,
      origin: 'LOCAL',
      time_fired: new Date().toISOString(),
      context: { id: randomUUID(), parent_id: cause?.context.id ?? null, user_id: null },
    };
    const chain = cause?.chain ?? 0;
    this.events.push({ event, chain });
    for (const key of [eventType, '*']) for (const l of [...(this.listeners.get(key) ?? [])]) l(event, chain);
  }
  on(eventType: string, listener: (event: ws.BusEvent, chain: number) => void): () => void {
    let set = this.listeners.get(eventType);
    if (!set) {
      set = new Set();
      this.listeners.set(eventType, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }
}
