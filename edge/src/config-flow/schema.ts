/**
 * Validates step input against a step's data_schema. Forms send strings, so integers,
 * floats and booleans are coerced; unknown fields are dropped; defaults are applied.
 * The result is either clean data or one error code per field (HA style: "required",
 * "invalid_integer", …) — never an exception.
 */
import type { DataSchemaField } from '@smarthome/protocol';
import type { StepErrors } from './types.ts';

export const MAX_STRING_LENGTH = 4096;

export type SchemaCheck = { ok: true; data: Record<string, unknown> } | { ok: false; errors: StepErrors };

function isBlank(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}

function coerce(field: DataSchemaField, raw: unknown): { value: unknown } | { error: string } {
  switch (field.type) {
    case 'string':
    case 'password': {
      if (typeof raw !== 'string') return { error: 'invalid_string' };
      if (raw.length > MAX_STRING_LENGTH) return { error: 'too_long' };
      return { value: field.type === 'string' ? raw.trim() : raw };
    }
    case 'url': {
      if (typeof raw !== 'string' || raw.length > MAX_STRING_LENGTH) return { error: 'invalid_url' };
      try {
        const u = new URL(raw.trim());
        if (u.protocol !== 'http:' && u.protocol !== 'https:') return { error: 'invalid_url' };
        return { value: u.toString() };
      } catch {
        return { error: 'invalid_url' };
      }
    }
    case 'integer': {
      const n =
        typeof raw === 'number'
          ? raw
          : typeof raw === 'string' && /^\s*[+-]?\d{1,15}\s*$/.test(raw)
            ? Number(raw)
            : NaN;
      if (!Number.isSafeInteger(n)) return { error: 'invalid_integer' };
      return { value: n };
    }
    case 'float': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      if (!Number.isFinite(n)) return { error: 'invalid_number' };
      return { value: n };
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return { value: raw };
      if (raw === 'true' || raw === 'on' || raw === '1' || raw === 1) return { value: true };
      if (raw === 'false' || raw === 'off' || raw === '0' || raw === 0) return { value: false };
      return { error: 'invalid_boolean' };
    }
    case 'select': {
      if (typeof raw !== 'string' || !(field.options ?? []).includes(raw)) return { error: 'invalid_option' };
      return { value: raw };
    }
  }
}

function outOfRange(field: DataSchemaField, value: unknown): boolean {
  if (typeof value !== 'number') return false;
  return (field.min !== undefined && value < field.min) || (field.max !== undefined && value > field.max);
}

export function checkStepInput(schema: DataSchemaField[], input: Record<string, unknown>): SchemaCheck {
  const errors: StepErrors = {};
  const data: Record<string, unknown> = {};
  for (const field of schema) {
    const raw = Object.hasOwn(input, field.name) ? input[field.name] : undefined;
    if (isBlank(raw)) {
      if (field.default !== undefined) data[field.name] = field.default;
      else if (field.required) errors[field.name] = 'required';
      continue;
    }
    const out = coerce(field, raw);
    if ('error' in out) errors[field.name] = out.error;
    else if (outOfRange(field, out.value)) errors[field.name] = 'out_of_range';
    else data[field.name] = out.value;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, data };
}
