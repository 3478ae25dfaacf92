import type { Node } from './parser.ts';
import { arith } from './arith.ts';
import { Loop, Namespace } from './objects.ts';
import { RenderContext, type Scope } from './render-context.ts';
import {
  Callable,
  RenderError,
  compare,
  contains,
  dict,
  equals,
  float,
  isFloat,
  isList,
  isNum,
  iterate,
  num,
  slice,
  str,
  truthy,
  tuple,
  typeName,
} from './values.ts';

// Callers import the render state from here, as before render-context.ts was split off.
export { RenderContext };
export type { Filter, RenderInfo, Test } from './render-context.ts';

/**
 * Walks a parsed template with Jinja's (and Python's) semantics. This is the only place
 * templates execute: names resolve in the render's scopes then the runtime's globals, and
 * every lookup goes through getAttr/getItem, so a template sees data and Callables only.
 */

class BreakSignal {}
class ContinueSignal {}

const BINARY = new Set(['Add', 'Sub', 'Mul', 'Div', 'FloorDiv', 'Mod', 'Pow']);

function lookup(scope: Scope, ctx: RenderContext, name: string): unknown {
  for (let i = scope.length - 1; i >= 0; i--) {
    const frame = scope[i]!;
    if (frame.has(name)) return frame.get(name);
  }
  if (Object.hasOwn(ctx.globals, name)) return ctx.globals[name];
  if (name === 'True') return true;
  if (name === 'False') return false;
  if (name === 'None') return null;
  return undefined;
}

function args(ctx: RenderContext, scope: Scope, list: Node | undefined): [unknown[], Record<string, unknown>] {
  const positional: unknown[] = [];
  const kwargs = dict();
  for (const child of list?.children ?? []) {
    if (child.typename === 'KeywordArgs') {
      for (const pair of child.children ?? [])
        kwargs[String((pair.key as Node).value)] = evaluate(ctx, scope, pair.value as Node);
    } else {
      positional.push(evaluate(ctx, scope, child));
    }
  }
  return [positional, kwargs];
}

function testName(n: Node): string {
  if (n.typename === 'Symbol') return String(n.value);
  if (n.typename === 'Literal') return n.value === null ? 'none' : String(n.value);
  throw new RenderError('invalid test');
}

