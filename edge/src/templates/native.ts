import { parseTemplate, type Node } from './parser.ts';
import { float, toJs } from './values.ts';

/**
 * Home Assistant's parse_result: a rendered text that reads as a Python literal (a number
 * as written, True/False/None, a list or dict) becomes that value; everything else, and
 * every text that would evaluate to a string, stays the rendered text.
 */

const IS_NUMERIC = /^[+-]?(?!0\d)\d*(?:\.\d*)?$/;

class NotLiteral extends Error {}

/** Python's ast.literal_eval over our parser's tree: literals, lists, tuples, dicts, signs only. */
function literal(n: Node): unknown {
  switch (n.typename) {
    case 'Literal':
      if (n.value !== null && !['string', 'number', 'boolean'].includes(typeof n.value)) throw new NotLiteral();
      return n.float ? float(n.value as number) : n.value;
    case 'Symbol':
      if (n.value === 'True') return true;
      if (n.value === 'False') return false;
      if (n.value === 'None') return null;
      throw new NotLiteral();
    case 'Array':
    case 'Group':
      if (n.typename === 'Group' && n.children?.length === 1) return literal(n.children[0]!);
      return (n.children ?? []).map(literal);
    case 'Dict': {
      const out: Record<string, unknown> = {};
      for (const p of n.children ?? []) {
        const k = literal(p.key as Node);
        if (typeof k !== 'string' && typeof k !== 'number') throw new NotLiteral();
        out[String(k)] = literal(p.value as Node);
      }
      return out;
    }
    case 'Neg':
    case 'Pos': {
      const v = literal(n.target as Node);
      const x = typeof v === 'number' ? v : (v as { v?: unknown } | null)?.v;
      if (typeof x !== 'number') throw new NotLiteral();
      return n.typename === 'Neg' ? -x : x;
    }
    default:
      throw new NotLiteral();
  }
}

export function toNative(out: string): unknown {
  const s = out.trim();
  if (
    s === '' ||
    s.length > 65_536 ||
    s.includes('{{') ||
    s.includes('{%') ||
    s.includes('}}') ||
    s.includes('%}') ||
    s.includes('{#')
  )
    return out;
  let value: unknown;
  try {
    const root = parseTemplate(`{{ ${s} }}`);
    const output = root.children?.length === 1 ? root.children[0]! : undefined;
    if (!output || output.typename !== 'Output' || output.children?.length !== 1) return out;
    value = toJs(literal(output.children[0]!));
  } catch {
    return out;
  }
  if (typeof value === 'string') return out;
  if (typeof value === 'number' && !IS_NUMERIC.test(s)) return out;
  if (typeof value === 'number' && !Number.isSafeInteger(value) && Number.isInteger(value)) return out;
  return value;
}
