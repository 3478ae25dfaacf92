import { Liquid, type Template } from 'liquidjs';

/**
 * Home Assistant-style `{{ … }}` templates rendered with liquidjs, configured safely:
 * own properties only (no prototype walking), bounded parse size, render time and
 * memory. Common Jinja spellings used in MQTT discovery configs are accepted:
 * `| round(1)` → `| round: 1`, `| float`, `| int`, `| default(x)`, `| tojson`,
 * and inline `{{ a if cond else b }}`.
 * Shared by MQTT discovery and (later) the automation engine.
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
  /** max memory (liquidjs units, ~chars allocated) */
  memory: number;
  /** max output length (chars) */
  maxOutput: number;
}

export const DEFAULT_LIMITS: TemplateLimits = { maxSource: 8192, renderMs: 50, memory: 1_000_000, maxOutput: 65_536 };

const toNumber = (v: unknown, fallback: unknown): unknown => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : fallback;
};

/** `| name(a, b)` → `| name: a, b` (Jinja filter call syntax → Liquid). */
function jinjaToLiquid(src: string): string {
  let out = src.replace(/\|\s*([a-z_]+)\(([^()]*)\)/g, (_m, name: string, args: string) => (args.trim() ? `| ${name}: ${args}` : `| ${name}`));
  // {{ A if COND else B }} → {% if COND %}{{ A }}{% else %}{{ B }}{% endif %}
  out = out.replace(/\{\{\s*(.+?)\s+if\s+(.+?)\s+else\s+(.+?)\s*\}\}/g, (_m, a: string, cond: string, b: string) =>
    `{% if ${cond} %}{{ ${a} }}{% else %}{{ ${b} }}{% endif %}`);
  return out;
}

export class TemplateEngine {
  private readonly liquid: Liquid;
  private readonly limits: TemplateLimits;
  private readonly cache = new Map<string, Template[]>();
  constructor(limits: Partial<TemplateLimits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.liquid = new Liquid({
      ownPropertyOnly: true,
      strictFilters: false,
      strictVariables: false,
      parseLimit: this.limits.maxSource * 2,
      renderLimit: this.limits.renderMs,
      memoryLimit: this.limits.memory,
      cache: false,
      // no file system access: include/render/layout have nothing to read
      fs: { readFileSync: () => '', existsSync: () => false, exists: async () => false, readFile: async () => '', resolve: (_d: string, f: string) => f, fallback: () => undefined } as never,
      relativeReference: false,
      root: [],
      partials: [],
      layouts: [],
    });
    this.liquid.registerFilter('float', (v: unknown, d: unknown = 0) => toNumber(v, d));
    this.liquid.registerFilter('int', (v: unknown, d: unknown = 0) => {
      const n = toNumber(v, d);
      return typeof n === 'number' ? Math.trunc(n) : n;
    });
    this.liquid.registerFilter('tojson', (v: unknown) => JSON.stringify(v ?? null));
    this.liquid.registerFilter('to_json', (v: unknown) => JSON.stringify(v ?? null));
    this.liquid.registerFilter('from_json', (v: unknown) => {
      try { return typeof v === 'string' ? JSON.parse(v) : v; } catch { return v; }
    });
    this.liquid.registerFilter('string', (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)));
    this.liquid.registerFilter('as_timestamp', (v: unknown, d: unknown = null) => asTimestamp(v) ?? d);
    this.liquid.registerFilter('lower', (v: unknown) => String(v ?? '').toLowerCase());
    this.liquid.registerFilter('upper', (v: unknown) => String(v ?? '').toUpperCase());
  }

  private compile(source: string): Template[] {
    let compiled = this.cache.get(source);
    if (compiled) return compiled;
    if (source.length > this.limits.maxSource) throw new TemplateError(`template longer than ${this.limits.maxSource} characters`);
    try {
      compiled = this.liquid.parse(jinjaToLiquid(source));
    } catch (err) {
      throw new TemplateError(`template does not parse: ${(err as Error).message}`, { cause: err });
    }
    if (this.cache.size >= 2000) this.cache.clear();
    this.cache.set(source, compiled);
    return compiled;
  }

  /** Throws TemplateError when the template is invalid or exceeds its limits. */
  validate(source: string): void {
    this.compile(source);
  }

  render(source: string, vars: Record<string, unknown>): string {
    const tpl = this.compile(source);
    let out: string;
    try {
      out = String(this.liquid.renderSync(tpl, vars));
    } catch (err) {
      throw new TemplateError(`template failed: ${(err as Error).message}`, { cause: err });
    }
    if (out.length > this.limits.maxOutput) throw new TemplateError(`template output longer than ${this.limits.maxOutput} characters`);
    return out.trim();
  }

  /** MQTT payload variables: `value` (the raw text) and `value_json` (parsed, when JSON). */
  renderValue(source: string, payload: string, extra: Record<string, unknown> = {}): string {
    return this.render(source, { ...extra, value: payload, value_json: parseJsonOrUndefined(payload) });
  }
}

/**
 * HA's as_timestamp: seconds since the epoch (float) of a datetime object (one with an own
 * numeric `timestamp`, as the automation templates' now() gives), an ISO-like date string
 * (no offset = local time) or a number (taken as a timestamp already); null otherwise.
 */
export function asTimestamp(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string') {
    const s = v.trim();
    if (/^-?\d+(\.\d+)?$/.test(s)) return Number(s);
    if (!/^\d{4}-\d{2}-\d{2}/.test(s)) return null;
    const ms = Date.parse(s);
    return Number.isFinite(ms) ? ms / 1000 : null;
  }
  if (v !== null && typeof v === 'object' && Object.hasOwn(v, 'timestamp')) {
    const ts = (v as { timestamp: unknown }).timestamp;
    return typeof ts === 'number' && Number.isFinite(ts) ? ts : null;
  }
  return null;
}

export function parseJsonOrUndefined(text: string): unknown {
  const c = text.trimStart()[0];
  if (c !== '{' && c !== '[' && c !== '"' && !(c >= '0' && c <= '9') && c !== '-' && c !== 't' && c !== 'f' && c !== 'n') return undefined;
  try { return JSON.parse(text); } catch { return undefined; }
}
