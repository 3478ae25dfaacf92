import { pathToFileURL } from 'node:url';
import { harness } from '@smarthome/edge/testing/automation';
import { formatTable } from '../lib/table.ts';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * State change → action latency through the automation engine: 1,000 state changes per
 * second spread over 100 entities, each watched by its own automation (state trigger,
 * a template condition, a service call with templated data), plus 100 automations on
 * other entities that never match. Latency = from `states.set` (which emits state_changed)
 * to the ServicePort call. In-memory state/service ports; traces go to SQLite as in production.
 */

const ENTITIES = 100;
const RATE = 1000;
const TARGET_P99_MS = 5;

function pct(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function run(options: BenchOptions): Promise<BenchResult> {
  const seconds = options.quick ? 2 : 10;
  const h = await harness();
  try {
    for (let i = 0; i < ENTITIES; i++) {
      h.states.set(`sensor.s${i}`, '0');
      await h.create({
        alias: `bench ${i}`,
        mode: 'parallel',
        max: 100,
        trigger: { platform: 'state', entity_id: `sensor.s${i}` },
        condition: [{ condition: 'template', value_template: '{{ trigger.to_state.state != "x" }}' }],
        action: [
          {
            service: 'light.turn_on',
            target: { entity_id: `light.l${i}` },
            data: { brightness: '{{ trigger.to_state.state | int }}' },
          },
        ],
      });
      await h.create({
        alias: `idle ${i}`,
        trigger: { platform: 'state', entity_id: `sensor.other${i}`, to: 'on' },
        action: [{ service: 'light.turn_off' }],
      });
    }
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    h.services.onCall = (call) => {
      const key = `${call.data.entity_id}:${call.data.brightness}`;
      const t0 = sentAt.get(key);
      if (t0 !== undefined) {
        latencies.push(performance.now() - t0);
        sentAt.delete(key);
      }
    };
    const total = RATE * seconds;
    let sent = 0;
    const start = performance.now();
    await new Promise<void>((resolve) => {
      const tick = () => {
        const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * RATE));
        while (sent < due) {
          const i = sent % ENTITIES;
          const value = sent + 1;
          sentAt.set(`light.l${i}:${value}`, performance.now());
          h.states.set(`sensor.s${i}`, String(value));
          sent++;
        }
        if (sent >= total) resolve();
        else setTimeout(tick, 1);
      };
      tick();
    });
    const elapsed = (performance.now() - start) / 1000;
    const until = Date.now() + 5000;
    while (latencies.length < total && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    latencies.sort((a, b) => a - b);
    const p50 = pct(latencies, 50);
    const p99 = pct(latencies, 99);
    const ok = latencies.length === total && p99 < TARGET_P99_MS;
    options.log(`${latencies.length}/${total} actions observed`);
    return {
      columns: ['state changes', 'rate (/s)', 'actions', 'p50 (ms)', 'p90 (ms)', 'p99 (ms)', 'max (ms)'],
      rows: [
        [
          total,
          Math.round(total / elapsed),
          latencies.length,
          p50.toFixed(3),
          pct(latencies, 90).toFixed(3),
          p99.toFixed(3),
          latencies[latencies.length - 1].toFixed(3),
        ],
      ],
      summary: `p99 ${p99.toFixed(3)} ms at ${Math.round(total / elapsed)} state changes/s (target p99 < ${TARGET_P99_MS} ms): ${ok ? 'met' : 'MISSED'}`,
      ok,
    };
  } finally {
    await h.close();
  }
}

export const scenario: BenchScenario = {
  name: 'automation-latency',
  description: 'state change → automation action latency at 1,000 state changes/s',
  run,
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const quick = process.argv.includes('--quick');
  const result = await run({ quick, log: (m) => process.stderr.write(`  ${m}\n`) });
  console.log(formatTable(result.columns, result.rows));
  console.log(`\n${result.summary}`);
  process.exit(result.ok === false ? 1 : 0);
}
