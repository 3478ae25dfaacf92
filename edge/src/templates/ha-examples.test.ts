import { describe, expect, it } from 'vitest';
import { MemoryStates } from '../automation/memory-ports.ts';
import { TemplateEngine } from './template.ts';

/**
 * Home Assistant's documented template examples (home-assistant.io: docs/configuration/templating,
 * the template helpers of homeassistant/helpers/template.py and their tests), with the outputs
 * Home Assistant gives. States and the clock are fixed: 2026-01-05 12:34:56 UTC, a Monday.
 */

const NOW = Date.UTC(2026, 0, 5, 12, 34, 56);
let clock = NOW - 300_000; // states last changed five minutes before "now"
const states = new MemoryStates(() => clock);
states.set('sensor.temperature', '23.456', {
  unit_of_measurement: '°C',
  friendly_name: 'Temperature',
  display_precision: 1,
});
states.set('sensor.humidity', '45', {});
states.set('device_tracker.paulus', 'home', { battery: 40, friendly_name: 'Paulus' });
states.set('light.kitchen', 'on', { brightness: 200, friendly_name: 'Kitchen' });
states.set('light.bedroom', 'off', { friendly_name: 'Bedroom' });
states.set('light.porch', 'on', { friendly_name: 'Porch' });
states.set('group.all_lights', 'on', { entity_id: ['light.kitchen', 'light.bedroom', 'light.porch'] });
clock = NOW;
const engine = new TemplateEngine({}, { states, clock: { now: () => NOW } });

