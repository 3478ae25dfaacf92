import { pathToFileURL } from 'node:url';
import { TemplateEngine } from '@smarthome/edge';
import { formatTable } from '../lib/table.ts';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * Jinja template renders per second on the edge's engine, for typical MQTT discovery
 * value templates (zigbee2mqtt, Tasmota) and an automation-style state template; the parse
 * is cached per source, as in discovery. First render (parse + render) timed separately.
 * The previous engine (liquidjs with regex rewrites) could not parse most of these, so
 * there is no old-vs-new column.
 */

const CASES: [string, string, string][] = [
  ['value_json.x', '{{ value_json.temperature }}', '{"temperature": 21.5, "humidity": 40}'],
  ['float | round(1)', '{{ value_json.temperature | float | round(1) }}', '{"temperature": "21.456"}'],
  [
    'z2m action map',
    "{% set values = {None:None,'idle':'idle','heat':'heating','cool':'cooling'} %}{{ values[value_json.running_state] }}",
    '{"running_state": "heat"}',
  ],
  ['fan mode map', "{{ {'off':0,'low':1,'high':2}[value_json.fan_mode] | default('None') }}", '{"fan_mode": "low"}'],
  ['Tasmota HSBColor', "{{ value_json.HSBColor.split(',')[0:2] | join(',') }}", '{"HSBColor": "120,80,40"}'],
  ['if/else', "{{ 'ON' if value_json.state == 'on' else 'OFF' }}", '{"state": "on"}'],
];
const TARGET_PER_S = 20_000;

async function run(options: BenchOptions): Promise<BenchResult> {
  const ms = options.quick ? 200 : 1000;
  const engine = new TemplateEngine({ renderMs: 1000 });
  const rows: (string | number)[][] = [];
  let slowest = Infinity;
  // warm the JIT on every case first, so the first row is not the one paying for it
  for (let i = 0; i < 3000; i++) for (const [, src, payload] of CASES) engine.renderValue(src, payload);
  for (const [name, src, payload] of CASES) {
    const fresh = new TemplateEngine();
    const t0 = process.hrtime.bigint();
    fresh.renderValue(src, payload);
    const firstUs = Number(process.hrtime.bigint() - t0) / 1000;
    engine.renderValue(src, payload);
    let n = 0;
    const until = Date.now() + ms;
    while (Date.now() < until) {
      for (let i = 0; i < 100; i++) engine.renderValue(src, payload);
      n += 100;
    }
    const perS = Math.round(n / (ms / 1000));
    slowest = Math.min(slowest, perS);
    options.log(`${name}: ${perS}/s`);
    rows.push([name, perS.toLocaleString('en-US'), `${firstUs.toFixed(0)} µs`, engine.renderValue(src, payload)]);
  }
  return {
    columns: ['template', 'renders/s (cached parse)', 'first render (parse)', 'result'],
    rows,
    summary: `slowest: ${slowest.toLocaleString('en-US')} renders/s (target ≥ ${TARGET_PER_S.toLocaleString('en-US')})`,
    ok: slowest >= TARGET_PER_S,
  };
}

export const scenario: BenchScenario = {
  name: 'templates',
  description: 'Jinja renders/s of typical discovery value templates',
  run,
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quick = process.argv.includes('--quick');
  const result = await run({ quick, log: (m) => process.stderr.write(`  ${m}\n`) });
  console.log(formatTable(result.columns, result.rows));
  console.log(`\n${result.summary}`);
  process.exit(result.ok === false ? 1 : 0);
}
