import { describe, expect, it } from 'vitest';
import { TemplateEngine, TemplateError } from './template.ts';

describe('TemplateEngine', () => {
  const t = new TemplateEngine();

  it('renders HA-style value_json templates', () => {
    expect(t.renderValue('{{ value_json.temperature }}', '{"temperature": 21.5}')).toBe('21.5');
    expect(t.renderValue('{{ value_json["a b"] }}', '{"a b": "x"}')).toBe('x');
    expect(t.renderValue('{{ value }}', 'raw text')).toBe('raw text');
    expect(t.renderValue('{{ value_json.list[1] }}', '{"list":[1,2,3]}')).toBe('2');
  });

  it('accepts Jinja filter call syntax and inline if/else', () => {
    expect(t.renderValue('{{ value_json.t | round(1) }}', '{"t": 21.456}')).toBe('21.5');
    expect(t.renderValue('{{ value_json.t | float | round(0) }}', '{"t": "7.6"}')).toBe('8');
    expect(t.renderValue('{{ value_json.t | int }}', '{"t": "7.6"}')).toBe('7');
    expect(t.renderValue("{{ 'ON' if value_json.on == true else 'OFF' }}", '{"on": true}')).toBe('ON');
    expect(t.renderValue("{{ 'ON' if value_json.on == true else 'OFF' }}", '{"on": false}')).toBe('OFF');
    expect(t.renderValue('{{ value_json.missing | default("none") }}', '{}')).toBe('none');
  });

  it('does not expose prototype properties', () => {
    expect(t.renderValue('{{ value_json.constructor }}{{ value_json.__proto__ }}', '{"a":1}')).toBe('');
    expect(t.render('{{ obj.toString }}', { obj: {} })).toBe('');
  });

  it('bounds templates: source size and render time', () => {
    const small = new TemplateEngine({ maxSource: 20, renderMs: 20 });
    expect(() => small.render('{{ "x" }}'.repeat(10), {})).toThrow(TemplateError);
    const slow = '{% for a in (1..1000) %}{% for b in (1..1000) %}{% for c in (1..100) %}x{% endfor %}{% endfor %}{% endfor %}';
    const bounded = new TemplateEngine({ renderMs: 20 });
    const started = Date.now();
    expect(() => bounded.render(slow, {})).toThrow(TemplateError);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('reports invalid templates as TemplateError', () => {
    expect(() => t.render('{% if %}', {})).toThrow(TemplateError);
  });
});
