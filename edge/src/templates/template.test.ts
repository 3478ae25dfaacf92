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

  it('as_timestamp filter: ISO strings (no offset = local), numbers, datetime objects; default on failure', () => {
    expect(t.render("{{ '2026-01-05T12:00:00Z' | as_timestamp }}", {})).toBe(String(Date.UTC(2026, 0, 5, 12) / 1000));
    expect(t.render("{{ '2026-01-05 12:00:00' | as_timestamp }}", {})).toBe(String(new Date(2026, 0, 5, 12).getTime() / 1000));
    expect(t.render('{{ 1767614400 | as_timestamp }}', {})).toBe('1767614400');
    expect(t.render('{{ d | as_timestamp }}', { d: { timestamp: 12.5 } })).toBe('12.5');
    expect(t.render("{{ 'tomorrow' | as_timestamp }}|{{ 'tomorrow' | as_timestamp(0) }}|{{ x | as_timestamp(-1) }}", {})).toBe('|0|-1');
    expect(t.render('{{ d | as_timestamp }}', { d: { toString: 'x' } })).toBe('');
  });

  it('reports invalid templates as TemplateError', () => {
    expect(() => t.render('{% if %}', {})).toThrow(TemplateError);
  });
});
