import type { EntityState } from '@smarthome/protocol';
import type { RenderContext } from './interpreter.ts';
import { Namespace } from './objects.ts';
import { PyDateTime, parseDateTime } from './datetime.ts';
import { NO_DEFAULT, haRound, pyFloat, toBool, toFloat, toInt } from './ha-filters.ts';
import {
  Callable,
  RenderError,
  type HasAttrs,
  tuple,
  compare,
  dict,
  equals,
  float,
  isDict,
  isList,
  isNum,
  iterate,
  num,
  repr,
  str,
  truthy,
} from './values.ts';

/**
 * Home Assistant's state globals: states('x'), states.domain.object_id, iteration over
 * states and states.domain, is_state, state_attr, is_state_attr, has_value, expand; each
 * records what it read in the render's RenderInfo (what render_template subscriptions follow).
 */

/** What the engine reads the state machine through (the automation StatePort fits). */
export interface TemplateStates {
  get(entityId: string): EntityState | undefined;
  all(): EntityState[];
}

const ENTITY_ID = /^[a-z0-9_]+\.[a-z0-9_]+$/;
const SLUG = /^[a-z0-9_]+$/;

/** A state as templates see it (HA's TemplateState): attributes are copies, times are datetimes. */
export class TemplateState {
  readonly pyType = 'TemplateState';
  private readonly s: EntityState;
  constructor(s: EntityState) {
    this.s = s;
  }
  get entityId(): string {
    return this.s.entity_id;
  }
  get state(): string {
    return this.s.state ?? 'unknown';
  }
  getAttr(name: string): unknown {
    const s = this.s;
    const [domain, objectId] = s.entity_id.split('.') as [string, string];
    switch (name) {
      case 'entity_id':
        return s.entity_id;
      case 'state':
        return this.state;
      case 'domain':
        return domain;
      case 'object_id':
        return objectId;
      case 'name':
        return typeof s.attributes.friendly_name === 'string'
          ? s.attributes.friendly_name
          : s.name || objectId.replace(/_/g, ' ');
      case 'attributes':
        return copy(s.attributes);
      case 'last_changed':
      case 'last_updated':
      case 'last_reported': {
        const at = (s as unknown as Record<string, unknown>)[name] ?? s.last_updated;
        const d = typeof at === 'string' ? parseDateTime(at) : null;
        return d ? new PyDateTime(d.ms, 0) : null;
      }
      case 'state_with_unit': {
        const unit = s.attributes.unit_of_measurement;
        return typeof unit === 'string' && unit ? `${this.state} ${unit}` : this.state;
      }
      case 'context':
        return dict([
          ['id', null],
          ['parent_id', null],
          ['user_id', null],
        ]);
      default:
        return undefined;
    }
  }
  pyStr(): string {
    const attrs = Object.entries(this.s.attributes)
      .map(([k, v]) => `${k}=${str(v)}`)
      .join(', ');
    return `<template TemplateState(<state ${this.s.entity_id}=${this.state}${attrs ? `; ${attrs}` : ''} @ ${this.s.last_changed ?? ''}>)>`;
  }
  pyRepr(): string {
    return this.pyStr();
  }
  pyEquals(o: unknown): boolean {
    return o instanceof TemplateState && o.s === this.s;
  }
  toJSON(): unknown {
    return {
      entity_id: this.s.entity_id,
      state: this.state,
      attributes: this.s.attributes,
      last_changed: this.s.last_changed,
      last_updated: this.s.last_updated,
    };
  }
}

/** JSON-like copy into the template's dict type (no shared references with the state machine). */
function copy(v: unknown, depth = 0): unknown {
  if (depth > 32) return null;
  if (Array.isArray(v)) return v.map((x) => copy(x, depth + 1));
  if (v && typeof v === 'object') return dict(Object.entries(v).map(([k, x]) => [k, copy(x, depth + 1)]));
  return v;
}

const byId = (a: TemplateState, b: TemplateState) => (a.entityId < b.entityId ? -1 : a.entityId > b.entityId ? 1 : 0);

class DomainStates {
  readonly pyType = 'DomainStates';
  private readonly ctx: RenderContext;
  private readonly states: TemplateStates;
  private readonly domain: string;
  constructor(ctx: RenderContext, states: TemplateStates, domain: string) {
    this.ctx = ctx;
    this.states = states;
    this.domain = domain;
  }
  getAttr(objectId: string): unknown {
    if (!SLUG.test(objectId)) return undefined;
    const id = `${this.domain}.${objectId}`;
    this.ctx.info.entities.add(id);
    const s = this.states.get(id);
    // as in Home Assistant: a valid id without a state is None (its .state is then undefined)
    return s ? new TemplateState(s) : null;
  }
  pyIter(): TemplateState[] {
    this.ctx.info.domains.add(this.domain);
    return this.states
      .all()
      .filter((s) => s.entity_id.startsWith(`${this.domain}.`))
      .map((s) => new TemplateState(s))
      .sort(byId);
  }
  pyStr(): string {
    return `<template DomainStates('${this.domain}')>`;
  }
}

