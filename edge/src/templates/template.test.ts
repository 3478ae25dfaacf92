import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { MemoryStates } from '../automation/memory-ports.ts';
import { LINEAR_REGEX, mayBacktrack } from './regex.ts';
import { TemplateEngine, TemplateError } from './template.ts';

describe('TemplateEngine', () => {
  const t = new TemplateEngine();

  it('renders HA-style value_json templates', () => {
    expect(t.renderValue('{{ value_json.temperature }}', '{"temperature": 21.5}')).toBe('21.5');
    expect(t.renderValue('{{ value_json["a b"] }}', '{"a b": "x"}')).toBe('x');
    expect(t.renderValue('{{ value }}', 'raw text')).toBe('raw text');
    expect(t.renderValue('{{ value_json.list[1] }}', '{"list":[1,2,3]}')).toBe('2');
    expect(t.renderValue('{{ value_json.list[-1] }}', '{"list":[1,2,3]}')).toBe('3');
  });

  it('Jinja filters with arguments, inline if/else, Python truthiness', () => {
    expect(t.renderValue('{{ value_json.t | round(1) }}', '{"t": 21.456}')).toBe('21.5');
    expect(t.renderValue('{{ value_json.t | float | round(0) }}', '{"t": "7.6"}')).toBe('8');
    expect(t.renderValue('{{ value_json.t | int }}', '{"t": "7.6"}')).toBe('7');
    expect(t.renderValue("{{ 'ON' if value_json.on == true else 'OFF' }}", '{"on": true}')).toBe('ON');
    expect(t.renderValue("{{ 'ON' if value_json.on == true else 'OFF' }}", '{"on": false}')).toBe('OFF');
    expect(t.renderValue('{{ value_json.missing | default("none") }}', '{}')).toBe('none');
    expect(t.renderValue("{{ 'yes' if value_json.l else 'no' }}", '{"l": []}')).toBe('no');
  });

  it('does not expose prototype properties', () => {
    expect(t.renderValue('{{ value_json.constructor }}{{ value_json.__proto__ }}', '{"a":1}')).toBe('');
    expect(t.render('{{ obj.toString }}{{ obj.hasOwnProperty }}', { obj: {} })).toBe('');
    expect(t.render('{{ "".constructor }}{{ [].constructor }}{{ (1).constructor }}{{ "".length }}', {})).toBe('');
  });

  it('no JavaScript is reachable: constructors, prototypes, host functions', () => {
    for (const src of [
      "{{ ''.constructor.constructor('return process')() }}",
      "{{ ''['constructor']['constructor']('return process')() }}",
      "{{ [].map.constructor('return process')() }}",
      '{{ (0).toFixed.call }}',
      '{{ x.fn() }}',
      '{{ cycler.__init__.__globals__ }}',
      "{{ now.__proto__.constructor('return 1')() }}",
      "{{ ''.__class__.__mro__[1].__subclasses__() }}",
      '{{ range.__globals__ }}{{ states.__class__ }}{{ namespace.__init__ }}',
    ]) {
      let out: string | undefined;
      try {
        out = t.render(src, { x: { fn: () => 'host function called' } });
      } catch (err) {
        expect(err).toBeInstanceOf(TemplateError);
      }
      expect(out ?? '', src).not.toMatch(/process|host function|function|Object|class/);
    }
    expect(() => t.render('{{ x.fn() }}', { x: { fn: () => 'called' } })).toThrow(/not callable|undefined/);
  });

  it('a macro name, variable or filter name never reaches generated code (there is none)', () => {
    // only nunjucks' lexer and parser are loaded: its compiler (which generates JavaScript) and runtime are not
    const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => /nunjucks[\\/]src[\\/]/.test(k));
    expect(loaded.some((k) => k.endsWith('parser.js'))).toBe(true);
    expect(loaded.filter((k) => /(compiler|environment|runtime|precompile)\.js$/.test(k))).toEqual([]);
    const evil = '{% macro a"]=1;process.exit(1);//(x) %}{% endmacro %}';
    expect(() => t.render(evil, {})).toThrow(TemplateError);
    expect(t.render("{% macro constructor(x) %}[{{ x }}]{% endmacro %}{{ constructor('ok') }}", {})).toBe('[ok]');
    expect(t.render('{% macro __proto__() %}p{% endmacro %}{{ __proto__() }}', {})).toBe('p');
    expect(t.render("{% set toString = 'v' %}{{ toString }}{% set valueOf = 2 %}{{ valueOf + 1 }}", {})).toBe('v3');
    expect(() => t.render('{{ 1 | constructor }}', {})).toThrow(/no filter named/);
    expect(() => t.render('{{ 1 is constructor }}', {})).toThrow(/no test named/);
    expect(() => t.render("{{ x | attr('constructor') | attr('constructor') }}", { x: {} })).toThrow(TemplateError);
  });

  it('bounds templates: source size, render time, loop iterations, range, output', () => {
    const small = new TemplateEngine({ maxSource: 20, renderMs: 20 });
    expect(() => small.render('{{ "x" }}'.repeat(10), {})).toThrow(/longer than 20/);
    // no output in the loops: on a fast machine an 'x' per turn hit the output cap before the 20 ms
    const bounded = new TemplateEngine({ renderMs: 20, maxIterations: 1e9 });
    const started = Date.now();
    expect(() =>
      bounded.render(
        '{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(100) %}{% endfor %}{% endfor %}{% endfor %}',
        {},
      ),
    ).toThrow(/too long/);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(() =>
      new TemplateEngine({ renderMs: 10_000 }).render(
        '{% for a in range(1000) %}{% for b in range(1000) %}{% endfor %}{% endfor %}',
        {},
      ),
    ).toThrow(/loops ran more than 100000/);
    expect(() => t.render('{{ range(100001) | list }}', {})).toThrow(/range/);
    expect(() => new TemplateEngine({ maxOutput: 100 }).render('{% for i in range(60) %}ab{% endfor %}', {})).toThrow(
      /output longer than 100/,
    );
    expect(() => t.render('{{ "ab" * 10000000 }}', {})).toThrow(TemplateError);
    expect(() => t.render('{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}', {})).toThrow(/nested too deeply/);
    // values built from shared pieces cannot grow without bound either
    const bombs = [
      '{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l | length }}',
      '{{ [[1] * 60000] * 60000 }}',
      '{% set big = [[1] * 60000] * 60000 %}{{ big | flatten | length }}',
      '{% set big = [[1] * 60000] * 60000 %}{{ big | to_json | length }}',
      "{{ ('x' * 60000) | replace('', 'y' * 60000) | length }}",
      "{{ ('x' * 60000) | regex_replace('', 'y' * 60000) | length }}",
      "{{ ('y' * 60000).join('x' * 60000) | length }}",
      "{{ 'x'.zfill(1000000000) | length }}{{ '{:>1000000000}'.format(1) }}",
      '{{ range(10) | batch(1000000000, 0) | list }}',
    ];
    for (const src of bombs) {
      const began = Date.now();
      expect(() => t.render(src, {}), src).toThrow(TemplateError);
      expect(Date.now() - began, src).toBeLessThan(2000);
    }
  });

  it('regexes cannot backtrack catastrophically', () => {
    const started = Date.now();
    const evil = "{{ ('a' * 40 ~ '!') | regex_match('(a+)+$') }}";
    if (LINEAR_REGEX) expect(t.render(evil, {})).toBe('False');
    else expect(() => t.render(evil, {})).toThrow(/backtrack/);
    expect(() => t.render("{{ 'aaaa' | regex_search('(a|aa)*b') }}", {})).not.toThrow(/took too long/);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(t.render("{{ 'Temp: 21.5C' | regex_findall_index('[\\d.]+') }}", {})).toBe('21.5');
    expect(t.render("{{ 'abc' | regex_replace('(b)', '[\\\\1]') }}", {})).toBe('a[b]c');
    expect(t.render("{{ 'x=1 y=2' | regex_findall('(\\w)=(\\d)') }}", {})).toBe(
      "[('x', '1'), ('y', '2')]".replace(/\(/g, '[').replace(/\)/g, ']'),
    );
    expect(t.render("{{ 'Kitchen' is match('kit', true) }}|{{ 'Kitchen' is search('chen') }}", {})).toBe('True|True');
  });

  it('without the linear engine, patterns that can backtrack without bound are recognised', () => {
    for (const p of ['(a+)+$', '(a|aa)*b', '(\\w+\\s?)*$', '(.*a){5}', '(a)\\1', '(?<x>a)\\k<x>'])
      expect(mayBacktrack(p), p).toBe(true);
    for (const p of ['^\\d+\\.\\d+$', '[a-z]+\\d*', '(ab)+', '(on|off)', '(\\d{1,3})\\.(\\d{1,3})', '[(+]+'])
      expect(mayBacktrack(p), p).toBe(false);
  });

  it('parses Jinja the way Jinja does, refusing what the sandbox has no use for', () => {
    expect(() => t.render('{% if %}', {})).toThrow(TemplateError);
    expect(() => t.validate("{% include 'x' %}")).toThrow(/not supported/);
    expect(() => t.validate("{% extends 'x' %}")).toThrow(/not supported/);
    expect(() => t.validate("{% import 'x' as y %}")).toThrow(/not supported/);
    expect(() => t.validate('{% break %}')).toThrow(/outside a for loop/);
    expect(() => t.validate('{{ r/x/ }}')).toThrow(TemplateError);
    expect(t.render('{% set d = {"a": {"b": 1}} %}{{ d.a.b }}', {})).toBe('1');
    expect(t.render('{{ {"a": {"b": 1}} }}', {})).toBe("{'a': {'b': 1}}");
  });

  describe('Home Assistant state functions and renderWithInfo', () => {
    const states = new MemoryStates(() => Date.UTC(2026, 0, 5, 12));
    states.set('light.kitchen', 'on', { brightness: 200, friendly_name: 'Kitchen light' });
    states.set('light.hall', 'off', {});
    states.set('sensor.temp', '21.46', { unit_of_measurement: '°C' });
    states.set('group.downstairs', 'on', { entity_id: ['light.kitchen', 'light.hall'] });
    const e = new TemplateEngine({}, { states, clock: { now: () => Date.UTC(2026, 0, 5, 12) } });

    it('states(), is_state, state_attr, states.domain.object_id, iteration, expand', () => {
      expect(
        e.render("{{ states('sensor.temp') }}|{{ states('sensor.nope') }}|{{ states('sensor.temp', with_unit=true) }}"),
      ).toBe('21.46|unknown|21.46 °C');
      expect(
        e.render(
          "{{ is_state('light.kitchen', 'on') }}|{{ is_state('light.kitchen', ['off', 'on']) }}|{{ state_attr('light.kitchen', 'brightness') }}|{{ is_state_attr('light.kitchen', 'brightness', 200) }}",
        ),
      ).toBe('True|True|200|True');
      expect(
        e.render(
          '{{ states.light.kitchen.state }}|{{ states.light.kitchen.name }}|{{ states.light.kitchen.attributes.brightness }}|{{ states.light.kitchen.last_changed }}',
        ),
      ).toBe('on|Kitchen light|200|2026-01-05 12:00:00+00:00');
      expect(e.render("{{ states.light | selectattr('state', 'eq', 'on') | map(attribute='entity_id') | list }}")).toBe(
        "['light.kitchen']",
      );
      expect(
        e.render(
          '{{ states.light | count }}|{{ states | count }}|{{ has_value("light.hall") }}|{{ has_value("light.x") }}',
        ),
      ).toBe('2|4|True|False');
      expect(e.render("{{ expand('group.downstairs') | map(attribute='entity_id') | join(',') }}")).toBe(
        'light.hall,light.kitchen',
      );
      expect(e.render('{% for s in states.light %}{{ s.object_id }}={{ s.state }};{% endfor %}')).toBe(
        'hall=off;kitchen=on;',
      );
    });

    it('reports what a render read', () => {
      expect(e.renderWithInfo("{{ states('sensor.temp') | float + 1 }}")).toEqual({
        result: '22.46',
        entities: ['sensor.temp'],
        domains: [],
        allStates: false,
      });
      expect(e.renderWithInfo("{{ is_state('light.kitchen', 'on') and states.sensor.temp.state }}")).toEqual({
        result: '21.46',
        entities: ['light.kitchen', 'sensor.temp'],
        domains: [],
        allStates: false,
      });
      expect(e.renderWithInfo('{{ states.light | list | count }}')).toEqual({
        result: '2',
        entities: [],
        domains: ['light'],
        allStates: false,
      });
      expect(e.renderWithInfo('{{ states | count }}')).toMatchObject({ result: '4', allStates: true });
      expect(e.renderWithInfo('{{ 1 + 1 }}')).toEqual({ result: '2', entities: [], domains: [], allStates: false });
      // only what this render read: a branch not taken reads nothing
      expect(e.renderWithInfo("{{ states('light.hall') if false else 'x' }}").entities).toEqual([]);
    });
  });
});
