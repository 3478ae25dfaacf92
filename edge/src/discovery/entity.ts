import type { TemplateEngine } from '../templates/template.ts';
import { payloadJson } from '../templates/template.ts';
import { blockedJsonAttributes } from './blocked-attributes.ts';
import type { Cfg, Component, Ctx, Update } from './components/types.ts';

export interface AvailabilityEntry {
  topic: string;
  available: string;
  notAvailable: string;
  template?: string;
}

export type Subscription =
  { kind: 'state'; key: string } | { kind: 'availability'; index: number } | { kind: 'json_attributes' };

/**
 * One MQTT entity at runtime: its config, the component that interprets it, availability,
 * and the pieces its attributes are made of (static from config, JSON attributes, and what
 * the component tracks, e.g. brightness).
 */
export class MqttEntity {
  /** changes when the user renames the entity (new_entity_id) */
  entityId: string;
  readonly key: string;
  readonly component: Component;
  readonly cfg: Cfg;
  /** the MQTT user who owns its discovery config; null once released (the next publisher claims it) */
  owner: string | null;
  readonly staticAttrs: Record<string, unknown>;
  readonly availability: AvailabilityEntry[];
  private readonly availabilityMode: string;
  private readonly availabilityState: (boolean | undefined)[];
  private lastAvailability: boolean | undefined;
  /** topics a live message reached this entity on while a retained replay ran (the replay's would be older) */
  readonly heard = new Set<string>();
  /** retained replays in progress (messages.ts replayRetained): only then are topics noted in `heard` */
  replaying = 0;
  realState: string | null = null;
  /** enabled_by_default: false: registered but without state or subscriptions (HA: disabled by the integration) */
  disabled = false;
  /** announced as moving to another discovery topic (migrate_discovery): removal of its old topic keeps it */
  migrating = false;
  /** expire_after passed without a state message: unavailable until the next one */
  expired = false;
  private expireTimer: NodeJS.Timeout | null = null;
  /** whether state messages restart an expire_after countdown (touch) */
  readonly expires: boolean;
  attrs: Record<string, unknown> = {};
  jsonAttrs: Record<string, unknown> = {};

  constructor(entityId: string, key: string, component: Component, cfg: Cfg, owner: string | null) {
    this.entityId = entityId;
    this.key = key;
    this.component = component;
    this.cfg = cfg;
    this.owner = owner;
    this.staticAttrs = component.staticAttributes(cfg);
    this.availability = availabilityEntries(cfg);
    this.availabilityMode = typeof cfg.availability_mode === 'string' ? cfg.availability_mode : 'latest';
    this.availabilityState = this.availability.map(() => undefined);
    this.attrs = component.initialAttributes?.(cfg) ?? {};
    this.expires = typeof cfg.expire_after === 'number' && cfg.expire_after > 0;
  }

  /** Topics this entity listens to, with what each carries. */
  subscriptions(): [string, Subscription][] {
    const out: [string, Subscription][] = [];
    if (this.disabled) return out;
    for (const key of Object.keys(this.component.stateHandlers)) {
      const topic = this.cfg[key];
      if (typeof topic === 'string' && topic) out.push([topic, { kind: 'state', key }]);
    }
    this.availability.forEach((a, index) => out.push([a.topic, { kind: 'availability', index }]));
    if (typeof this.cfg.json_attributes_topic === 'string' && this.cfg.json_attributes_topic) {
      out.push([this.cfg.json_attributes_topic, { kind: 'json_attributes' }]);
    }
    return out;
  }

