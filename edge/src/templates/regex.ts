import v8 from 'node:v8';
import { RenderError } from './values.ts';

/**
 * Python regular expressions from templates, compiled so they cannot backtrack
 * catastrophically: with V8's linear-time engine (the `l` flag; its V8 flag is turned on
 * here, it only makes the `l` flag available to regexes that ask for it); otherwise (a node
 * without it) patterns that can backtrack exponentially
 * (a quantified group that itself repeats or alternates, backreferences) are refused, and
 * subjects are capped.
 */

let linear = false;
try {
  v8.setFlagsFromString('--enable-experimental-regexp-engine');
  new RegExp('a', ['l'].join('')); // the flag exists only when node runs with --enable-experimental-regexp-engine
  linear = true;
} catch {
  linear = false;
}
export const LINEAR_REGEX = linear;

const MAX_PATTERN = 1000;
export const MAX_SUBJECT = 100_000;
const cache = new Map<string, RegExp>();

/** Python syntax → JavaScript: named groups, \A \Z, inline (?i). */
function translate(pattern: string): { source: string; ignoreCase: boolean } {
  let ignoreCase = false;
  let source = pattern.replace(/^\(\?([aiLmsux]+)\)/, (_m, flags: string) => {
    if (flags.includes('i')) ignoreCase = true;
    return '';
  });
  source = source
    .replace(/\(\?P<([A-Za-z_]\w*)>/g, '(?<$1>')
    .replace(/\(\?P=([A-Za-z_]\w*)\)/g, '\\k<$1>')
    .replace(/\\A/g, '^')
    .replace(/\\Z/g, '$');
  return { source, ignoreCase };
}

/** True when a quantifier applies to a group that contains a quantifier or an alternation. */
export function mayBacktrack(source: string): boolean {
  if (/\\[1-9]|\\k</.test(source)) return true;
  const stack: { quantified: boolean; alternates: boolean }[] = [];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++;
      continue;
    }
    if (c === '(') stack.push({ quantified: false, alternates: false });
    else if (c === '|' && stack.length) stack[stack.length - 1]!.alternates = true;
    else if ('*+?{'.includes(c!) && stack.length && source[i - 1] !== '(') stack[stack.length - 1]!.quantified = true;
    else if (c === ')') {
      const g = stack.pop();
      const next = source[i + 1];
      const repeated = next === '*' || next === '+' || next === '{';
      if (g && repeated && (g.quantified || g.alternates)) return true;
      if (g && stack.length && (g.quantified || repeated)) stack[stack.length - 1]!.quantified = true;
    }
  }
  return false;
}

export function compileRegex(pattern: unknown, ignoreCase: unknown, global = false): RegExp {
  if (typeof pattern !== 'string') throw new RenderError('regex: the pattern must be a string');
  if (pattern.length > MAX_PATTERN) throw new RenderError(`regex longer than ${MAX_PATTERN} characters`);
  const key = `${ignoreCase ? 'i' : ''}${global ? 'g' : ''}:${pattern}`;
  const hit = cache.get(key);
  if (hit) {
    hit.lastIndex = 0;
    return hit;
  }
  const t = translate(pattern);
  let flags = `${ignoreCase || t.ignoreCase ? 'i' : ''}${global ? 'g' : ''}`;
  if (linear) flags += 'l';
  else if (mayBacktrack(t.source))
    throw new RenderError('regex refused: it could backtrack without bound (nested repetition or a backreference)');
  let re: RegExp;
  try {
    re = new RegExp(t.source, flags);
  } catch (err) {
    if (!linear) throw new RenderError(`invalid regex: ${(err as Error).message}`);
    try {
      // features the linear engine lacks (lookarounds, backreferences): only when they cannot backtrack without bound
      if (mayBacktrack(t.source)) throw new RenderError('regex refused: it could backtrack without bound');
      re = new RegExp(t.source, flags.replace('l', ''));
    } catch (e) {
      throw e instanceof RenderError ? e : new RenderError(`invalid regex: ${(e as Error).message}`);
    }
  }
  if (cache.size > 500) cache.clear();
  cache.set(key, re);
  return re;
}

export function subject(value: unknown): string {
  const s = typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
  if (s.length > MAX_SUBJECT) throw new RenderError(`regex subject longer than ${MAX_SUBJECT} characters`);
  return s;
}

/** Python's re.sub replacement (`\1`, `\g<name>`) → JavaScript's (`$1`, `$<name>`). */
export function translateReplacement(rep: string): string {
  return rep
    .replace(/\$/g, '$$$$')
    .replace(/\\g<(\w+)>/g, (_m, g: string) => (/^\d+$/.test(g) ? `$${g}` : `$<${g}>`))
    .replace(/\\(\d{1,2})/g, '$$$1')
    .replace(/\\n/g, '\n')
    .replace(/\\\\/g, '\\');
}