export function evaluate(ctx: RenderContext, scope: Scope, n: Node): unknown {
  ctx.tick();
  const t = n.typename;
  if (BINARY.has(t)) return arith(ctx, t, evaluate(ctx, scope, n.left as Node), evaluate(ctx, scope, n.right as Node));
  switch (t) {
    case 'Literal':
      return n.float ? float(n.value as number) : n.value;
    case 'Symbol':
      return lookup(scope, ctx, String(n.value));
    case 'Group': {
      const items = (n.children ?? []).map((c) => evaluate(ctx, scope, c));
      return items.length === 1 ? items[0] : tuple(items);
    }
    case 'Array':
      return (n.children ?? []).map((c) => evaluate(ctx, scope, c));
    case 'Dict': {
      const d = dict();
      for (const pair of n.children ?? []) {
        const key = pair.key as Node;
        const k = key.typename === 'Symbol' ? evaluate(ctx, scope, key) : evaluate(ctx, scope, key);
        if (typeof k !== 'string' && !isNum(k) && typeof k !== 'boolean' && k !== null)
          throw new RenderError(`unhashable type: '${typeName(k)}'`);
        d[str(k)] = evaluate(ctx, scope, pair.value as Node);
      }
      return d;
    }
    case 'LookupVal': {
      const target = evaluate(ctx, scope, n.target as Node);
      const val = n.val as Node;
      if (target === undefined) throw new RenderError(`'${describe(n.target as Node)}' is undefined`);
      if (val.typename === 'Slice') {
        if (target === undefined) throw new RenderError('slice of an undefined value');
        const [a, b, c] = ['start', 'stop', 'step'].map((k) => (val[k] ? evaluate(ctx, scope, val[k] as Node) : null));
        if (typeof target === 'string') return slice([...target], a, b, c).join('');
        if (isList(target)) return slice(target, a, b, c);
        throw new RenderError(`'${typeName(target)}' object is not subscriptable`);
      }
      if (n.dot) return ctx.getAttr(target, String(val.value));
      return ctx.getItem(target, evaluate(ctx, scope, val));
    }
    case 'FunCall': {
      const fn = evaluate(ctx, scope, n.name as Node);
      const [a, kw] = args(ctx, scope, n.args as Node);
      if (fn === undefined) throw new RenderError(`'${describe(n.name as Node)}' is undefined`);
      return ctx.call(fn, a, kw);
    }
    case 'Filter': {
      const [a, kw] = args(ctx, scope, n.args as Node);
      return ctx.filter(String((n.name as Node).value), a[0], a.slice(1), kw);
    }
    case 'Is': {
      const right = n.right as Node;
      const value = evaluate(ctx, scope, n.left as Node);
      if (right.typename === 'FunCall') {
        const [a] = args(ctx, scope, right.args as Node);
        return ctx.test(testName(right.name as Node), value, a);
      }
      return ctx.test(testName(right), value);
    }
    case 'In':
      return contains(evaluate(ctx, scope, n.right as Node), evaluate(ctx, scope, n.left as Node));
    case 'Not':
      return !truthy(evaluate(ctx, scope, n.target as Node));
    case 'Neg':
    case 'Pos': {
      const v = evaluate(ctx, scope, n.target as Node);
      if (!isNum(v) && typeof v !== 'boolean')
        throw new RenderError(`bad operand type for unary ${t === 'Neg' ? '-' : '+'}: '${typeName(v)}'`);
      const x = typeof v === 'boolean' ? Number(v) : num(v);
      const r = t === 'Neg' ? -x : x;
      return isFloat(v) ? float(r) : r;
    }
    case 'And': {
      const l = evaluate(ctx, scope, n.left as Node);
      return truthy(l) ? evaluate(ctx, scope, n.right as Node) : l;
    }
    case 'Or': {
      const l = evaluate(ctx, scope, n.left as Node);
      return truthy(l) ? l : evaluate(ctx, scope, n.right as Node);
    }
    case 'Concat':
      return ctx.checkString(str(evaluate(ctx, scope, n.left as Node)) + str(evaluate(ctx, scope, n.right as Node)));
    case 'Compare': {
      let left = evaluate(ctx, scope, n.expr as Node);
      for (const op of n.ops as Node[]) {
        const right = evaluate(ctx, scope, op.expr as Node);
        if (!compareOp(String(op.type), left, right)) return false;
        left = right;
      }
      return true;
    }
    case 'InlineIf':
      if (truthy(evaluate(ctx, scope, n.cond as Node))) return evaluate(ctx, scope, n.body as Node);
      return n.else_ ? evaluate(ctx, scope, n.else_ as Node) : undefined;
    case 'Capture': {
      const out: string[] = [];
      execute(ctx, scope, n.body as Node, out);
      return out.join('');
    }
    default:
      throw new RenderError(`unsupported expression: ${t}`);
  }
}

function describe(n: Node): string {
  if (n.typename === 'Symbol') return String(n.value);
  if (n.typename === 'LookupVal') {
    const val = n.val as Node;
    if (val.typename === 'Literal')
      return n.dot
        ? `${describe(n.target as Node)}.${String(val.value)}`
        : `${describe(n.target as Node)}[${JSON.stringify(val.value)}]`;
    return `${describe(n.target as Node)}[…]`;
  }
  return 'expression';
}

function compareOp(op: string, a: unknown, b: unknown): boolean {
  switch (op) {
    case '==':
      return equals(a, b);
    case '!=':
      return !equals(a, b);
    case '<':
      return compare(a, b, op) < 0;
    case '>':
      return compare(a, b, op) > 0;
    case '<=':
      return compare(a, b, op) <= 0;
    case '>=':
      return compare(a, b, op) >= 0;
    default:
      throw new RenderError(`unsupported comparison ${op}`);
  }
}

function assign(ctx: RenderContext, scope: Scope, target: Node, value: unknown): void {
  if (target.typename === 'Symbol') {
    scope[scope.length - 1]!.set(String(target.value), value);
    return;
  }
  if (target.typename === 'LookupVal' && target.dot) {
    const ns = evaluate(ctx, scope, target.target as Node);
    if (ns instanceof Namespace) {
      ns.set(String((target.val as Node).value), value);
      return;
    }
    throw new RenderError('can only set attributes of a namespace()');
  }
  throw new RenderError('cannot assign to this expression');
}

