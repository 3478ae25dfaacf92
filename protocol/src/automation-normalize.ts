/**
 * HA normalization: pasted Home Assistant automations in the newer spelling
 * (`triggers`/`conditions`/`actions`, `trigger: state`, `action: light.turn_on`, `if/then/else`,
 * template-string shorthand conditions) are rewritten to the internal form before validation.
 */

import { isJsonObject } from './common.ts';

type Obj = Record<string, unknown>;
const mapList = (v: unknown, fn: (x: unknown) => unknown): unknown =>
  Array.isArray(v) ? v.map(fn) : v === undefined ? v : fn(v);

export function normalizeTrigger(t: unknown): unknown {
  if (!isJsonObject(t)) return t;
  if (t.platform === undefined && typeof t.trigger === 'string') {
    const { trigger, ...rest } = t;
    return { platform: trigger, ...rest };
  }
  return t;
}

export function normalizeCondition(c: unknown): unknown {
  if (typeof c === 'string') return { condition: 'template', value_template: c };
  if (!isJsonObject(c)) return c;
  if (c.condition === 'and' || c.condition === 'or' || c.condition === 'not')
    return { ...c, conditions: mapList(c.conditions, normalizeCondition) };
  return c;
}

export function normalizeAction(a: unknown): unknown {
  if (!isJsonObject(a)) return a;
  let out: Obj = { ...a };
  if (out.service === undefined && typeof out.action === 'string') {
    const { action, ...rest } = out;
    out = { service: action, ...rest };
  }
  if ('if' in out && out.choose === undefined) {
    const { if: cond, then, else: otherwise, ...rest } = out;
    out = {
      choose: [{ conditions: cond, sequence: then ?? [] }],
      ...(otherwise !== undefined ? { default: otherwise } : {}),
      ...rest,
    };
  }
  if (
    typeof out.condition === 'string' &&
    !['state', 'numeric_state', 'time', 'template', 'and', 'or', 'not'].includes(out.condition) &&
    out.condition.includes('{{')
  ) {
    out = { condition: 'template', value_template: out.condition };
  }
  if (out.condition !== undefined) return normalizeCondition(out);
  if (out.wait_for_trigger !== undefined) out.wait_for_trigger = mapList(out.wait_for_trigger, normalizeTrigger);
  if (out.choose !== undefined) {
    out.choose = mapList(out.choose, (o) =>
      isJsonObject(o)
        ? {
            ...o,
            conditions: mapList(o.conditions, normalizeCondition),
            sequence: mapList(o.sequence, normalizeAction),
          }
        : o,
    );
  }
  if (out.default !== undefined) out.default = mapList(out.default, normalizeAction);
  if (isJsonObject(out.repeat)) {
    const r: Obj = { ...out.repeat };
    if (r.sequence !== undefined) r.sequence = mapList(r.sequence, normalizeAction);
    if (r.while !== undefined) r.while = mapList(r.while, normalizeCondition);
    if (r.until !== undefined) r.until = mapList(r.until, normalizeCondition);
    out.repeat = r;
  }
  return out;
}

/** Accepts HA's newer spellings and the plural keys; returns the internal form. */
export function normalizeAutomationInput(input: unknown): unknown {
  if (!isJsonObject(input)) return input;
  const out: Obj = { ...input };
  for (const [plural, singular] of [
    ['triggers', 'trigger'],
    ['conditions', 'condition'],
    ['actions', 'action'],
  ] as const) {
    if (out[plural] !== undefined) {
      if (out[singular] === undefined) out[singular] = out[plural];
      delete out[plural];
    }
  }
  if (out.trigger !== undefined) out.trigger = mapList(out.trigger, normalizeTrigger);
  if (out.condition !== undefined) out.condition = mapList(out.condition, normalizeCondition);
  if (out.action !== undefined) out.action = mapList(out.action, normalizeAction);
  // HA exports carry an `id` of their own; ours is assigned by the service.
  delete out.id;
  return out;
}
