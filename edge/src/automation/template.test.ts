import { describe, expect, it } from 'vitest';
import { MemoryStates } from './memory-ports.ts';
import { AutomationTemplates, TemplateError, toNative } from './template.ts';

describe('automation templates', () => {
  const states = new MemoryStates();
  states.set('sensor.temp', '21.46', { unit: '°C', nested: { a: 1 } });
  states.set('light.kitchen', 'on', { brightness: 200 });
  const t = new AutomationTemplates(states, { renderMs: 50 });
  const vars = {
    trigger: {
      platform: 'webhook',
      json: { x: 5, name: 'bob', list: [1, 2] },
      entity_id: 'light.kitchen',
      to_state: { state: 'on' },
    },
  };

  it('renders trigger fields', () => {
    expect(t.renderString('{{ trigger.json.x }}', vars)).toBe('5');
    expect(t.renderString('hi {{ trigger.json.name }}', vars)).toBe('hi bob');
    expect(t.renderString('{{ trigger.entity_id }}', vars)).toBe('light.kitchen');
    expect(t.renderString('{{ trigger.to_state.state }}', vars)).toBe('on');
    expect(t.renderString('{{ trigger.json.list[1] }}', vars)).toBe('2');
  });

  it('supports HA state functions', () => {
    expect(t.renderString("{{ states('sensor.temp') }}", {})).toBe('21.46');
    expect(t.renderString('{{ states("sensor.missing") }}', {})).toBe('unknown');
    expect(t.renderString("{{ state_attr('light.kitchen', 'brightness') }}", {})).toBe('200');
    expect(t.renderString("{{ is_state('light.kitchen', 'on') }}", {})).toBe('True');
    expect(t.renderString("{{ is_state('light.kitchen', 'off') }}", {})).toBe('False');
    expect(t.renderString('{{ states(trigger.entity_id) }}', vars)).toBe('on');
    expect(
      t.renderString(
        "{% if is_state('light.kitchen', 'on') and states('sensor.temp') | float > 20 %}warm{% endif %}",
        {},
      ),
    ).toBe('warm');
    expect(
      t.renderString('{{ states.light.kitchen.state }}/{{ states.light.kitchen.attributes.brightness }}', {}),
    ).toBe('on/200');
  });

  it('has number and JSON filters', () => {
    expect(t.renderString("{{ states('sensor.temp') | float | round(1) }}", {})).toBe('21.5');
    expect(t.renderString("{{ states('sensor.temp') | int }}", {})).toBe('21');
    expect(t.renderString('{{ "abc" | float(7) }}', {})).toBe('7');
    expect(() => t.renderString('{{ "abc" | float }}', {})).toThrow(/float got invalid input 'abc'/);
    expect(t.renderString('{{ trigger.json | to_json }}', vars)).toBe('{"x":5,"name":"bob","list":[1,2]}');
    expect(t.renderString('{{ trigger.json | tojson }}', vars)).toBe('{"x": 5, "name": "bob", "list": [1, 2]}');
    expect(t.renderString('{{ s | from_json | map(attribute="a") | first }}', { s: '[{"a":3}]' })).toBe('3');
  });

  it('renders native values like HA', () => {
    expect(t.renderNative('{{ trigger.json.x }}', vars)).toBe(5);
    expect(t.renderNative('{{ trigger.json | to_json }}', vars)).toEqual({ x: 5, name: 'bob', list: [1, 2] });
    expect(t.renderNative('{{ 1 == 1 }}', {})).toBe(true);
    expect(t.renderNative('plain', {})).toBe('plain');
    expect(t.renderDeep({ a: '{{ trigger.json.x }}', b: ['{{ trigger.json.name }}', 3] }, vars)).toEqual({
      a: 5,
      b: ['bob', 3],
    });
    expect(toNative('007x')).toBe('007x');
    expect(t.renderNative("{{ [1, 'a', none] }}", {})).toEqual([1, 'a', null]);
    expect(t.renderNative("{{ {'a': True} }}", {})).toEqual({ a: true });
    expect(t.renderNative('{{ "hello" }}', {})).toBe('hello');
    expect(t.renderNative('{{ 10 / 4 }}', {})).toBe(2.5);
    expect(t.renderBoolean("{{ states('sensor.temp') | float > 30 }}", {})).toBe(false);
    expect(t.renderBoolean("{{ states('sensor.temp') | float > 20 }}", {})).toBe(true);
    // Python semantics: a state is a string, comparing it with a number is an error
    expect(() => t.renderBoolean("{{ states('sensor.temp') > 20 }}", {})).toThrow(TemplateError);
  });

  describe('time functions (from the injected clock)', () => {
    let now = Date.UTC(2026, 0, 5, 12, 34, 56, 789); // a Monday
    const clocked = new AutomationTemplates(states, {}, { now: () => now });
    const local = new Date(now);
    const pad = (n: number) => String(n).padStart(2, '0');

    it('now(): local fields, weekday() (Mon=0), isoweekday(), timestamp(), printed like Python', () => {
      expect(
        clocked.renderString(
          '{{ now().year }}-{{ now().month }}-{{ now().day }} {{ now().hour }}:{{ now().minute }}:{{ now().second }}',
          {},
        ),
      ).toBe(
        `${local.getFullYear()}-${local.getMonth() + 1}-${local.getDate()} ${local.getHours()}:${local.getMinutes()}:${local.getSeconds()}`,
      );
      expect(clocked.renderNative('{{ now().weekday() }}', {})).toBe((local.getDay() + 6) % 7);
      expect(clocked.renderNative('{{ now().isoweekday() }}', {})).toBe(local.getDay() === 0 ? 7 : local.getDay());
      expect(clocked.renderNative('{{ now().microsecond }}', {})).toBe(789_000);
      expect(clocked.renderNative('{{ now().timestamp() }}', {})).toBe(now / 1000);
      const printed = clocked.renderString('{{ now() }}', {});
      expect(printed).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.789000[+-]\d{2}:\d{2}$/);
      expect(Date.parse(printed)).toBe(now);
      expect(Date.parse(clocked.renderString('{{ now().isoformat() }}', {}))).toBe(now);
      expect(clocked.renderString("{{ now().strftime('%H:%M') }}", {})).toBe(
        `${pad(local.getHours())}:${pad(local.getMinutes())}`,
      );
      expect(
        clocked.renderBoolean(
          '{% if now().hour >= 0 and now().minute == ' + local.getMinutes() + ' %}true{% endif %}',
          {},
        ),
      ).toBe(true);
    });

    it('utcnow(), as_timestamp (function and filter), today_at()', () => {
      expect(clocked.renderString('{{ utcnow() }}', {})).toBe('2026-01-05 12:34:56.789000+00:00');
      expect(clocked.renderNative('{{ utcnow().hour }}/{{ utcnow().weekday() }}', {})).toBe('12/0');
      expect(clocked.renderNative('{{ as_timestamp(now()) }}', {})).toBe(now / 1000);
      expect(clocked.renderNative('{{ now() | as_timestamp }}', {})).toBe(now / 1000);
      expect(clocked.renderNative('{{ as_timestamp(utcnow()) | int }}', {})).toBe(Math.trunc(now / 1000));
      expect(clocked.renderNative("{{ as_timestamp('2026-01-05T00:00:00Z') }}", {})).toBe(Date.UTC(2026, 0, 5) / 1000);
      expect(
        clocked.renderNative('{{ as_timestamp(trigger.json.at) }}', {
          trigger: { json: { at: '2026-01-05T00:00:00+01:00' } },
        }),
      ).toBe(Date.UTC(2026, 0, 4, 23) / 1000);
      expect(clocked.renderString("{{ as_timestamp('not a date', none) }}|{{ 'nope' | as_timestamp(0) }}", {})).toBe(
        'None|0',
      );
      expect(() => clocked.renderString("{{ as_timestamp('not a date') }}", {})).toThrow(/no default/);
      const seven = new Date(local.getFullYear(), local.getMonth(), local.getDate(), 7, 30).getTime();
      expect(clocked.renderNative("{{ as_timestamp(today_at('07:30')) }}", {})).toBe(seven / 1000);
      expect(clocked.renderNative("{{ today_at('07:30').hour }}:{{ today_at('07:30').minute }}", {})).toBe('7:30');
      expect(clocked.renderNative('{{ as_timestamp(today_at()) }}', {})).toBe(
        new Date(local.getFullYear(), local.getMonth(), local.getDate()).getTime() / 1000,
      );
      expect(clocked.renderBoolean("{{ now() > today_at('00:00') }}", {})).toBe(true);
      expect(clocked.renderBoolean("{{ now() < today_at('00:00') }}", {})).toBe(false);
      expect(clocked.renderBoolean('{{ now() | as_timestamp > 1700000000 }}', {})).toBe(true);
      expect(() => clocked.renderString("{{ today_at('25:00') }}", {})).toThrow(TemplateError);
    });

    it('relative_time(): the largest whole unit since a date, as Home Assistant words it; the input when in the future or not a date', () => {
      const ago = (ms: number) => new Date(now - ms).toISOString();
      const vars = {
        a: ago(59_000),
        b: ago(61_000),
        c: ago(2 * 3600_000 + 5),
        d: ago(3 * 86400_000),
        e: ago(400 * 86400_000),
        f: ago(-60_000),
      };
      expect(
        clocked.renderString(
          '{{ relative_time(as_datetime(a)) }}|{{ relative_time(as_datetime(b)) }}|{{ relative_time(as_datetime(c)) }}|{{ relative_time(as_datetime(d)) }}|{{ relative_time(as_datetime(e)) }}',
          vars,
        ),
      ).toBe('59 seconds|1 minute|2 hours|3 days|1 year');
      // a future datetime comes back as it is; so does anything not a datetime (a string too, as in HA)
      expect(
        clocked.renderString(
          '{{ relative_time(as_datetime(f)) == as_datetime(f) }}|{{ relative_time(x) }}|{{ relative_time(a) == a }}',
          { ...vars, x: 'soon' },
        ),
      ).toBe('True|soon|True');
      expect(clocked.renderString('{{ relative_time(missing) }}', {})).toBe('');
      expect(clocked.renderString('{{ relative_time(now() - timedelta(hours=3)) }}', {})).toBe('3 hours');
    });

    it('follows the clock', () => {
      const before = clocked.renderNative('{{ as_timestamp(now()) }}', {});
      now += 3_600_000;
      expect(clocked.renderNative('{{ as_timestamp(now()) }}', {})).toBe((before as number) + 3600);
      now -= 3_600_000;
    });

    it('datetime arithmetic and methods', () => {
      expect(clocked.renderString("{{ (now() - timedelta(minutes=90)).strftime('%H:%M') }}", {})).toBe(
        `${pad(new Date(now - 5_400_000).getHours())}:${pad(new Date(now - 5_400_000).getMinutes())}`,
      );
      expect(clocked.renderString("{{ utcnow() - as_datetime('2026-01-05T12:00:00+00:00') }}", {})).toBe(
        '0:34:56.789000',
      );
      expect(clocked.renderNative("{{ (utcnow() - as_datetime('2026-01-04T12:34:56.789+00:00')).days }}", {})).toBe(1);
      expect(
        clocked.renderNative("{{ (utcnow() - as_datetime('2026-01-05T12:00:00+00:00')).total_seconds() }}", {}),
      ).toBe(2096.789);
      expect(clocked.renderString('{{ utcnow() + timedelta(days=1, hours=1) }}', {})).toBe(
        '2026-01-06 13:34:56.789000+00:00',
      );
      expect(
        clocked.renderString('{{ utcnow().replace(hour=0, minute=0, second=0, microsecond=0).isoformat() }}', {}),
      ).toBe('2026-01-05T00:00:00+00:00');
      expect(clocked.renderBoolean('{{ now() - timedelta(hours=1) < now() }}', {})).toBe(true);
    });
  });

  describe('sandbox', () => {
    it('cannot reach prototypes or constructors', () => {
      expect(
        t.renderString('{{ trigger.constructor }}|{{ trigger.__proto__ }}|{{ trigger.json.constructor }}', vars),
      ).toBe('||');
      expect(() => t.renderString('{{ trigger.json.constructor.constructor }}', vars)).toThrow(/undefined/);
      // no lookup yields a host function: calling what is not the runtime's is an error
      expect(() => t.renderString("{{ trigger['constructor']['constructor']('return process')() }}", vars)).toThrow(
        TemplateError,
      );
      expect(() => t.renderString("{{ ''.constructor.constructor('return process')() }}", vars)).toThrow(TemplateError);
      expect(() => t.renderString("{{ states.constructor.constructor('return process')() }}", vars)).toThrow(
        TemplateError,
      );
      expect(() => t.renderString("{{ (1).toString.call }}{{ [].map.constructor('return 1')() }}", vars)).toThrow(
        TemplateError,
      );
      expect(() => t.renderString("{{ states('x').__proto__.constructor('x')() }}", vars)).toThrow(TemplateError);
      expect(() =>
        t.renderString("{{ namespace().__init__ }}{{ range.constructor('return process')() }}", vars),
      ).toThrow(TemplateError);
      expect(() => t.renderString("{{ trigger['constructor']['constructor'] }}", vars)).toThrow(/undefined/);
      // as in Home Assistant, any valid name after states. is a domain
      expect(
        t.renderString('{{ states.constructor }}|{{ states.__proto__ }}|{{ states.constructor.constructor }}', {}),
      ).toBe("<template DomainStates('constructor')>||None");
      expect(
        t.renderString(
          '{{ states.light.kitchen.attributes.constructor }}|{{ states.light.kitchen.attributes.__proto__ }}|{{ states.light.kitchen.s }}',
          {},
        ),
      ).toBe('||');
      expect(t.renderString('{{ "x".constructor }}{{ trigger.json.list.constructor }}', vars)).toBe('');
      // a webhook body with a __proto__ key is just data
      const body = JSON.parse('{"__proto__": {"polluted": 1}}') as Record<string, unknown>;
      expect(
        t.renderString('{% set x = trigger.json %}{{ x.__proto__.polluted }}{{ x["__proto__"]["polluted"] }}', {
          trigger: { json: body },
        }),
      ).toBe('11');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('time functions expose no prototypes, constructors or callables', () => {
      const c = new AutomationTemplates(states, {}, { now: () => Date.UTC(2026, 0, 5, 12) });
      expect(
        c.renderString(
          '{{ now().constructor }}|{{ now().__proto__ }}|{{ utcnow().toString }}|{{ now().valueOf }}|{{ now()["constructor"] }}|{{ now().ms }}|{{ now().fields }}',
          {},
        ),
      ).toBe('||||||');
      expect(
        c.renderString(
          "{{ today_at('07:00').constructor }}|{{ timedelta(hours=1).us }}|{{ timedelta(hours=1).constructor }}",
          {},
        ),
      ).toBe('||');
      expect(() => c.renderString("{{ today_at('constructor') }}", {})).toThrow(TemplateError);
      expect(c.renderString("{{ as_timestamp('constructor', 0) }}|{{ as_timestamp(now().constructor, 0) }}", {})).toBe(
        '0|0',
      );
      // no lookup yields a host function, so nothing can be called
      expect(() => c.renderString("{{ now().constructor.constructor('return process')() }}", {})).toThrow(
        TemplateError,
      );
      expect(() => c.renderString("{{ now()['constructor']('x') }}", {})).toThrow(TemplateError);
      expect(() => c.renderString('{% for k in now() %}{{ k }}{% endfor %}', {})).toThrow(/not iterable/);
    });

    it('stops huge loops', () => {
      const started = Date.now();
      expect(() =>
        t.renderString('{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}', {}),
      ).toThrow(TemplateError);
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it('caps output and memory', () => {
      const small = new AutomationTemplates(states, { maxOutput: 1000 });
      expect(() => small.renderString('{% for a in range(5000) %}xx{% endfor %}', {})).toThrow(TemplateError);
      expect(() =>
        t.renderString(
          '{% set ns = namespace(s="xxxxxxxxxx") %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}',
          {},
        ),
      ).toThrow(TemplateError);
      expect(() => t.renderString('{{ "x" * 100000000 }}', {})).toThrow(TemplateError);
      expect(() => t.renderString('{{ range(1000000) | list }}', {})).toThrow(/range/);
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
    expect(t.renderString("{{ states('sensor.lux') | int == 120 }}", {})).toBe('True');
  });
});
