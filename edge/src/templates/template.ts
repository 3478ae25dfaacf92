import { ParseError, parseTemplate, type Node } from './parser.ts';
import { RenderContext, execute, type Filter } from './interpreter.ts';
import { jinjaFilters, jinjaTests } from './filters.ts';
import { haFilters } from './ha-filters.ts';
import { stateGlobals, type TemplateStates } from './ha-states.ts';
import { asTimestampValue, timeFilters, timeGlobals, type TemplateClock } from './ha-time.ts';
import { RenderError } from './values.ts';
import { lookUp, payloadLookup, type PayloadLookup } from './payload-lookup.ts';

/**
 * Home Assistant templates: real Jinja (nunjucks' parser, corrected where Jinja differs, and
 * our own tree-walking interpreter with Python semantics) plus Home Assistant's functions
 * and filters. One engine can serve MQTT discovery, automations and the HA APIs; it reads the
 * state machine and the clock it is given. Sandboxed: a template reaches only data and the
 * runtime's own functions (never a JavaScript prototype, constructor or host function), and
 * every render is bounded in time, output, loop iterations and range() length.
 */

export class TemplateError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TemplateError';
  }
}

export interface TemplateLimits {
  /** max template source length (chars) */
  maxSource: number;
  /** max render time (ms) */
  renderMs: number;
  /** kept for callers of the previous engine; output and iteration caps bound memory now */
  memory: number;
  /** max output length (chars), also the longest string a render may build */
  maxOutput: number;
  /** max loop iterations (for, map, select…) in one render */
  maxIterations: number;
  /** longest range() (Jinja's sandbox allows 100000) */
  maxRange: number;
}

export const DEFAULT_LIMITS: TemplateLimits = {
  maxSource: 8192,
  renderMs: 50,
  memory: 1_000_000,
  maxOutput: 65_536,
  maxIterations: 100_000,
  maxRange: 100_000,
};

export interface TemplateEnv {
  /** the state machine states(), is_state(), states.light… read; none = no entities */
  states?: TemplateStates;
  /** now(), utcnow(), today_at(), relative_time() (a fake clock in tests) */
  clock?: TemplateClock;
}

/** What a render produced and read (Home Assistant's RenderInfo, for render_template subscriptions). */
export interface RenderResult {
  result: string;
  entities: string[];
  domains: string[];
  allStates: boolean;
}

/** Node types the interpreter runs; anything else (include, extends, import, block…) is refused when parsed. */
const ALLOWED = new Set([
  'Root',
  'NodeList',
  'Output',
  'TemplateData',
  'Literal',
  'Symbol',
  'Group',
  'Array',
  'Dict',
  'Pair',
  'LookupVal',
  'Slice',
  'FunCall',
  'Filter',
  'KeywordArgs',
  'Is',
  'In',
  'Not',
  'Neg',
  'Pos',
  'And',
  'Or',
  'Concat',
  'Compare',
  'CompareOperand',
  'InlineIf',
  'Capture',
  'If',
  'For',
  'Set',
  'Macro',
  'Do',
  'LoopControl',
  'Add',
  'Sub',
  'Mul',
  'Div',
  'FloorDiv',
  'Mod',
  'Pow',
]);
const NAMES: Record<string, string> = {
  Include: 'include',
  Extends: 'extends',
  Import: 'import',
  FromImport: 'from … import',
  Block: 'block',
  Switch: 'switch',
  Caller: 'call',
  CallExtension: 'extension',
};

function check(n: unknown, inLoop: boolean, depth = 0): void {
  if (!n || typeof n !== 'object') return;
  if (depth > 200) throw new ParseError('template nested too deeply');
  if (Array.isArray(n)) {
    for (const c of n) check(c, inLoop, depth + 1);
    return;
  }
  const node = n as Node;
  if (typeof node.typename !== 'string') return;
  if (!ALLOWED.has(node.typename))
    throw new ParseError(`{% ${NAMES[node.typename] ?? node.typename} %} is not supported`);
  if (
    node.typename === 'Literal' &&
    node.value !== null &&
    !['string', 'number', 'boolean'].includes(typeof node.value)
  )
    throw new ParseError('regular expression literals are not supported');
  if (node.typename === 'LoopControl' && !inLoop) throw new ParseError(`{% ${String(node.kind)} %} outside a for loop`);
  for (const [k, v] of Object.entries(node)) {
    if (k === 'typename' || k === 'lineno' || k === 'colno' || k === 'value') continue;
    // a macro body is its own scope: break/continue there do not reach an enclosing loop
    check(v, node.typename === 'For' && k === 'body' ? true : node.typename === 'Macro' ? false : inLoop, depth + 1);
  }
}

export class TemplateEngine {
  private readonly limits: TemplateLimits;
  private readonly states: TemplateStates;
  private readonly clock: TemplateClock;
  private readonly cache = new Map<string, Node>();
  /** per source: the payload lookup it is (payload-lookup.ts), or null */
  private readonly lookups = new Map<string, PayloadLookup | null>();
  private readonly filters: Record<string, Filter>;

