import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { formatTable } from './lib/table.ts';
import type { BenchScenario } from './lib/types.ts';

/**
 * `pnpm bench [name …] [--quick]`: runs the scenarios in tools/bench/scenarios/ (each file
 * exports `scenario`), all of them when none is named, and prints one table per scenario.
 * Benchmarks are not tests: exit code 1 only when a scenario misses its stated target.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const dir = path.join(here, 'scenarios');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { quick: { type: 'boolean' }, list: { type: 'boolean' } },
});

async function load(): Promise<BenchScenario[]> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .sort();
  const out: BenchScenario[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(path.join(dir, f)).href)) as { scenario?: BenchScenario };
    if (mod.scenario) out.push(mod.scenario);
  }
  return out;
}

const all = await load();
if (values.list) {
  for (const s of all) console.log(`${s.name.padEnd(20)} ${s.description}`);
  process.exit(0);
}
const unknown = positionals.filter((p) => !all.some((s) => s.name === p));
if (unknown.length) {
  console.error(`error: unknown scenario ${unknown.join(', ')} (have: ${all.map((s) => s.name).join(', ')})`);
  process.exit(2);
}
const chosen = positionals.length ? all.filter((s) => positionals.includes(s.name)) : all;
let failed = false;
for (const s of chosen) {
  console.log(`\n## ${s.name}: ${s.description}\n`);
  const result = await s.run({ quick: values.quick ?? false, log: (m) => process.stderr.write(`  ${m}\n`) });
  console.log(formatTable(result.columns, result.rows));
  if (result.summary) console.log(`\n${result.summary}`);
  if (result.ok === false) failed = true;
}
process.exit(failed ? 1 : 0);