const ROWS: [string, string, Record<string, unknown>?][] = [
  // states
  ["{{ states('sensor.temperature') }}", '23.456'],
  ['{{ states.sensor.temperature.state }}', '23.456'],
  ["{{ states('sensor.temperature', with_unit=True) }}", '23.456 °C'],
  ["{{ states('sensor.temperature', rounded=True) }}", '23.5'],
  ["{{ states('sensor.missing') }}", 'unknown'],
  ['{{ states.sensor.missing }}', 'None'],
  ['{{ states.sensor.missing.state }}', ''],
  ["{{ is_state('device_tracker.paulus', 'home') }}", 'True'],
  ["{{ is_state('sensor.missing', 'unknown') }}", 'False'],
  ["{{ state_attr('device_tracker.paulus', 'battery') }}", '40'],
  ["{{ is_state_attr('device_tracker.paulus', 'battery', 40) }}", 'True'],
  ["{{ state_attr('device_tracker.paulus', 'nope') }}", 'None'],
  [
    "{% if is_state('device_tracker.paulus', 'home') %}Ha, Paulus is home!{% else %}Paulus is at {{ states('device_tracker.paulus') }}.{% endif %}",
    'Ha, Paulus is home!',
  ],
  ["{{ has_value('sensor.temperature') }} {{ has_value('sensor.missing') }}", 'True False'],
  ['{{ states.sensor | count }} {{ states | count }}', '2 7'],
  [
    '{% for state in states.sensor %}{{ state.entity_id }}={{ state.state }}, {% endfor %}',
    'sensor.humidity=45, sensor.temperature=23.456,',
  ],
  ["{{ states.light | selectattr('state', 'eq', 'on') | map(attribute='name') | list }}", "['Kitchen', 'Porch']"],
  [
    "{{ expand('group.all_lights') | selectattr('state', 'eq', 'on') | map(attribute='entity_id') | join(', ') }}",
    'light.kitchen, light.porch',
  ],
  [
    "{{ states.light.kitchen.attributes.get('brightness', 0) }} {{ states.light.bedroom.attributes.get('brightness', 0) }}",
    '200 0',
  ],
  [
    '{{ states.light.kitchen.name }} {{ states.light.kitchen.domain }} {{ states.light.kitchen.object_id }}',
    'Kitchen light kitchen',
  ],
  [
    "{% set ns = namespace(found=false) %}{% for s in states.light %}{% if s.state == 'on' %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}",
    'True',
  ],
  ["{{ states.light | map(attribute='entity_id') | select('match', 'light.k') | list }}", "['light.kitchen']"],
  // numbers
  ["{{ states('sensor.temperature') | float + 1 }}", '24.456'],
  ["{{ (states('sensor.temperature') | float * 10) | round(2) }}", '234.56'],
  ["{% if states('sensor.temperature') | float > 20 %}warm{% else %}cold{% endif %}", 'warm'],
  ["{{ state_attr('light.kitchen', 'brightness') / 255 * 100 | round }}", '78.43137254901961'],
  ["{{ (state_attr('light.kitchen', 'brightness') / 255 * 100) | round }}", '78'],
  ["{{ states('sensor.humidity') | int + 1 }}", '46'],
  ["{{ 'abc' | float(0) }} {{ 'abc' | int(-1) }} {{ float('1.5') }} {{ int('7') }}", '0 -1 1.5 7'],
  [
    '{{ 3.14159 | round(2) }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.567 | round(1, "floor") }} {{ 2.521 | round(1, "ceil") }} {{ 2.3 | round(1, "half") }}',
    '3.14 2 4 2.5 2.6 2.5',
  ],
  ["{{ '0x1F' | int(base=16) }} {{ '12' | int + 1 }} {{ 10 | float }}", '31 13 10.0'],
  [
    '{{ 10 | multiply(2.5) }} {{ 100 | log(10) }} {{ 16 | sqrt }} {{ pi | round(2) }} {{ (90 * pi / 180) | sin }} {{ 0 | cos }}',
    '25.0 2.0 4.0 3.14 1.0 1.0',
  ],
  [
    '{{ [1, 2, 3] | average }} {{ average(1, 2, 3) }} {{ [1, 3, 2] | median }} {{ max(1, 5, 3) }} {{ min([4, 2]) }}',
    '2.0 2.0 2 5 2',
  ],
  ["{{ '1.5' | is_number }} {{ 'x' | is_number }} {{ is_number(3) }}", 'True False True'],
  ['{{ 8 | bitwise_and(4) }} {{ 8 | bitwise_or(4) }} {{ 5 | bitwise_xor(1) }}', '0 12 4'],
  ["{{ 'on' | bool }} {{ 'off' | bool }} {{ 'foo' | bool(false) }} {{ bool(1) }}", 'True False False True'],
  [
    "{{ '%.1f' | format(21.456) }} {{ '%02d:%02d' | format(5, 7) }} {{ '{:,}'.format(1234567) }} {{ '{:.2f}'.format(2 / 3) }}",
    '21.5 05:07 1,234,567 0.67',
  ],
  ['{{ 10 / 4 }} {{ 10 // 4 }} {{ 10 % 4 }} {{ 2 ** 8 }}', '2.5 2 2 256'],
  // conditionals
  [
    "{{ iif(is_state('light.kitchen', 'on'), 'yes', 'no') }} {{ is_state('light.bedroom', 'on') | iif('yes', 'no') }} {{ none | iif('y', 'n', 'none') }} {{ iif(0) }}",
    'yes no none False',
  ],
  ["{{ 'on' if is_state('light.kitchen', 'on') else 'off' }}", 'on'],
  // time
  ['{{ utcnow() }}', '2026-01-05 12:34:56+00:00'],
  ["{{ utcnow().strftime('%A %d %B %Y %H:%M') }}", 'Monday 05 January 2026 12:34'],
  ['{{ utcnow().isoformat() }} {{ utcnow().weekday() }} {{ utcnow().isoweekday() }}', '2026-01-05T12:34:56+00:00 0 1'],
  ['{{ as_timestamp(utcnow()) }} {{ utcnow().timestamp() | int }}', '1767616496.0 1767616496'],
  ["{{ as_timestamp('2024-01-01 00:00:00+00:00') }}", '1704067200.0'],
  [
    "{{ 1704067200 | timestamp_utc }} {{ 1704067200 | timestamp_custom('%Y-%m-%d %H:%M', false) }} {{ 90 | timestamp_custom('%M:%S', false) }}",
    '2024-01-01T00:00:00+00:00 2024-01-01 00:00 01:30',
  ],
  ["{{ as_datetime('2024-01-01T10:00:00+00:00') + timedelta(hours=2) }}", '2024-01-01 12:00:00+00:00'],
  [
    "{{ (as_datetime('2024-01-02T00:00:00+00:00') - as_datetime('2024-01-01T12:00:00+00:00')).total_seconds() }}",
    '43200.0',
  ],
  [
    "{{ (1704067200 | as_datetime).year }} {{ as_datetime('2024-01-01T00:00:00+00:00') < utcnow() }} {{ as_datetime('x', 'bad') }}",
    '2024 True bad',
  ],
  [
    '{{ timedelta(days=1, hours=2) }} {{ timedelta(minutes=90) }} {{ timedelta(seconds=1.5) }} {{ -timedelta(hours=1) if false else timedelta(hours=-1) }}',
    '1 day, 2:00:00 1:30:00 0:00:01.500000 -1 day, 23:00:00',
  ],
  ['{{ utcnow() - timedelta(minutes=5) }}', '2026-01-05 12:29:56+00:00'],
  [
    '{{ relative_time(utcnow() - timedelta(hours=2)) }} {{ relative_time(states.sensor.temperature.last_changed) }}',
    '2 hours 5 minutes',
  ],
  ['{{ (as_timestamp(utcnow()) - as_timestamp(states.sensor.temperature.last_changed)) | int }}', '300'],
  ['{{ states.sensor.temperature.last_changed.isoformat() }}', '2026-01-05T12:29:56+00:00'],
  ['{{ utcnow() - states.sensor.temperature.last_changed > timedelta(minutes=1) }}', 'True'],
  ["{{ strptime('2024-03-01 10:20', '%Y-%m-%d %H:%M') }} {{ strptime('nope', '%Y', 0) }}", '2024-03-01 10:20:00 0'],
  ["{{ today_at('00:00') <= now() }} {{ now() > now() - timedelta(seconds=1) }}", 'True True'],
  ['{{ utcnow().replace(hour=0, minute=0, second=0) }} {{ utcnow().date() }}', '2026-01-05 00:00:00+00:00 2026-01-05'],
  // text, JSON, regex
  [
    "{{ 'Hello World' | regex_replace('World', 'HA') }} {{ 'abc123' | regex_match('^[a-z]+\\d+$') }} {{ 'temp 21.5C' | regex_findall_index('\\d+\\.\\d+') }}",
    'Hello HA True 21.5',
  ],
  ["{{ 'ABC' | regex_search('b', ignorecase=True) }} {{ 'a1b2' | regex_findall('\\d') }}", "True ['1', '2']"],
  [
    "{{ {'a': 1, 'b': [1, 2]} | to_json }} {{ ('{\"x\": [1, 2]}' | from_json).x[1] }} {{ '{\"a\": 1}' | from_json }}",
    '{"a":1,"b":[1,2]} 2 {\'a\': 1}',
  ],
  ["{{ {'b': 1, 'a': 2} | to_json(sort_keys=True) }}", '{"a":2,"b":1}'],
  [
    "{{ 'Living Room' | slugify }} {{ 'dGVzdA==' | base64_decode }} {{ 'test' | base64_encode }}",
    'living_room test dGVzdA==',
  ],
  ['{{ 1 | ordinal }} {{ 22 | ordinal }} {{ 13 | ordinal }} {{ 103 | ordinal }}', '1st 22nd 13th 103rd'],
  [
    "{{ [1, [2, [3]]] | flatten }} {{ ['a', 'b'] | contains('a') }} {{ ['a', 'b'] | join(', ') | upper }}",
    '[1, 2, 3] True A, B',
  ],
  [
    "{{ zip(['a', 'b'], [1, 2]) | list }} {{ dict(a=1, b=2) }} {{ range(3) | list }}",
    "[('a', 1), ('b', 2)] {'a': 1, 'b': 2} [0, 1, 2]",
  ],
  ['{{ value_json.temperature | round(1) }}', '21.5', { value_json: { temperature: 21.456 } }],
  ["{{ value_json.HSBColor.split(',')[0:2] | join(',') }}", '120,80', { value_json: { HSBColor: '120,80,40' } }],
  [
    "{% set values = {None:None,'idle':'idle','heat':'heating'} %}{{ values[value_json.running_state] }}",
    'heating',
    { value_json: { running_state: 'heat' } },
  ],
  ["{{ {'off': 0, 'low': 1}[value_json.fan_mode] | default('None') }}", 'None', { value_json: { fan_mode: 'turbo' } }],
  [
    "{{ 'unavailable' in [states('sensor.x'), 'unavailable'] }} {{ states('sensor.humidity') in ['45', '46'] }}",
    'True True',
  ],
];

describe("Home Assistant's documented template examples", () => {
  it('has at least 60 examples', () => expect(ROWS.length).toBeGreaterThanOrEqual(60));
  ROWS.forEach(([src, want, vars]) => {
    it(src.slice(0, 100), () => {
      expect(engine.render(src, vars ?? {})).toBe(want);
    });
  });
});
