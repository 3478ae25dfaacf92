import { describe, expect, it } from 'vitest';
import { MemoryStates } from './memory-ports.ts';
import { AutomationTemplates, TemplateError, rewriteHaFunctions, toNative } from './template.ts';

describe('automation templates', () => {
  const states = new MemoryStates();
  states.set('sensor.temp', '21.46', { unit: '°C', nested: { a: 1 } });
  states.set('light.kitchen', 'on', { brightness: 200 });
  const t = new AutomationTemplates(states, { renderMs: 50 });
  const vars = {
    trigger: { platform: 'webhook', json: { x: 5, name: 'bob', list: [1, 2] }, entity_id: 'light.kitchen', to_state: { state: 'on' } },
  };

  it('renders trigger fields', () => {
    expect(t.renderString('{{ trigger.json.x }}', vars)).toBe('5');
    expect(t.renderString('hi {{ trigger.json.name }}', vars)).toBe('hi bob');
    expect(t.renderString('{{ trigger.entity_id }}', vars)).toBe('light.kitchen');
    expect(t.renderString('{{ trigger.to_state.state }}', vars)).toBe('on');
    expect(t.renderString('{{ trigger.json.list[1] }}', vars)).toBe('2');
  });

  it('supports HA state functions', () => {
    expect(rewriteHaFunctions("{{ states('sensor.temp') }}")).toBe('{{ __st[\'sensor.temp\'] }}');
    expect(t.renderString("{{ states('sensor.temp') }}", {})).toBe('21.46');
    expect(t.renderString('{{ states("sensor.missing") }}', {})).toBe('unknown');
    expect(t.renderString("{{ state_attr('light.kitchen', 'brightness') }}", {})).toBe('200');
    expect(t.renderString("{{ is_state('light.kitchen', 'on') }}", {})).toBe('true');
    expect(t.renderString("{{ is_state('light.kitchen', 'off') }}", {})).toBe('false');
    expect(t.renderString('{{ states(trigger.entity_id) }}', vars)).toBe('on');
    expect(t.renderString("{% if is_state('light.kitchen', 'on') and states('sensor.temp') > 20 %}warm{% endif %}", {})).toBe('warm');
    expect(t.renderString('{{ states.light.kitchen.state }}/{{ states.light.kitchen.attributes.brightness }}', {})).toBe('on/200');
  });

  it('has number and JSON filters', () => {
    expect(t.renderString("{{ states('sensor.temp') | float | round(1) }}", {})).toBe('21.5');
    expect(t.renderString("{{ states('sensor.temp') | int }}", {})).toBe('21');
    expect(t.renderString('{{ "abc" | float(7) }}', {})).toBe('7');
    expect(t.renderString('{{ trigger.json | to_json }}', vars)).toBe('{"x":5,"name":"bob","list":[1,2]}');
    expect(t.renderString('{{ trigger.json | tojson }}', vars)).toBe('{"x":5,"name":"bob","list":[1,2]}');
    expect(t.renderString('{{ s | from_json | map: "a" | first }}', { s: '[{"a":3}]' })).toBe('3');
  });

  it('renders native values like HA', () => {
    expect(t.renderNative('{{ trigger.json.x }}', vars)).toBe(5);
    expect(t.renderNative('{{ trigger.json | to_json }}', vars)).toEqual({ x: 5, name: 'bob', list: [1, 2] });
    expect(t.renderNative('{{ 1 == 1 }}', {})).toBe(true);
    expect(t.renderNative('plain', {})).toBe('plain');
    expect(t.renderDeep({ a: '{{ trigger.json.x }}', b: ['{{ trigger.json.name }}', 3] }, vars)).toEqual({ a: 5, b: ['bob', 3] });
    expect(toNative('007x')).toBe('007x');
    expect(t.renderBoolean("{{ states('sensor.temp') > 30 }}", {})).toBe(false);
    expect(t.renderBoolean("{{ states('sensor.temp') > 20 }}", {})).toBe(true);
  });

  describe('sandbox', () => {
    it('cannot reach prototypes or constructors', () => {
      expect(t.renderString('{{ trigger.constructor }}|{{ trigger.__proto__ }}|{{ trigger.json.constructor.constructor }}', vars)).toBe('||');
      // calls do not exist in Liquid: the template is rejected, nothing runs
      expect(() => t.renderString("{{ trigger['constructor']['constructor']('return process')() }}", vars)).toThrow(TemplateError);
      expect(t.renderString("{{ trigger['constructor']['constructor'] }}", vars)).toBe('');
      expect(t.renderString('{{ __st.constructor }}|{{ __st.__proto__ }}|{{ states.constructor }}|{{ states.__proto__.polluted }}', {})).toBe('|||');
      expect(t.renderString("{{ __attr['light.kitchen'].constructor }}|{{ states.light.kitchen.attributes.__proto__ }}", {})).toBe('|');
      expect(t.renderString('{{ "x".constructor }}{{ trigger.json.list.constructor }}', vars)).toBe('');
      // a webhook body with a __proto__ key is just data
      const body = JSON.parse('{"__proto__": {"polluted": 1}}') as Record<string, unknown>;
      t.renderString('{% assign x = trigger.json %}{{ x.__proto__.polluted }}', { trigger: { json: body } });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('stops huge loops', () => {
      const started = Date.now();
      expect(() => t.renderString('{% for a in (1..100000) %}{% for b in (1..100000) %}x{% endfor %}{% endfor %}', {})).toThrow(TemplateError);
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it('caps output and memory', () => {
      const small = new AutomationTemplates(states, { maxOutput: 1000 });
      expect(() => small.renderString('{% for a in (1..5000) %}xx{% endfor %}', {})).toThrow(TemplateError);
      expect(() => t.renderString('{% assign s = "xxxxxxxxxx" %}{% for i in (1..40) %}{% assign s = s | append: s %}{% endfor %}{{ s | size }}', {})).toThrow(TemplateError);
    });

    it('has no file access and rejects oversized templates', () => {
      expect(() => t.renderString("{% include '/etc/passwd' %}", {})).toThrow();
      expect(() => t.renderString(`{{ "${'x'.repeat(20_000)}" }}`, {})).toThrow(TemplateError);
    });
  });
});

describe('jinja comparisons after filters', () => {
  const states = new MemoryStates();
  states.set('sensor.lux', '120.5');
  const t = new AutomationTemplates(states);
  it('evaluates {{ x | float > n }}', () => {
    expect(t.renderBoolean("{{ states('sensor.lux') | float > 100 }}", {})).toBe(true);
    expect(t.renderBoolean("{{ states('sensor.lux') | float(0) < 100 }}", {})).toBe(false);
    expect(t.renderString("{{ states('sensor.lux') | int == 120 }}", {})).toBe('true');
  });
});
