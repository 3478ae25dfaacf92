import type { EntityState, Trigger } from '@smarthome/protocol';
import type { Logger } from '../log.ts';
import type { Clock, EventBusPort, MqttPort, StatePort } from './ports.ts';
import type { AutomationTemplates } from './template.ts';
import { compilePattern, durationMs, MAX_TIMER_MS, nextPatternMatch, nextTimeOfDay, parseTimeOfDay } from './time.ts';

/**
 * Arms triggers. Each `armTrigger` returns a disarm function; `onFire` receives the
 * trigger data (what templates see as `trigger`). Webhook triggers are dispatched by the
 * engine's webhook table, not here. A state/numeric_state `for:` timer is reported to
 * `forTimers` so the engine can persist it and resume it after a restart.
 */

export type TriggerData = Record<string, unknown>;

export interface ForTimerHooks {
  /** a `for:` timer started (persist it) */
  started(key: string, dueAt: number, data: TriggerData): void;
  /** it fired or was cancelled (forget it) */
  ended(key: string): void;
}

export interface TriggerEnv {
  states: StatePort;
  mqtt?: MqttPort;
  events?: EventBusPort;
  clock: Clock;
  templates: AutomationTemplates;
  log: Pick<Logger, 'warn'>;
  forTimers?: ForTimerHooks;
}

export interface ArmedTrigger {
  disarm(): void;
  /** resume a persisted `for:` timer (state/numeric_state only) */
  restoreFor?(entityId: string, dueAt: number, data: TriggerData): void;
}

/** Sleeps with the clock, re-arming for waits beyond setTimeout's range. */
export function clockTimer(clock: Clock, dueAt: number, fn: () => void): () => void {
  let handle: unknown;
  let cancelled = false;
  const arm = () => {
    const left = dueAt - clock.now();
    if (left <= 0) {
      fn();
      return;
    }
    handle = clock.setTimeout(
      () => {
        if (!cancelled) arm();
      },
      Math.min(left, MAX_TIMER_MS),
    );
  };
  arm();
  return () => {
    cancelled = true;
    if (handle !== undefined) clock.clearTimeout(handle);
  };
}

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
const stateMatches = (want: string | string[] | null | undefined, value: string | null | undefined) =>
  want === undefined || want === null || list(want).includes(value ?? '');
const iso = (ms: number) => new Date(ms).toISOString();

/** Value a state/numeric_state trigger looks at: the state or one attribute. */
function valueOf(s: EntityState | null, attribute: string | undefined): unknown {
  if (!s) return undefined;
  return attribute ? s.attributes[attribute] : s.state;
}