  /** Seeds state and component attributes from the last stored state (after a restart). */
  restore(state: string | null, attributes: Record<string, unknown>): void {
    this.realState = state === 'unavailable' ? null : state;
    const attrs: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(attributes))
      if (!(k in this.staticAttrs) && k !== 'friendly_name') attrs[k] = v;
    this.attrs = { ...this.component.initialAttributes?.(this.cfg), ...attrs };
  }

  ctx(tpl: TemplateEngine): Ctx {
    return { cfg: this.cfg, tpl, state: this.realState, attrs: this.attrs };
  }

  apply(update: Update): void {
    if ('state' in update && update.state !== undefined) this.realState = update.state;
    if (update.attrs) {
      const next = { ...this.attrs };
      for (const [k, v] of Object.entries(update.attrs)) {
        if (v === undefined) delete next[k];
        else next[k] = v;
      }
      this.attrs = next;
    }
  }

  /** Returns true when the availability changed. */
  setAvailability(index: number, payload: string, tpl: TemplateEngine): boolean {
    const entry = this.availability[index];
    const v = entry.template ? tpl.renderValue(entry.template, payload) : payload;
    let available: boolean;
    if (v === entry.available) available = true;
    else if (v === entry.notAvailable) available = false;
    else return false;
    const before = this.available;
    this.availabilityState[index] = available;
    this.lastAvailability = available;
    return before !== this.available;
  }

  /**
   * A template failed on a message of `sub`: what it carries becomes unknown (see
   * Component.failedValue; JSON attributes are dropped, an availability topic counts as
   * "not available"). Returns true when the entity changed.
   */
  templateFailed(sub: Subscription, tpl: TemplateEngine): boolean {
    if (sub.kind === 'availability') {
      const before = this.available;
      this.availabilityState[sub.index] = false;
      this.lastAvailability = false;
      return before !== this.available;
    }
    if (sub.kind === 'json_attributes') {
      const had = Object.keys(this.jsonAttrs).length > 0;
      this.jsonAttrs = {};
      return had;
    }
    const declared = this.component.failedValue?.[sub.key];
    const failed = declared !== undefined ? declared : sub.key === 'state_topic' ? unavailableState : null;
    if (!failed) return false;
    const before = JSON.stringify([this.realState, this.attrs]);
    this.apply(failed(this.ctx(tpl)));
    return JSON.stringify([this.realState, this.attrs]) !== before;
  }

  setJsonAttributes(payload: string, tpl: TemplateEngine): boolean {
    const tplSrc =
      typeof this.cfg.json_attributes_template === 'string' ? this.cfg.json_attributes_template : undefined;
    const text = tplSrc ? tpl.renderValue(tplSrc, payload) : payload;
    const doc = payloadJson(text);
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return false;
    const blocked = blockedJsonAttributes(this.component.domain);
    const attrs: Record<string, unknown> = {};
    for (const k of Object.keys(doc)) if (!blocked.has(k)) attrs[k] = (doc as Record<string, unknown>)[k];
    this.jsonAttrs = attrs;
    return true;
  }

  /**
   * Not available only after a "not available" payload; before any availability message
   * the entity counts as available (its restored state shows, see README).
   */
  get available(): boolean {
    if (this.availability.length === 0) return true;
    if (this.availabilityMode === 'all') return this.availabilityState.every((a) => a !== false);
    if (this.availabilityMode === 'any') return this.availabilityState.some((a) => a !== false);
    return this.lastAvailability !== false;
  }

  currentState(): string | null {
    return this.available && !this.expired ? this.realState : 'unavailable';
  }

  /** expire_after (seconds): restarts the countdown after a state message; `onExpire` when it runs out. */
  touch(onExpire: () => void): void {
    const secs = typeof this.cfg.expire_after === 'number' ? this.cfg.expire_after : 0;
    if (secs <= 0) return;
    this.expired = false;
    this.clearExpiry();
    this.expireTimer = setTimeout(() => {
      this.expired = true;
      onExpire();
    }, secs * 1000);
    this.expireTimer.unref();
  }

  clearExpiry(): void {
    if (this.expireTimer) clearTimeout(this.expireTimer);
    this.expireTimer = null;
  }

  /**
   * As HA's Entity: capability and state attributes, then the JSON attributes over them (HA's
   * extra_state_attributes), which cannot carry the keys HA blocks (blocked-attributes.ts).
   */
  attributes(): Record<string, unknown> {
    const own = this.component.presentAttributes
      ? this.component.presentAttributes(this.cfg, this.realState, this.attrs)
      : this.attrs;
    return { ...this.staticAttrs, ...own, ...this.jsonAttrs };
  }
}

const unavailableState = (): Update => ({ state: 'unavailable' });

function availabilityEntries(cfg: Cfg): AvailabilityEntry[] {
  const s = (v: unknown, d: string) => (typeof v === 'string' ? v : d);
  const topAvail = s(cfg.payload_available, 'online');
  const topNot = s(cfg.payload_not_available, 'offline');
  const out: AvailabilityEntry[] = [];
  if (typeof cfg.availability_topic === 'string' && cfg.availability_topic) {
    out.push({
      topic: cfg.availability_topic,
      available: topAvail,
      notAvailable: topNot,
      template: typeof cfg.availability_template === 'string' ? cfg.availability_template : undefined,
    });
  }
  if (Array.isArray(cfg.availability)) {
    for (const a of cfg.availability as Record<string, unknown>[]) {
      if (typeof a.topic !== 'string' || !a.topic) continue;
      out.push({
        topic: a.topic,
        available: s(a.payload_available, 'online'),
        notAvailable: s(a.payload_not_available, 'offline'),
        template: typeof a.value_template === 'string' ? a.value_template : undefined,
      });
    }
  }
  return out;
}
