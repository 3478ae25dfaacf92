import { describe, expect, it } from 'vitest';
import { parseTemplate } from './parser.ts';
import { payloadLookup } from './payload-lookup.ts';
import { TemplateEngine, parseJsonOrUndefined } from './template.ts';

const t = new TemplateEngine({ maxOutput: 64 });

/** What the interpreter alone answers (renderValue before the lookup existed), or the error it throws. */
function interpreted(source: string, payload: string): string {
  try {
    return t.render(source, { value: payload, value_json: parseJsonOrUndefined(payload) });
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}
function rendered(source: string, payload: string): string {
  try {
    return t.renderValue(source, payload);
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}

describe('payload lookups (value templates answered without the interpreter)', () => {
  it('recognizes only a whole template that reads one value out of the payload', () => {
    const plan = (s: string) => payloadLookup(parseTemplate(s));
    expect(plan('{{ value_json.value }}')).toEqual({
      json: true,
      steps: [{ key: 'value', dot: true }],
      before: '',
      after: '',
    });
    expect(plan(" x {{ value_json['a'].b[2] }} W")).toEqual({
      json: true,
      steps: [
        { key: 'a', dot: false },
        { key: 'b', dot: true },
        { key: 2, dot: false },
      ],
      before: ' x ',
      after: ' W',
    });
    expect(plan('{{ value }}')).toEqual({ json: false, steps: [], before: '', after: '' });
    for (const s of [
      '{{ value_json.t | round(1) }}',
      '{{ value_json.a }}{{ value_json.b }}',
      '{{ value.a }}',
      '{{ other.a }}',
      '{{ value_json[-1] }}',
      '{{ value_json[1.0] }}',
      '{{ value_json[key] }}',
      '{% if value %}on{% endif %}',
      'text only',
    ])
      expect(plan(s), s).toBeNull();
  });

  it('renders what the interpreter renders, errors included', () => {
    const templates = [
      '{{ value_json.value }}',
      '{{ value_json["value"] }}',
      '{{ value_json.a.b }}',
      '{{ value_json.list[1] }}',
      '{{ value_json[0] }}',
      '{{ value_json.items }}',
      '{{ value_json["items"] }}',
      '{{ value_json._x }}',
      '{{ value_json.constructor }}',
      '{{ value_json.__proto__ }}',
      '  {{ value }}  ',
      'v={{ value_json.value }} W',
      '{{ value }}',
    ];
    const payloads = [
      '{"value": 21.5}',
      '{"value": 1e21, "a": {"b": true}}',
      '{"value": 3, "a": {"b": null}, "list": [1, "x"]}',
      '{"value": "  padded  ", "items": 5, "_x": "own", "constructor": 7}',
      '{"value": {"nested": 1}, "list": []}',
      '{"value": [1, 2]}',
      '{"__proto__": 1, "value": false}',
      '[4, 5]',
      '"a string"',
      '12',
      'not json',
      '',
      `{"value": "${'x'.repeat(80)}"}`,
      'x'.repeat(80),
    ];
    for (const s of templates) for (const p of payloads) expect(rendered(s, p), `${s} on ${p}`).toBe(interpreted(s, p));
  });
});