export function numericValue(
  env: TriggerEnv,
  s: EntityState | null,
  t: { attribute?: string; value_template?: string },
  vars: Record<string, unknown> = {},
): number | undefined {
  if (!s) return undefined;
  let v: unknown = valueOf(s, t.attribute);
  if (t.value_template) v = env.templates.renderString(t.value_template, { ...vars, state: s, value: v });
  if (v === null || v === undefined || v === '' || typeof v === 'boolean') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** above/below may be numbers or an entity_id whose state is the bound. */
export function bound(env: TriggerEnv, b: number | string | undefined): number | undefined {
  if (b === undefined) return undefined;
  if (typeof b === 'number') return b;
  const n = Number(b);
  if (Number.isFinite(n)) return n;
  const s = env.states.get(b);
  const v = s ? Number(s.state) : NaN;
  return Number.isFinite(v) ? v : undefined;
}

export function inRange(
  env: TriggerEnv,
  value: number | undefined,
  t: { above?: number | string; below?: number | string },
): boolean {
  if (value === undefined) return false;
  const above = bound(env, t.above);
  const below = bound(env, t.below);
  if (t.above !== undefined && (above === undefined || !(value > above))) return false;
  if (t.below !== undefined && (below === undefined || !(value < below))) return false;
  return true;
}

/** MQTT topic filter matching (+ one level, # the rest). */
export function topicMatches(filter: string, topic: string): boolean {
  const f = filter.split('/');
  const t = topic.split('/');
  for (let i = 0; i < f.length; i++) {
    if (f[i] === '#') return true;
    if (i >= t.length) return false;
    if (f[i] !== '+' && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

/** `{}` ⊆ data: every key of `want` equals (deeply, for objects) the value in `data`. */
export function subsetMatches(want: unknown, data: unknown): boolean {
  if (want === null || typeof want !== 'object') return want === data;
  if (data === null || typeof data !== 'object') return false;
  if (Array.isArray(want))
    return Array.isArray(data) && want.length === data.length && want.every((w, i) => subsetMatches(w, data[i]));
  return Object.entries(want as Record<string, unknown>).every(
    ([k, v]) => Object.hasOwn(data as object, k) && subsetMatches(v, (data as Record<string, unknown>)[k]),
  );
}

/** `chain`: for event triggers, how many automation runs led to the event (see RunCause). */
export type FireListener = (data: TriggerData, chain?: number) => void;

/** HA's event trigger `context:` filter: each field equals the context's, or is a list containing it. */
function contextMatches(want: Record<string, unknown>, context: Record<string, unknown>): boolean {
  return Object.entries(want).every(([k, v]) => (Array.isArray(v) ? v.includes(context[k]) : v === context[k]));
}

export function armTrigger(
  trigger: Trigger,
  index: number,
  env: TriggerEnv,
  onFire: FireListener,
  keyPrefix = '',
): ArmedTrigger {
  const base = { id: trigger.id ?? String(index), idx: String(index) };
  switch (trigger.platform) {
    case 'state':
    case 'numeric_state': {
      const t = trigger;
      const entities = list(t.entity_id);
      const forMs = t.for !== undefined ? durationMs(t.for) : 0;
      const pending = new Map<string, () => void>();
      const key = (entityId: string) => `${keyPrefix}${index}:${entityId}`;
      const cancel = (entityId: string) => {
        const c = pending.get(entityId);
        if (c) {
          c();
          pending.delete(entityId);
          env.forTimers?.ended(key(entityId));
        }
      };
      const schedule = (entityId: string, dueAt: number, data: TriggerData) => {
        cancel(entityId);
        const stopTimer = clockTimer(env.clock, dueAt, () => {
          pending.delete(entityId);
          env.forTimers?.ended(key(entityId));
          onFire(data);
        });
        pending.set(entityId, stopTimer);
        env.forTimers?.started(key(entityId), dueAt, data);
      };
      /** does the entity's current state still satisfy the trigger's target? */
      const stillMatches = (s: EntityState | null): boolean => {
        if (!s) return false;
        if (t.platform === 'state')
          return t.to === undefined ? true : stateMatches(t.to, valueOf(s, t.attribute) as string);
        return inRange(env, numericValue(env, s, t), t);
      };
      const fire = (entityId: string, data: TriggerData) => {
        if (forMs > 0) schedule(entityId, env.clock.now() + forMs, data);
        else onFire(data);
      };
      const off = env.states.onStateChanged((e) => {
        if (!entities.includes(e.entity_id)) return;
        const { old_state: from, new_state: to } = e;
        if (pending.has(e.entity_id)) {
          // a `for:` wait is cancelled as soon as the target no longer holds
          const anyChange = t.platform === 'state' && t.from === undefined && t.to === undefined && !t.attribute;
          if (anyChange || !stillMatches(to)) cancel(e.entity_id);
          else return;
        }
        if (!to) return;
        let matched = false;
        if (t.platform === 'state') {
          const oldV = valueOf(from, t.attribute);
          const newV = valueOf(to, t.attribute);
          if (t.from === undefined && t.to === undefined && !t.attribute)
            matched = JSON.stringify(from?.attributes) !== JSON.stringify(to.attributes) || from?.state !== to.state;
          else matched = oldV !== newV && stateMatches(t.from, oldV as string) && stateMatches(t.to, newV as string);
        } else {
          const now = inRange(env, numericValue(env, to, t), t);
          const before = from ? inRange(env, numericValue(env, from, t), t) : false;
          matched = now && !before;
        }
        if (!matched) return;
        fire(e.entity_id, {
          platform: t.platform,
          ...base,
          entity_id: e.entity_id,
          from_state: from,
          to_state: to,
          for: forMs ? forMs / 1000 : null,
          ...(t.attribute ? { attribute: t.attribute } : {}),
          ...(t.platform === 'numeric_state' ? { above: t.above ?? null, below: t.below ?? null } : {}),
        });
      });
      return {
        disarm: () => {
          off();
          // forget in memory only: a persisted `for:` timer survives the disarm of a stop()
          for (const c of pending.values()) c();
          pending.clear();
        },
        restoreFor: (entityId, dueAt, data) => {
          if (!entities.includes(entityId)) return;
          if (!stillMatches(env.states.get(entityId) ?? null)) {
            env.forTimers?.ended(key(entityId));
            return;
          }
          schedule(entityId, dueAt, data);
        },
      };
    }
    case 'time': {
      const times = list(trigger.at).map(parseTimeOfDay);
      const stops = times.map((secs, i) => {
        let stop = () => {};
        const arm = () => {
          const due = nextTimeOfDay(env.clock.now(), secs);
          stop = clockTimer(env.clock, due, () => {
            onFire({ platform: 'time', ...base, now: iso(env.clock.now()), at: list(trigger.at)[i] });
            arm();
          });
        };
        arm();
        return () => stop();
      });
      return {
        disarm: () => {
          for (const s of stops) s();
        },
      };
    }
    case 'time_pattern': {
      const pattern = compilePattern(trigger);
      let stop = () => {};
      const arm = () => {
        const due = nextPatternMatch(env.clock.now(), pattern);
        stop = clockTimer(env.clock, due, () => {
          onFire({ platform: 'time_pattern', ...base, now: iso(env.clock.now()) });
          arm();
        });
      };
      arm();
      return { disarm: () => stop() };
    }
    case 'mqtt': {
      if (!env.mqtt) throw new Error('mqtt triggers need an MQTT broker');
      const t = trigger;
      const off = env.mqtt.subscribe(t.topic, (topic, payload) => {
        if (!topicMatches(t.topic, topic)) return;
        let payloadJson: unknown;
        try {
          payloadJson = JSON.parse(payload);
        } catch {
          payloadJson = undefined;
        }
        if (t.payload !== undefined) {
          let value = payload;
          if (t.value_template) {
            try {
              value = env.templates.renderString(t.value_template, { value: payload, value_json: payloadJson });
            } catch (err) {
              env.log.warn(`mqtt trigger value_template failed: ${(err as Error).message}`);
              return;
            }
          }
          if (value !== t.payload) return;
        }
        onFire({ platform: 'mqtt', ...base, topic, payload, payload_json: payloadJson ?? null, qos: 0 });
      });
      return { disarm: off };
    }
    case 'event': {
      if (!env.events) throw new Error('event triggers need an event bus');
      const t = trigger;
      const types = list(t.event_type);
      let armed = true;
      const offs = types.map((type) =>
        env.events!.on(type, (event, chain) => {
          if (t.event_data && !subsetMatches(t.event_data, event.data)) return;
          if (t.context && !contextMatches(t.context, event.context)) return;
          const data = { platform: 'event', ...base, event: { ...event } };
          // Delivered on a later turn of the event loop, never inside fire(): an automation whose
          // action fires the event it listens to cannot recurse synchronously.
          setImmediate(() => {
            if (armed) onFire(data, chain);
          });
        }),
      );
      return {
        disarm: () => {
          armed = false;
          for (const o of offs) o();
        },
      };
    }
    case 'device': {
      // MQTT device triggers arrive as the discovery's mqtt_device_trigger events on the bus
      if (!env.events) throw new Error('device triggers need an event bus');
      const t = trigger;
      // the schema allows only mqtt; an automation stored or created without it must not arm silently
      if ((t.domain as string) !== 'mqtt')
        throw new Error(`device triggers of domain ${String(t.domain)} are not supported (only mqtt)`);
      let armed = true;
      const off = env.events.on('mqtt_device_trigger', (event, chain) => {
        const d = event.data;
        if (String(d.device_id) !== String(t.device_id) || d.type !== t.type) return;
        if (t.subtype !== undefined && d.subtype !== t.subtype) return;
        if (t.discovery_id !== undefined && d.discovery_id !== t.discovery_id) return;
        // HA attaches an mqtt trigger for a device trigger (mqtt/device_trigger.py), so `trigger`
        // is the mqtt trigger's: platform "mqtt", topic, payload, payload_json, qos, description;
        // the device trigger's own keys are kept beside them
        let payloadJson: unknown;
        try {
          payloadJson = JSON.parse(String(d.payload));
        } catch {
          payloadJson = undefined;
        }
        const data = {
          ...base,
          platform: 'mqtt',
          topic: d.topic,
          payload: d.payload,
          ...(payloadJson === undefined ? {} : { payload_json: payloadJson }),
          qos: 0,
          description: `mqtt topic ${String(d.topic)}`,
          domain: 'mqtt',
          device_id: String(t.device_id),
          type: t.type,
          subtype: d.subtype,
          discovery_id: d.discovery_id,
        };
        setImmediate(() => {
          if (armed) onFire(data, chain);
        });
      });
      return {
        disarm: () => {
          armed = false;
          off();
        },
      };
    }
    case 'webhook':
      return { disarm: () => {} };
  }
}