export function execute(ctx: RenderContext, scope: Scope, n: Node, out: string[]): void {
  ctx.tick();
  switch (n.typename) {
    case 'Root':
    case 'NodeList':
      for (const c of n.children ?? []) execute(ctx, scope, c, out);
      return;
    case 'Output':
      for (const c of n.children ?? [])
        write(ctx, out, c.typename === 'TemplateData' ? String(c.value) : str(evaluate(ctx, scope, c)));
      return;
    case 'If':
      if (truthy(evaluate(ctx, scope, n.cond as Node))) execute(ctx, scope, n.body as Node, out);
      else if (n.else_) execute(ctx, scope, n.else_ as Node, out);
      return;
    case 'For':
      forLoop(ctx, scope, n, out);
      return;
    case 'Set': {
      const value = n.value ? evaluate(ctx, scope, n.value as Node) : evaluate(ctx, scope, n.body as Node);
      const targets = n.targets as Node[];
      if (targets.length === 1) {
        assign(ctx, scope, targets[0]!, value);
      } else {
        const items = iterate(value);
        if (items.length !== targets.length)
          throw new RenderError(`expected ${targets.length} values to unpack, got ${items.length}`);
        targets.forEach((tg, i) => assign(ctx, scope, tg, items[i]));
      }
      return;
    }
    case 'Macro':
      scope[scope.length - 1]!.set(String((n.name as Node).value), macro(ctx, scope, n));
      return;
    case 'Do':
      evaluate(ctx, scope, n.expr as Node);
      return;
    case 'LoopControl':
      throw n.kind === 'break' ? new BreakSignal() : new ContinueSignal();
    default:
      throw new RenderError(`unsupported statement: ${n.typename}`);
  }
}

function write(ctx: RenderContext, out: string[], s: string): void {
  out.push(s);
  const total = ((out as { total?: number }).total ?? 0) + s.length;
  (out as { total?: number }).total = total;
  if (total > ctx.limits.maxOutput)
    throw new RenderError(`template output longer than ${ctx.limits.maxOutput} characters`);
}

function forLoop(ctx: RenderContext, scope: Scope, n: Node, out: string[]): void {
  let arrNode = n.arr as Node;
  let cond: Node | undefined;
  if (arrNode.typename === 'InlineIf') {
    if (arrNode.else_) throw new RenderError('a for loop filter cannot have an else');
    cond = arrNode.cond as Node;
    arrNode = arrNode.body as Node;
  }
  const name = n.name as Node;
  const names = name.typename === 'Array' ? (name.children ?? []).map((c) => String(c.value)) : [String(name.value)];
  let items = iterate(evaluate(ctx, scope, arrNode));
  const bind = (frame: Map<string, unknown>, item: unknown) => {
    if (names.length === 1) {
      frame.set(names[0]!, item);
      return;
    }
    const parts = isList(item) ? item : iterate(item);
    if (parts.length !== names.length)
      throw new RenderError(`expected ${names.length} values to unpack, got ${parts.length}`);
    names.forEach((nm, i) => frame.set(nm, parts[i]));
  };
  if (cond) {
    items = items.filter((item) => {
      ctx.countIteration();
      const frame = new Map<string, unknown>();
      bind(frame, item);
      return truthy(evaluate(ctx, [...scope, frame], cond));
    });
  }
  if (items.length === 0) {
    if (n.else_) execute(ctx, scope, n.else_ as Node, out);
    return;
  }
  const loop = new Loop(items);
  for (let i = 0; i < items.length; i++) {
    ctx.countIteration();
    loop.i = i;
    const frame = new Map<string, unknown>([['loop', loop]]);
    bind(frame, items[i]);
    try {
      execute(ctx, [...scope, frame], n.body as Node, out);
    } catch (signal) {
      if (signal instanceof BreakSignal) break;
      if (signal instanceof ContinueSignal) continue;
      throw signal;
    }
  }
}

function macro(ctx: RenderContext, scope: Scope, n: Node): Callable {
  const name = String((n.name as Node).value);
  const params: { name: string; dflt?: Node }[] = [];
  for (const a of (n.args as Node).children ?? []) {
    if (a.typename === 'KeywordArgs')
      for (const p of a.children ?? []) params.push({ name: String((p.key as Node).value), dflt: p.value as Node });
    else params.push({ name: String(a.value) });
  }
  return new Callable(name, (positional, kwargs) => {
    const frame = new Map<string, unknown>();
    params.forEach((p, i) => {
      const v =
        i < positional.length
          ? positional[i]
          : Object.hasOwn(kwargs, p.name)
            ? kwargs[p.name]
            : p.dflt
              ? evaluate(ctx, scope, p.dflt)
              : undefined;
      frame.set(p.name, v);
    });
    frame.set('varargs', tuple(positional.slice(params.length)));
    const out: string[] = [];
    execute(ctx, [...scope, frame], n.body as Node, out);
    return out.join('');
  });
}