/** `states`: callable (states('x')), attribute access by domain, iterable over all states. */
class AllStates extends Callable {
  readonly pyType = 'AllStates';
  private readonly ctx: RenderContext;
  private readonly states: TemplateStates;
  constructor(ctx: RenderContext, states: TemplateStates) {
    super('states', (a, kw) => this.stateOf(a[0], truthy(a[1] ?? kw.rounded), truthy(a[2] ?? kw.with_unit)));
    this.ctx = ctx;
    this.states = states;
  }
  private stateOf(id: unknown, rounded: boolean, withUnit: boolean): string {
    const s = read(this.ctx, this.states, id);
    if (!s) return 'unknown';
    let value = s.state ?? 'unknown';
    if (rounded && pyFloat(value) !== undefined) {
      const precision = s.attributes.display_precision;
      value = str(isNum(precision) ? haRound(value, precision) : toFloat(value));
    }
    const unit = s.attributes.unit_of_measurement;
    return withUnit && typeof unit === 'string' && unit ? `${value} ${unit}` : value;
  }
  getAttr(domain: string): unknown {
    return SLUG.test(domain) ? new DomainStates(this.ctx, this.states, domain) : undefined;
  }
  pyIter(): TemplateState[] {
    this.ctx.info.allStates = true;
    return this.states
      .all()
      .map((s) => new TemplateState(s))
      .sort(byId);
  }
  pyStr(): string {
    return '<template AllStates>';
  }
}

/** One entity's state by id (a string or a TemplateState), recorded as read. */
function read(ctx: RenderContext, states: TemplateStates, id: unknown): EntityState | undefined {
  const entityId = id instanceof TemplateState ? id.entityId : id;
  if (typeof entityId !== 'string') throw new RenderError(`an entity id must be a string, not ${repr(entityId)}`);
  const lower = entityId.toLowerCase();
  if (!ENTITY_ID.test(lower)) return undefined;
  ctx.info.entities.add(lower);
  return states.get(lower);
}

function expand(ctx: RenderContext, states: TemplateStates, args: unknown[]): TemplateState[] {
  const found = new Map<string, TemplateState>();
  const queue = [...args];
  const seen = new Set<string>();
  while (queue.length) {
    ctx.countIteration();
    const item = queue.shift();
    if (isList(item) || item instanceof DomainStates || item instanceof AllStates) {
      queue.push(...iterate(item));
      continue;
    }
    const id = item instanceof TemplateState ? item.entityId : typeof item === 'string' ? item : undefined;
    if (!id || seen.has(id)) continue;
    seen.add(id);
    const s = read(ctx, states, id);
    if (!s) continue;
    const members = s.attributes.entity_id;
    if (Array.isArray(members) && (s.entity_id.startsWith('group.') || s.domain === 'group' || members.length))
      queue.push(...members);
    else found.set(s.entity_id, new TemplateState(s));
  }
  return [...found.values()].sort(byId);
}

