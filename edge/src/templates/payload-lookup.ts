import type { Node } from './parser.ts';
import { isDict, isList, str } from './values.ts';

/**
 * The MQTT value templates that only read a value out of the payload — `{{ value }}`,
 * `{{ value_json.temperature }}`, `{{ value_json['a'].b }}`, `{{ value_json[0] }}`, with text
 * around them — recognized once in the parsed tree and then answered without the interpreter
 * (#19: rendering was the largest part of a discovery message's CPU). Only the cases whose
 * answer is certain are taken: a key the payload has, a scalar value, no dict method by that
 * name. Anything else (a missing key, a list or dict value, a payload that is not JSON) goes
 * through the interpreter, which gives the same result or error as before.
 */

interface Step {
  key: string | number;
  /** `.key` (a dict method by that name wins) rather than `[key]` (the item wins) */
  dot: boolean;
}

export interface PayloadLookup {
  /** reads value_json (the payload parsed), else value (the raw text) */
  json: boolean;
  steps: Step[];
  before: string;
  after: string;
}

/** dict methods a `.name` lookup finds before a key of that name (methods.ts dictMethod) */
const DICT_METHODS = new Set(['items', 'keys', 'values', 'get', 'copy']);

/** The lookup a whole template is, or null when it is anything more. */
export function payloadLookup(tree: Node): PayloadLookup | null {
  if (tree.typename !== 'Root') return null;
  const parts: Node[] = [];
  for (const out of tree.children ?? []) {
    if (out.typename !== 'Output') return null;
    parts.push(...(out.children ?? []));
  }
  const exprAt = parts.findIndex((p) => p.typename !== 'TemplateData');
  if (exprAt < 0 || parts.slice(exprAt + 1).some((p) => p.typename !== 'TemplateData')) return null;
  const text = (ps: Node[]) => ps.map((p) => String(p.value)).join('');
  const steps: Step[] = [];
  let n = parts[exprAt]!;
  while (n.typename === 'LookupVal') {
    const val = n.val as Node;
    if (val.typename !== 'Literal' || n.float === true || val.float === true) return null;
    if (typeof val.value === 'string') steps.unshift({ key: val.value, dot: n.dot === true });
    else if (typeof val.value === 'number' && Number.isInteger(val.value) && val.value >= 0 && n.dot !== true)
      steps.unshift({ key: val.value, dot: false });
    else return null;
    n = n.target as Node;
  }
  if (n.typename !== 'Symbol' || (n.value !== 'value' && n.value !== 'value_json')) return null;
  if (n.value === 'value' && steps.length > 0) return null;
  return {
    json: n.value === 'value_json',
    steps,
    before: text(parts.slice(0, exprAt)),
    after: text(parts.slice(exprAt + 1)),
  };
}

/** The render's text (trimmed), or undefined when the interpreter has to answer. */
export function lookUp(plan: PayloadLookup, payload: string, json: unknown, maxOutput: number): string | undefined {
  let v: unknown = plan.json ? json : payload;
  for (const { key, dot } of plan.steps) {
    if (typeof key === 'number') {
      if (!isList(v) || key >= v.length) return undefined;
      v = v[key];
    } else {
      if (!isDict(v) || !Object.hasOwn(v, key) || (dot && DICT_METHODS.has(key))) return undefined;
      v = v[key];
    }
  }
  if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean' && v !== null) return undefined;
  const out = plan.before + str(v) + plan.after;
  return out.length > maxOutput ? undefined : out.trim();
}
