import { describe, expect, it } from 'vitest';
import { MemoryStates } from './memory-ports.ts';
import { AutomationTemplates, TemplateError, haDateTime, rewriteHaFunctions, toNative } from './template.ts';

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

  describe('time functions (from the injected clock)', () => {
    let now = Date.UTC(2026, 0, 5, 12, 34, 56, 789); // a Monday
    const clocked = new AutomationTemplates(states, {}, { now: () => now });
    const local = new Date(now);
    const pad = (n: number) => String(n).padStart(2, '0');

    it('now(): local fields, weekday() (Mon=0), isoweekday(), timestamp(), printed like Python', () => {
      expect(clocked.renderString('{{ now().year }}-{{ now().month }}-{{ now().day }} {{ now().hour }}:{{ now().minute }}:{{ now().second }}', {}))
        .toBe(`${local.getFullYear()}-${local.getMonth() + 1}-${local.getDate()} ${local.getHours()}:${local.getMinutes()}:${local.getSeconds()}`);
      expect(clocked.renderNative('{{ now().weekday() }}', {})).toBe((local.getDay() + 6) % 7);
      expect(clocked.renderNative('{{ now().isoweekday() }}', {})).toBe(local.getDay() === 0 ? 7 : local.getDay());
      expect(clocked.renderNative('{{ now().microsecond }}', {})).toBe(789_000);
      expect(clocked.renderNative('{{ now().timestamp() }}', {})).toBe(now / 1000);
      const printed = clocked.renderString('{{ now() }}', {});
      expect(printed).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.789000[+-]\d{2}:\d{2}$/);
      expect(Date.parse(printed)).toBe(now);
      expect(Date.parse(clocked.renderString('{{ now().isoformat() }}', {}))).toBe(now);
      expect(clocked.renderString("{{ now().strftime('%H:%M') }}", {})).toBe(`${pad(local.getHours())}:${pad(local.getMinutes())}`);
      expect(clocked.renderBoolean('{% if now().hour >= 0 and now().minute == ' + local.getMinutes() + ' %}true{% endif %}', {})).toBe(true);
    });

    it('utcnow(), as_timestamp (function and filter), today_at()', () => {
      expect(clocked.renderString('{{ utcnow() }}', {})).toBe('2026-01-05 12:34:56.789000+00:00');
      expect(clocked.renderNative('{{ utcnow().hour }}/{{ utcnow().weekday() }}', {})).toBe('12/0');
      expect(clocked.renderNative('{{ as_timestamp(now()) }}', {})).toBe(now / 1000);
      expect(clocked.renderNative('{{ now() | as_timestamp }}', {})).toBe(now / 1000);
      expect(clocked.renderNative('{{ as_timestamp(utcnow()) | int }}', {})).toBe(Math.trunc(now / 1000));
      expect(clocked.renderNative("{{ as_timestamp('2026-01-05T00:00:00Z') }}", {})).toBe(Date.UTC(2026, 0, 5) / 1000);
      expect(clocked.renderNative('{{ as_timestamp(trigger.json.at) }}', { trigger: { json: { at: '2026-01-05T00:00:00+01:00' } } })).toBe(Date.UTC(2026, 0, 4, 23) / 1000);
      expect(clocked.renderString("{{ as_timestamp('not a date') }}|{{ 'nope' | as_timestamp(0) }}", {})).toBe('|0');
      const seven = new Date(local.getFullYear(), local.getMonth(), local.getDate(), 7, 30).getTime();
      expect(clocked.renderNative("{{ as_timestamp(today_at('07:30')) }}", {})).toBe(seven / 1000);
      expect(clocked.renderNative("{{ today_at('07:30').hour }}:{{ today_at('07:30').minute }}", {})).toBe('7:30');
      expect(clocked.renderNative('{{ as_timestamp(today_at()) }}', {})).toBe(new Date(local.getFullYear(), local.getMonth(), local.getDate()).getTime() / 1000);
      expect(clocked.renderBoolean("{{ now() > today_at('00:00') }}", {})).toBe(true);
      expect(clocked.renderBoolean("{{ now() < today_at('00:00') }}", {})).toBe(false);
      expect(clocked.renderBoolean('{{ now() | as_timestamp > 1700000000 }}', {})).toBe(true);
      expect(clocked.renderString("{{ today_at('25:00') }}", {})).toBe('');
    });

    it('relative_time(): the largest whole unit since a date, as Home Assistant words it; the input when in the future or not a date', () => {
      const ago = (ms: number) => new Date(now - ms).toISOString();
      const vars = { a: ago(59_000), b: ago(61_000), c: ago(2 * 3600_000 + 5), d: ago(3 * 86400_000), e: ago(400 * 86400_000), f: ago(-60_000) };
      expect(clocked.renderString('{{ relative_time(a) }}|{{ relative_time(b) }}|{{ relative_time(c) }}|{{ relative_time(d) }}|{{ relative_time(e) }}', vars))
        .toBe('59 seconds|1 minute|2 hours|3 days|1 year');
      expect(clocked.renderString('{{ relative_time(f) }}|{{ relative_time(x) }}', { ...vars, x: 'soon' })).toBe(`${vars.f}|soon`);
      expect(clocked.renderString('{{ relative_time(missing) }}', {})).toBe('');
    });

    it('follows the clock', () => {
      const before = clocked.renderNative('{{ as_timestamp(now()) }}', {});
      now += 3_600_000;
      expect(clocked.renderNative('{{ as_timestamp(now()) }}', {})).toBe((before as number) + 3600);
      now -= 3_600_000;
    });

    it('a datetime is frozen data without a prototype', () => {
      const dt = haDateTime(now, true);
      expect(Object.getPrototypeOf(dt)).toBeNull();
      expect(Object.isFrozen(dt)).toBe(true);
      expect(Object.keys(dt).every((k) => typeof dt[k] !== 'function')).toBe(true);
      expect(rewriteHaFunctions("{{ as_timestamp(now()) }}{{ today_at('07:00') }}{{ utcnow().weekday() }}")).toBe("{{ __ts[__now] }}{{ __today_at['07:00'] }}{{ __utcnow.weekday }}");
    });
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

    it('time functions expose no prototypes, constructors or callables', () => {
      const c = new AutomationTemplates(states, {}, { now: () => Date.UTC(2026, 0, 5, 12) });
      expect(c.renderString('{{ now().constructor }}|{{ now().__proto__ }}|{{ utcnow().toString }}|{{ now().valueOf }}|{{ now()["constructor"]["constructor"] }}', {})).toBe('||||');
      expect(c.renderString("{{ today_at('07:00').constructor }}|{{ today_at('__proto__') }}|{{ today_at('constructor') }}", {})).toBe('||');
      expect(c.renderString('{{ __ts.constructor }}|{{ __ts.__proto__ }}|{{ __today_at.constructor }}|{{ __now.constructor.constructor }}', {})).toBe('|||');
      expect(c.renderString("{{ as_timestamp('constructor') }}|{{ as_timestamp(now().constructor) }}", {})).toBe('|');
      // nothing callable is reachable: a call is a parse error, and no lookup yields a function
      expect(() => c.renderString("{{ now().constructor.constructor('return process')() }}", {})).toThrow(TemplateError);
      expect(() => c.renderString("{{ now()['constructor']('x') }}", {})).toThrow(TemplateError);
      expect(c.renderString('{% for k in now() %}{{ k }}{% endfor %}', {})).not.toContain('function');
      // a template variable named like a global cannot replace the clock's value
      expect(c.renderNative('{{ now().hour }}', { __now: { hour: 99 } })).not.toBe(99);
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
