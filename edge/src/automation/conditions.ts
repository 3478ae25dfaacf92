import type { Condition } from '@smarthome/protocol';
import { durationMs, timeConditionMatches } from './time.ts';
import { inRange, numericValue, type TriggerEnv } from './triggers.ts';

/** Evaluates HA conditions against current states; a template error counts as false and is reported. */

const list = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

export interface ConditionResult {
  ok: boolean;
  error?: string;
}

export function evaluateCondition(c: Condition, env: TriggerEnv, vars: Record<string, unknown>): boolean {
  switch (c.condition) {
    case 'state': {
      const wanted = list(c.state);
      const forMs = c.for !== undefined ? durationMs(c.for) : 0;
      return list(c.entity_id).every((id) => {
        const s = env.states.get(id);
        if (!s) return false;
        const value = c.attribute ? s.attributes[c.attribute] : s.state;
        if (!wanted.includes(value === null || value === undefined ? '' : String(value))) return false;
        if (forMs > 0) {
          const since = s.last_changed ? Date.parse(s.last_changed) : NaN;
          if (!Number.isFinite(since) || env.clock.now() - since < forMs) return false;
        }
        return true;
      });
    }
    case 'numeric_state':
      return list(c.entity_id).every((id) => {
        const s = env.states.get(id) ?? null;
        return inRange(env, numericValue(env, s, c, vars), c);
      });
    case 'time':
      return timeConditionMatches(env.clock.now(), c);
    case 'template':
      return env.templates.renderBoolean(c.value_template, vars);
    case 'and':
      return c.conditions.every((x) => evaluateCondition(x, env, vars));
    case 'or':
      return c.conditions.some((x) => evaluateCondition(x, env, vars));
    case 'not':
      return !c.conditions.some((x) => evaluateCondition(x, env, vars));
  }
}

/** All conditions must hold; an error (bad template, bad entity bound) is a failed condition with a reason. */
export function evaluateAll(
  conditions: Condition[],
  env: TriggerEnv,
  vars: Record<string, unknown>,
): ConditionResult & { index?: number } {
  for (let i = 0; i < conditions.length; i++) {
    try {
      if (!evaluateCondition(conditions[i], env, vars)) return { ok: false, index: i };
    } catch (err) {
      return { ok: false, index: i, error: (err as Error).message };
    }
  }
  return { ok: true };
}
