import { TemplateEngine, TemplateError, type TemplateLimits } from '../templates/template.ts';
import { toNative } from '../templates/native.ts';
import { relativeTime } from '../templates/ha-time.ts';
import type { StatePort } from './ports.ts';

/**
 * Automation templates: the edge's Jinja engine (edge/src/templates) with the automation's
 * state machine and clock, plus what automations need on top: native results (HA's
 * parse_result), rendering every template inside action data, and template conditions.
 */

export { TemplateError, toNative, relativeTime };

export class AutomationTemplates {
  readonly engine: TemplateEngine;
  /**
   * Pass the edge's shared engine, or the state machine (and limits, clock: now(), utcnow(),
   * today_at() read it; the system clock when omitted) to get an engine of its own.
   */
  constructor(
    states: StatePort | TemplateEngine,
    limits: Partial<TemplateLimits> = {},
    clock: { now(): number } = { now: () => Date.now() },
  ) {
    this.engine =
      states instanceof TemplateEngine
        ? states
        : new TemplateEngine({ renderMs: 100, maxOutput: 1_048_576, ...limits }, { states, clock });
  }

  static isTemplate(value: unknown): value is string {
    return typeof value === 'string' && (value.includes('{{') || value.includes('{%'));
  }

  /** Throws TemplateError when the template does not parse or is too long. */
  validate(source: string): void {
    this.engine.validate(source);
  }

  /** Renders to a string (trimmed). Throws TemplateError. */
  renderString(source: string, vars: Record<string, unknown>): string {
    if (!AutomationTemplates.isTemplate(source)) return source;
    return this.engine.render(source, vars);
  }

  /** Renders and, like HA, turns a result that reads as a number, boolean, list or dict into that value. */
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

  /** Template condition (HA's result_as_boolean): true for "true"/"on"/"yes"/"enable"/"1" or a non-zero number. */
  renderBoolean(source: string, vars: Record<string, unknown>): boolean {
    const out = this.renderString(source, vars).trim().toLowerCase();
    if (out === 'true' || out === 'on' || out === 'yes' || out === 'enable') return true;
    const n = Number(out);
    return out !== '' && Number.isFinite(n) && n !== 0;
  }
}
