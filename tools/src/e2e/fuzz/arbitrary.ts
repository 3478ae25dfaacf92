/**
 * fast-check arbitraries from the JSON schemas of an OpenAPI 3.1 document (the subset that
 * zod-to-openapi emits: $ref, type (or a list of types), enum, const, anyOf/oneOf/allOf,
 * properties/required/additionalProperties, items/minItems/maxItems, min/maxLength, pattern,
 * format, minimum/maximum/exclusiveMinimum). Values mostly follow the schema, so handlers get
 * past validation and run; `mutated` breaks one place of such a value at a time.
 */
import fc from 'fast-check';

export type JsonSchema = Record<string, any>;
type Components = Record<string, JsonSchema>;

/** Generated URLs point at the discard port on loopback: a fuzzed automation must never reach out. */
const loopbackUrl = fc.webPath().map((p) => `http://127.0.0.1:9${p.startsWith('/') ? p : `/${p}`}`);
/** How deep recursive schemas ($ref cycles: conditions, actions) are followed before the generator stops nesting. */
const MAX_DEPTH = 5;
const MAX_ITEMS = 3;
const MAX_STRING = 40;

/** Any small JSON value, for schemas that say nothing (`{}`) and for mutations. */
export const anyJson = fc.jsonValue({ maxDepth: 2 });

export function arbitraryFor(
  schema: JsonSchema | undefined,
  components: Components,
  depth = 0,
  key = '',
): fc.Arbitrary<unknown> {
  if (!schema || Object.keys(schema).length === 0 || schema === (true as unknown)) return anyJson;
  if (schema.$ref) {
    const name = String(schema.$ref).split('/').pop()!;
    if (depth > MAX_DEPTH) return fc.constant({});
    return arbitraryFor(components[name], components, depth + 1, key);
  }
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives))
    return fc.oneof(...alternatives.map((s: JsonSchema) => arbitraryFor(s, components, depth + 1, key)));
  if (Array.isArray(schema.allOf)) {
    return fc
      .tuple(...schema.allOf.map((s: JsonSchema) => arbitraryFor(s, components, depth + 1, key)))
      .map((parts) =>
        parts.every((p) => p && typeof p === 'object' && !Array.isArray(p)) ? Object.assign({}, ...parts) : parts[0],
      );
  }
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((t: string) => arbitraryFor({ ...schema, type: t }, components, depth, key)));
  switch (schema.type) {
    case 'object':
      return objectFor(schema, components, depth);
    case 'array': {
      const min = schema.minItems ?? 0;
      if (depth > MAX_DEPTH && min === 0) return fc.constant([]);
      return fc.array(arbitraryFor(schema.items, components, depth + 1, key), {
        minLength: min,
        maxLength: Math.max(min, Math.min(schema.maxItems ?? MAX_ITEMS, MAX_ITEMS)),
      });
    }
    case 'string':
      return stringFor(schema, key);
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: schema.maximum ?? 1_000_000 });
    case 'number': {
      const min = schema.minimum ?? schema.exclusiveMinimum ?? -1e6;
      return fc.double({
        min,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
        minExcluded: schema.exclusiveMinimum !== undefined,
      });
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return anyJson;
  }
}

function objectFor(schema: JsonSchema, components: Components, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, JsonSchema> = schema.properties ?? {};
  const required = new Set<string>(schema.required ?? []);
  const known = fc.record(
    Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, arbitraryFor(s, components, depth + 1, k)])),
    { requiredKeys: [...required].filter((k) => k in properties) },
  );
  if (schema.additionalProperties === false || depth > MAX_DEPTH) return known;
  const extra = fc.dictionary(
    fc.string({ minLength: 1, maxLength: 12 }),
    arbitraryFor(schema.additionalProperties === true ? {} : schema.additionalProperties, components, depth + 1),
    { maxKeys: 3 },
  );
  return fc.tuple(known, extra).map(([k, e]) => ({ ...e, ...k }));
}

function stringFor(schema: JsonSchema, key: string): fc.Arbitrary<string> {
  if (schema.format === 'uri' || /url$/i.test(key)) return loopbackUrl;
  if (schema.format === 'email') return fc.emailAddress().filter((e) => e.length <= (schema.maxLength ?? 254));
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'date-time')
    return fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((d) => d.toISOString());
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? MAX_STRING, MAX_STRING));
  if (schema.pattern) {
    try {
      const re = new RegExp(schema.pattern);
      return fc.stringMatching(re).filter((s) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity));
    } catch {
      // a pattern JavaScript cannot compile: plain strings then
    }
  }
  return fc.string({ minLength, maxLength, unit: 'grapheme' });
}

/** Values that break a schema: wrong types, NUL, huge and odd strings, extremes. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    0,
    -1,
    1e308,
    -0,
    '',
    'a\u0000b',
    '\u0000',
    '\uFFFF',
    '\uD800',
    '../../etc/passwd',
    '%00',
    '{{ 7*7 }}',
    '{% for x in range(99999999) %}{% endfor %}',
    "'; DROP TABLE users; --",
    [],
    {},
    [[[]]],
    JSON.parse('{"__proto__":{"polluted":true}}'),
    { constructor: { prototype: { polluted: true } } },
  ),
  fc.integer().map((n) => n * 1e15),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constant('x'.repeat(100_000)),
  anyJson,
);

/** A value the schema accepts, with one property (at the top or one level down) replaced by a hostile value. */
export function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(valid, hostileValue, fc.nat(), fc.nat()).map(([value, bad, i, j]) => {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return bad;
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(out);
    if (keys.length === 0) return { [`k${i % 5}`]: bad };
    const key = keys[i % keys.length];
    const inner = out[key];
    if (inner && typeof inner === 'object' && !Array.isArray(inner) && Object.keys(inner).length > 0) {
      const innerKeys = Object.keys(inner);
      out[key] = { ...(inner as Record<string, unknown>), [innerKeys[j % innerKeys.length]]: bad };
    } else {
      out[key] = bad;
    }
    return out;
  });
}
