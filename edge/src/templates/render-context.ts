import type { OutputGuard, RenderLimits } from './output-guard.ts';
import { methodOf } from './methods.ts';
import {
  Callable,
  RenderError,
  hasAttrs,
  index,
  isDict,
  isFloat,
  isList,
  isNum,
  num,
  str,
  typeName,
} from './values.ts';

/**
 * One render's state and the lookups every expression goes through: its globals, filters and
 * tests, the limits it runs under (time, loop iterations, output size, call depth), and what
 * it read from the state machine.
 */

export type Filter = (ctx: RenderContext, value: unknown, args: unknown[], kwargs: Record<string, unknown>) => unknown;
export type Test = (ctx: RenderContext, value: unknown, args: unknown[]) => boolean;

/** What a render read from the state machine (Home Assistant's RenderInfo). */
export interface RenderInfo {
  entities: Set<string>;
  domains: Set<string>;
  allStates: boolean;
}

/** The render's variable frames, innermost last. */
export type Scope = Map<string, unknown>[];

export class RenderContext implements OutputGuard {
  readonly globals: Record<string, unknown>;
  readonly filters: Record<string, Filter>;
  readonly tests: Record<string, Test>;
  readonly limits: RenderLimits;
  readonly info: RenderInfo = { entities: new Set(), domains: new Set(), allStates: false };
  private ops = 0;
  private iterations = 0;
  private depth = 0;
  constructor(
    globals: Record<string, unknown>,
    filters: Record<string, Filter>,
    tests: Record<string, Test>,
    limits: RenderLimits,
  ) {
    this.globals = globals;
    this.filters = filters;
    this.tests = tests;
    this.limits = limits;
  }

  tick(): void {
    if ((++this.ops & 255) === 0 && Date.now() > this.limits.deadline)
      throw new RenderError('template took too long to render');
  }

  countIteration(): void {
    if (++this.iterations > this.limits.maxIterations)
      throw new RenderError(`loops ran more than ${this.limits.maxIterations} times`);
    this.tick();
  }

  /** Joins texts, refusing before building a result longer than the output cap. */
  join(parts: string[], sep: string): string {
    let total = sep.length * Math.max(parts.length - 1, 0);
    for (const p of parts) total += p.length;
    if (total > this.limits.maxOutput) throw new RenderError(`result longer than ${this.limits.maxOutput} characters`);
    return parts.join(sep);
  }

  checkString(s: string): string {
    if (s.length > this.limits.maxOutput)
      throw new RenderError(`template output longer than ${this.limits.maxOutput} characters`);
    return s;
  }

  call(fn: unknown, args: unknown[], kwargs: Record<string, unknown>): unknown {
    if (!(fn instanceof Callable)) throw new RenderError(`'${typeName(fn)}' object is not callable`);
    if (++this.depth > 64) throw new RenderError('calls nested too deeply');
    try {
      this.tick();
      return fn.fn(args, kwargs);
    } finally {
      this.depth--;
    }
  }

  filter(name: string, value: unknown, args: unknown[] = [], kwargs: Record<string, unknown> = {}): unknown {
    const f = Object.hasOwn(this.filters, name) ? this.filters[name] : undefined;
    if (!f) throw new RenderError(`no filter named '${name}'`);
    return f(this, value, args, kwargs);
  }

  test(name: string, value: unknown, args: unknown[] = []): boolean {
    const t = Object.hasOwn(this.tests, name) ? this.tests[name] : undefined;
    if (!t) throw new RenderError(`no test named '${name}'`);
    return t(this, value, args);
  }

  /** `obj.name`: Python attributes (methods) first, then items, as Jinja's getattr. */
  getAttr(obj: unknown, name: string): unknown {
    if (obj === undefined) throw new RenderError(`'${name}' accessed on an undefined value`);
    // no Python dunder or private attribute; a dict's own key of that name is plain data
    if (name.startsWith('_')) return isDict(obj) && Object.hasOwn(obj, name) ? obj[name] : undefined;
    if (hasAttrs(obj)) return obj.getAttr(name);
    const m = methodOf(this, obj, name);
    if (m !== undefined) return m;
    if (isDict(obj)) return Object.hasOwn(obj, name) ? obj[name] : undefined;
    return undefined;
  }

  /** `obj[key]`: items first, then attributes, as Jinja's getitem. */
  getItem(obj: unknown, key: unknown): unknown {
    if (obj === undefined) throw new RenderError(`item ${str(key)} accessed on an undefined value`);
    if (isList(obj) || typeof obj === 'string') {
      if ((isNum(key) && !isFloat(key)) || typeof key === 'boolean') {
        const items = isList(obj) ? obj : [...obj];
        const i = index(items.length, Number(typeof key === 'boolean' ? Number(key) : num(key as number)));
        return i < 0 ? undefined : items[i];
      }
      return typeof key === 'string' ? this.getAttr(obj, key) : undefined;
    }
    if (isDict(obj)) {
      if (typeof key === 'string' || isNum(key) || typeof key === 'boolean') {
        const k = typeof key === 'boolean' ? str(Number(key)) : str(key);
        if (Object.hasOwn(obj, k)) return obj[k];
      }
      return typeof key === 'string' ? this.getAttr(obj, key) : undefined;
    }
    if (hasAttrs(obj) && typeof key === 'string') return obj.getAttr(key);
    return undefined;
  }
}