/** The globals of one render: HA's state functions bound to this render's RenderInfo, and Python builtins. */
export function stateGlobals(ctx: RenderContext, states: TemplateStates, maxRange: number): Record<string, unknown> {
  const fn = (name: string, f: (a: unknown[], kw: Record<string, unknown>) => unknown) => new Callable(name, f);
  const attrOf = (id: unknown, name: unknown) => {
    const s = read(ctx, states, id);
    return s && typeof name === 'string' && Object.hasOwn(s.attributes, name) ? copy(s.attributes[name]) : null;
  };
  const dflt = (a: unknown[], i: number, kw: Record<string, unknown>) =>
    a.length > i ? a[i] : Object.hasOwn(kw, 'default') ? kw.default : NO_DEFAULT;
  const minmax = (sign: number) =>
    fn(sign < 0 ? 'min' : 'max', (a) => {
      const items = a.length === 1 ? iterate(a[0]) : a;
      if (!items.length) throw new RenderError(`${sign < 0 ? 'min' : 'max'}() arg is an empty sequence`);
      return items.reduce((best, v) => (compare(v, best, '<') * sign > 0 ? v : best));
    });
  return {
    states: new AllStates(ctx, states),
    is_state: fn('is_state', (a) => {
      const s = read(ctx, states, a[0]);
      const want = a[1];
      return (
        !!s && (isList(want) ? want.some((w) => equals(w, s.state ?? 'unknown')) : equals(want, s.state ?? 'unknown'))
      );
    }),
    state_attr: fn('state_attr', (a) => attrOf(a[0], a[1])),
    is_state_attr: fn('is_state_attr', (a) => {
      const s = read(ctx, states, a[0]);
      return (
        !!s && typeof a[1] === 'string' && Object.hasOwn(s.attributes, a[1]) && equals(copy(s.attributes[a[1]]), a[2])
      );
    }),
    has_value: fn('has_value', (a) => {
      const s = read(ctx, states, a[0]);
      return !!s && s.state !== null && s.state !== 'unknown' && s.state !== 'unavailable';
    }),
    expand: fn('expand', (a) => expand(ctx, states, a)),
    float: fn('float', (a, kw) => toFloat(a[0], dflt(a, 1, kw))),
    int: fn('int', (a, kw) => toInt(a[0], dflt(a, 1, kw), Number(a[2] ?? kw.base ?? 10))),
    bool: fn('bool', (a, kw) => toBool(a[0], dflt(a, 1, kw))),
    iif: fn('iif', (a) => ctx.filter('iif', a[0], a.slice(1))),
    is_number: fn('is_number', (a) => ctx.filter('is_number', a[0])),
    average: fn('average', (a, kw) => ctx.filter('average', a.length === 1 ? a[0] : a, [], kw)),
    median: fn('median', (a) => ctx.filter('median', a.length === 1 ? a[0] : a)),
    log: fn('log', (a) => ctx.filter('log', a[0], a.slice(1))),
    sin: fn('sin', (a) => ctx.filter('sin', a[0], a.slice(1))),
    cos: fn('cos', (a) => ctx.filter('cos', a[0], a.slice(1))),
    tan: fn('tan', (a) => ctx.filter('tan', a[0], a.slice(1))),
    sqrt: fn('sqrt', (a) => ctx.filter('sqrt', a[0], a.slice(1))),
    min: minmax(-1),
    max: minmax(1),
    pi: float(Math.PI),
    e: float(Math.E),
    tau: float(2 * Math.PI),
    inf: float(Infinity),
    range: fn('range', (a) => {
      const ints = a.map((x) => {
        if (!isNum(x) || !Number.isInteger(num(x)))
          throw new RenderError(`range() integer argument expected, got ${repr(x)}`);
        return num(x);
      });
      const [start, stop, step] = ints.length === 1 ? [0, ints[0]!, 1] : [ints[0]!, ints[1]!, ints[2] ?? 1];
      if (step === 0) throw new RenderError('range() arg 3 must not be zero');
      const n = Math.max(0, Math.ceil((stop - start) / step));
      if (n > maxRange) throw new RenderError(`range() longer than ${maxRange} (the sandbox's limit)`);
      return Array.from({ length: n }, (_, i) => start + i * step);
    }),
    zip: fn('zip', (a) => {
      const lists = a.map(iterate);
      const n = lists.length ? Math.min(...lists.map((l) => l.length)) : 0;
      return Array.from({ length: n }, (_, i) => tuple(lists.map((l) => l[i])));
    }),
    namespace: fn('namespace', (a, kw) => new Namespace({ ...(isDict(a[0]) ? a[0] : {}), ...kw })),
    dict: new DictBuiltin(),
  };
}

const pairsToDict = (v: unknown): Record<string, unknown> =>
  dict(
    isDict(v)
      ? Object.entries(v)
      : isList(v) || v !== undefined
        ? iterate(v).map((p) => {
            const [k, val] = iterate(p);
            return [str(k), val] as [string, unknown];
          })
        : [],
  );

/**
 * dict(): Jinja's global, plus `dict.fromkeys(keys, value=None)` (Python) and
 * `dict.from_keys(pairs)`, which zigbee2mqtt's event templates call to build a mapping from
 * (key, value) pairs.
 */
class DictBuiltin extends Callable implements HasAttrs {
  constructor() {
    super('dict', (a, kw) => {
      const d = pairsToDict(a[0]);
      for (const [k, v] of Object.entries(kw)) d[k] = v;
      return d;
    });
  }

  getAttr(name: string): unknown {
    if (name === 'from_keys') return new Callable('dict.from_keys', (a) => pairsToDict(a[0]));
    if (name === 'fromkeys')
      return new Callable('dict.fromkeys', (a) =>
        dict(iterate(a[0]).map((k) => [str(k), a[1] ?? null] as [string, unknown])),
      );
    return undefined;
  }
}