  constructor(limits: Partial<TemplateLimits> = {}, env: TemplateEnv = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.states = env.states ?? { get: () => undefined, all: () => [] };
    this.clock = env.clock ?? { now: () => Date.now() };
    this.filters = { ...jinjaFilters, ...haFilters, ...timeFilters() };
    // the globals are made once; they reach the render in progress (renders are synchronous) through this
    const current = this.current;
    const live = {
      get info() {
        return current.ctx!.info;
      },
      filter: (name: string, value: unknown, args?: unknown[], kwargs?: Record<string, unknown>) =>
        current.ctx!.filter(name, value, args, kwargs),
      countIteration: () => current.ctx!.countIteration(),
      tick: () => current.ctx!.tick(),
    } as unknown as RenderContext;
    this.globals = {
      ...timeGlobals(this.clock, this.filters, (f, v, a, kw) => f(current.ctx!, v, a, kw)),
      ...stateGlobals(live, this.states, this.limits.maxRange),
    };
  }

  private readonly current: { ctx?: RenderContext } = {};
  private readonly globals: Record<string, unknown>;

  private compile(source: string): Node {
    const hit = this.cache.get(source);
    if (hit) return hit;
    if (source.length > this.limits.maxSource)
      throw new TemplateError(`template longer than ${this.limits.maxSource} characters`);
    let tree: Node;
    try {
      tree = parseTemplate(source);
      check(tree, false);
    } catch (err) {
      throw new TemplateError(`template does not parse: ${(err as Error).message}`, { cause: err });
    }
    if (this.cache.size >= 2000) {
      this.cache.clear();
      this.lookups.clear();
    }
    this.cache.set(source, tree);
    return tree;
  }

  /** Throws TemplateError when the template does not parse, uses what the sandbox refuses, or is too long. */
  validate(source: string): void {
    this.compile(source);
  }

  /** Renders to text (trimmed, as Home Assistant does). Throws TemplateError. */
  render(source: string, vars: Record<string, unknown> = {}): string {
    return this.renderWithInfo(source, vars).result;
  }

  /** Renders and reports which entity ids, domains, or all states the render read. */
  renderWithInfo(source: string, vars: Record<string, unknown> = {}): RenderResult {
    const tree = this.compile(source);
    const ctx = new RenderContext(this.globals, this.filters, jinjaTests, {
      deadline: Date.now() + this.limits.renderMs,
      maxOutput: this.limits.maxOutput,
      maxIterations: this.limits.maxIterations,
      maxRange: this.limits.maxRange,
    });
    const outer = this.current.ctx;
    this.current.ctx = ctx;
    const out: string[] = [];
    try {
      execute(ctx, [new Map(Object.entries(vars))], tree, out);
    } catch (err) {
      if (err instanceof RenderError) throw new TemplateError(`template failed: ${err.message}`, { cause: err });
      if (err instanceof RangeError) throw new TemplateError('template failed: nested too deeply', { cause: err });
      throw new TemplateError(`template failed: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    } finally {
      this.current.ctx = outer;
    }
    return {
      result: out.join('').trim(),
      entities: [...ctx.info.entities].sort(),
      domains: [...ctx.info.domains].sort(),
      allStates: ctx.info.allStates,
    };
  }

  /** MQTT payload variables: `value` (the raw text) and `value_json` (parsed, when JSON). */
  renderValue(source: string, payload: string, extra: Record<string, unknown> = {}): string {
    let plan = this.lookups.get(source);
    if (plan === undefined) {
      plan = payloadLookup(this.compile(source));
      this.lookups.set(source, plan);
    }
    const json = plan && !plan.json ? undefined : payloadJson(payload);
    if (plan) {
      const out = lookUp(plan, payload, json, this.limits.maxOutput);
      if (out !== undefined) return out;
    }
    return this.render(source, {
      ...extra,
      value: payload,
      value_json: plan && !plan.json ? payloadJson(payload) : json,
    });
  }
}

/**
 * HA's as_timestamp on plain values: seconds since the epoch of an ISO-like date string
 * (no offset = local time); also a number (taken as a timestamp already); null otherwise.
 */
export function asTimestamp(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim())) return Number(v.trim());
  return asTimestampValue(v) ?? null;
}

/**
 * parseJsonOrUndefined for MQTT payloads read-only (templates run in an immutable sandbox, JSON
 * attributes are copied): the last payload's parse is reused, as a state topic that is also the
 * JSON attributes topic parses each message twice otherwise (the value template, the attributes).
 */
export function payloadJson(text: string): unknown {
  if (text !== lastPayload) {
    lastJson = parseJsonOrUndefined(text);
    lastPayload = text;
  }
  return lastJson;
}
let lastPayload: string | undefined;
let lastJson: unknown;

export function parseJsonOrUndefined(text: string): unknown {
  const c = text.trimStart()[0];
  if (
    c !== '{' &&
    c !== '[' &&
    c !== '"' &&
    !(c !== undefined && c >= '0' && c <= '9') &&
    c !== '-' &&
    c !== 't' &&
    c !== 'f' &&
    c !== 'n'
  )
    return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
