import { TemplateEngine, TemplateError, type TemplateLimits } from '../templates/template.ts';
import type { StatePort } from './ports.ts';

/**
 * Automation templates on top of the edge's sandboxed liquidjs engine
 * (edge/src/templates: ownPropertyOnly, parse/render/memory limits, output cap).
 * Adds Home Assistant's state functions by rewriting calls into lookups on
 * prototype-less proxies (nothing callable is ever exposed to a template):
 *   states('x')            → __st[x]          (state string, 'unknown' when missing)
 *   state_attr('x', 'a')   → __attr[x][a]     (attribute value)
 *   is_state('x', 'on')    → __st[x] == 'on'
 *   states.light.kitchen.state / .attributes.brightness also work.
 */

export { TemplateError };

const IDENT = /^[a-z0-9_]+\.[a-z0-9_]+$/;
const ARG = String.raw`\s*((?:'[^']*'|"[^"]*"|[A-Za-z_][\w.\[\]'"]*))\s*`;
const RE_STATES = new RegExp(String.raw`\bstates\(${ARG}\)`, 'g');
const RE_ATTR = new RegExp(String.raw`\bstate_attr\(${ARG},${ARG}\)`, 'g');
const RE_IS_STATE = new RegExp(String.raw`\bis_state\(${ARG},${ARG}\)`, 'g');
const RE_IS_ATTR = new RegExp(String.raw`\bis_state_attr\(${ARG},${ARG},${ARG}\)`, 'g');

/** Jinja's `{{ x | float > 20 }}` (a comparison after filters; Liquid cannot) → assign + if. */
const RE_FILTER_CMP = /\{\{-?\s*([^{}]*?\|[^{}]*?)\s+(==|!=|>=|<=|>|<)\s+([^{}|]+?)\s*-?\}\}/g;
let cmpSeq = 0;

/** HA function-call syntax → Liquid lookups (exported for tests). */
export function rewriteHaFunctions(src: string): string {
  return src
    .replace(RE_FILTER_CMP, (_m, lhs: string, op: string, rhs: string) => {
      const v = `__cmp${cmpSeq++ % 1000}`;
      return `{% assign ${v} = ${lhs} %}{% if ${v} ${op} ${rhs} %}true{% else %}false{% endif %}`;
    })
    .replace(RE_IS_ATTR, (_m, e: string, a: string, v: string) => `__attr[${e}][${a}] == ${v}`)
    .replace(RE_IS_STATE, (_m, e: string, v: string) => `__st[${e}] == ${v}`)
    .replace(RE_ATTR, (_m, e: string, a: string) => `__attr[${e}][${a}]`)
    .replace(RE_STATES, (_m, e: string) => `__st[${e}]`);
}

/** A read-only object whose keys are computed on demand and all count as own properties. */
function lookupProxy(get: (key: string) => unknown): Record<string, unknown> {
  const valueOf = (k: string | symbol) => (typeof k === 'string' && k !== '__proto__' && k !== 'constructor' && k !== 'prototype' ? get(k) : undefined);
  return new Proxy(Object.create(null) as Record<string, unknown>, {
    get: (_t, k) => valueOf(k),
    has: (_t, k) => valueOf(k) !== undefined,
    getOwnPropertyDescriptor: (_t, k) => {
      const value = valueOf(k);
      return value === undefined ? undefined : { value, enumerable: true, configurable: true, writable: false };
    },
    ownKeys: () => [],
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
    getPrototypeOf: () => null,
    setPrototypeOf: () => false,
  });
}

/** Plain copy of a state for templates (no class instances, no shared references). */
function stateObject(states: StatePort, id: string): Record<string, unknown> | undefined {
  const s = states.get(id);
  if (!s) return undefined;
  return { entity_id: s.entity_id, state: s.state ?? 'unknown', attributes: { ...s.attributes }, last_changed: s.last_changed ?? null, last_updated: s.last_updated ?? null, name: s.name, domain: s.domain };
}

export class AutomationTemplates {
  private readonly engine: TemplateEngine;
  private readonly states: StatePort;
  private readonly globals: Record<string, unknown>;
  constructor(states: StatePort, limits: Partial<TemplateLimits> = {}) {
    this.states = states;
    this.engine = new TemplateEngine({ renderMs: 100, maxOutput: 1_048_576, ...limits });
    const st = lookupProxy((id) => (IDENT.test(id) ? (this.states.get(id)?.state ?? 'unknown') : undefined));
    const attr = lookupProxy((id) => {
      const s = IDENT.test(id) ? this.states.get(id) : undefined;
      return s ? lookupProxy((a) => (Object.hasOwn(s.attributes, a) ? copy(s.attributes[a]) : undefined)) : undefined;
    });
    const domains = lookupProxy((domain) => (/^[a-z0-9_]+$/.test(domain) ? lookupProxy((obj) => (/^[a-z0-9_]+$/.test(obj) ? stateObject(this.states, `${domain}.${obj}`) : undefined)) : undefined));
    this.globals = { __st: st, __attr: attr, states: domains };
  }

  static isTemplate(value: unknown): value is string {
    return typeof value === 'string' && (value.includes('{{') || value.includes('{%'));
  }

  /** Throws TemplateError when the template does not parse or is too long. */
  validate(source: string): void {
    this.engine.validate(rewriteHaFunctions(source));
  }

  /** Renders to a string (trimmed). Throws TemplateError. */
  renderString(source: string, vars: Record<string, unknown>): string {
    if (!AutomationTemplates.isTemplate(source)) return source;
    return this.engine.render(rewriteHaFunctions(source), { ...vars, ...this.globals });
  }

  /** Renders and, like HA, turns a result that reads as a number, boolean or JSON into that value. */
  renderNative(source: string, vars: Record<string, unknown>): unknown {
    if (!AutomationTemplates.isTemplate(source)) return source;
    return toNative(this.renderString(source, vars));
  }

  /** Renders every template string inside a JSON-like value (objects, arrays) to native values. */
  renderDeep(value: unknown, vars: Record<string, unknown>, depth = 0): unknown {
    if (depth > 32) throw new TemplateError('data nested too deeply');
    if (typeof value === 'string') return this.renderNative(value, vars);
    if (Array.isArray(value)) return value.map((v) => this.renderDeep(v, vars, depth + 1));
    if (value && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) out[k] = this.renderDeep(v, vars, depth + 1);
      return out;
    }
    return value;
  }

  /** Template condition: true for "true"/"True"/"on"/"yes"/"1" or a non-zero number. */
  renderBoolean(source: string, vars: Record<string, unknown>): boolean {
    const out = this.renderString(source, vars).trim().toLowerCase();
    if (out === 'true' || out === 'on' || out === 'yes' || out === 'enable') return true;
    const n = Number(out);
    return out !== '' && Number.isFinite(n) && n !== 0;
  }
}

function copy(v: unknown): unknown {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v));
}

export function toNative(out: string): unknown {
  const s = out.trim();
  if (s === '') return '';
  if (s === 'true' || s === 'True') return true;
  if (s === 'false' || s === 'False') return false;
  if (/^-?(0|[1-9]\d{0,15})(\.\d+)?$/.test(s)) return Number(s);
  if ((s.startsWith('{') && s.endsWith('}')) || (s.startsWith('[') && s.endsWith(']'))) {
    try { return JSON.parse(s); } catch { return out; }
  }
  return out;
}
