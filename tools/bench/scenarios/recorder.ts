import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createEdge } from '@smarthome/edge/edge';
import { silentLogger } from '@smarthome/edge/log';
import { compressedHistoryJson } from '@smarthome/edge/recorder/ha-shapes';
import type { History } from '@smarthome/edge/recorder/queries';
import { entityId, floorSocket, haSocket, seed } from '../lib/recorder-data.ts';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';
import { edgeTarget, edgeTargetWithWriter, median, rotate, summarize, type Round, type Target } from './mqtt-ingest.ts';

/**
 * The recorder's cost and speed.
 * Ingest: the mqtt-ingest load (QoS 1, every message a new value and a new attribute set)
 * against three edges, recorder off (--history-days 0), on (its writer thread) and on
 * with main-thread writes (RECORDER_WRITER=inline, the baseline); and the typical sensor, whose
 * attributes do not change with its value, off and on; rounds rotating so that all see the same
 * machine load; the cost is taken per round.
 * Queries: a day of 1,000 entities, one change every 5 min each (half power sensors with a
 * unit, half motion sensors; an attribute update every 6 h, so each entity has 4 attribute
 * sets), plus a service call a minute, seeded straight into SQLite; then a real edge on that
 * data dir answers over loopback: the HA WebSocket (history/history_during_period,
 * logbook/get_events) and REST (/api/history/period, /api/logbook), each timed from the
 * request to the last byte of the answer.
 * BENCH_RECORDER_PART=ingest or =queries runs one half. BENCH_RECORDER_BASE=<checkout> adds that
 * checkout's edges, recorder off and on (new sets, and attributes that repeat), to the ingest
 * rounds: a before/after in the same run, its cost taken against its own off edges (its code is a
 * second copy of the modules, compiled on its own).
 */

const MAX_INGEST_COST = 0.15;
const MAX_QUERY_MS = 1000;

function timed(fn: () => Promise<number>): Promise<{ ms: number; value: number }> {
  const started = performance.now();
  return fn().then((value) => ({ ms: performance.now() - started, value }));
}

/**
 * Five edges: recorder off, on with its writer thread (from the start: the default writer starts it
 * once rows come fast for three seconds in a row, which the warm-up does not), and on writing on the main thread (what it did
 * before the thread: the same-run baseline); then off and on for sensors whose attributes repeat.
 * Each round drives all five, in a rotating order, so they see the same machine load.
 */
async function ingest(quick: boolean, log: (m: string) => void) {
  const messages = quick ? 20_000 : 100_000;
  const rounds = quick ? 6 : 9;
  const targets: Target[] = [];
  try {
    targets.push(await edgeTarget(log, { historyDays: 0 }, 'off'));
    targets.push(await edgeTargetWithWriter('thread', log, {}, 'on'));
    targets.push(await edgeTargetWithWriter('inline', log, {}, 'on, main-thread writes'));
    // the typical sensor: attributes (unit, name) that do not change with the value (no JSON
    // attributes topic), so a set is stored once per entity and every later row finds it; with its
    // own recorder-off baseline, as the edge does less per message without JSON attributes
    const same = { json_attr_t: undefined };
    targets.push(await edgeTarget(log, { historyDays: 0 }, 'off, attributes repeat', same));
    targets.push(await edgeTargetWithWriter('thread', log, {}, 'on, attributes repeat', same));
    const base = process.env.BENCH_RECORDER_BASE;
    if (base) {
      const other = (await import(path.resolve(base, 'tools/bench/scenarios/mqtt-ingest.ts'))) as {
        edgeTarget: typeof edgeTarget;
        edgeTargetWithWriter?: typeof edgeTargetWithWriter;
      };
      // the writer thread from the start where the other checkout can say so (its default may start it later)
      const on: typeof edgeTarget = other.edgeTargetWithWriter
        ? (...args) => other.edgeTargetWithWriter!('thread', ...args)
        : other.edgeTarget;
      targets.push(await other.edgeTarget(log, { historyDays: 0 }, `off, edge of ${base}`));
      targets.push(await on(log, {}, `on, edge of ${base}`));
      targets.push(await other.edgeTarget(log, { historyDays: 0 }, `off, attributes repeat, edge of ${base}`, same));
      targets.push(await on(log, {}, `on, attributes repeat, edge of ${base}`, same));
    }
    const [off, on, inline, offRepeat, repeat, baseOff, baseOn, baseOffRepeat, baseRepeat] = await rotate(
      targets,
      messages,
      rounds,
      log,
    );
    // per round: the rate lost, and the CPU added per message (main thread; whole process, the writer thread included)
    const costs = (with_: Round[], base = off) => ({
      rate: base.map((o, i) => 1 - with_[i].rate / o.rate),
      main: base.map((o, i) => 1 - o.mainUs / with_[i].mainUs),
      process: base.map((o, i) => 1 - o.processUs / with_[i].processUs),
    });
    return {
      messages,
      rounds,
      off,
      on,
      inline,
      offRepeat,
      repeat,
      onCosts: costs(on),
      inlineCosts: costs(inline),
      repeatCosts: costs(repeat, offRepeat),
      base: base && {
        name: base,
        off: baseOff,
        on: baseOn,
        offRepeat: baseOffRepeat,
        repeat: baseRepeat,
        onCosts: costs(baseOn, baseOff),
        repeatCosts: costs(baseRepeat, baseOffRepeat),
      },
    };
  } finally {
    for (const t of targets) await t.stop();
  }
}

/** The serialisation the writer replaced: an object per item, then JSON.stringify over all. */
function stringifyObjects(history: History): string {
  const out: Record<string, { s: string | null; a: Record<string, unknown>; lu: number; lc?: number }[]> = {};
  for (const [id, states] of history)
    out[id] = states.map((s) => {
      const item: { s: string | null; a: Record<string, unknown>; lu: number; lc?: number } = {
        s: s.state,
        a: s.attributes,
        lu: s.last_updated,
      };
      if (s.last_changed !== s.last_updated) item.lc = s.last_changed;
      return item;
    });
  return JSON.stringify(out);
}

const pct = (x: number) => `${Math.round(x * 1000) / 10}%`;

export const scenario: BenchScenario = {
  name: 'recorder',
  description:
    'recorder: MQTT ingest with recorder on vs off (alternating rounds); history and logbook over 24 h × N entities via the HA WebSocket and REST API',
  async run({ quick, log }: BenchOptions): Promise<BenchResult> {
    const part = process.env.BENCH_RECORDER_PART;
    const rows: (string | number)[][] = [];
    // each half reports and is judged only when it ran (no empty rows, no target on what was skipped)
    const load = part === 'queries' ? null : await ingest(quick, log);
    const off = load && summarize(load.off);
    const cost = load && off ? 1 - summarize(load.on).rate / off.rate : 0;
    if (load && off) {
      const scope = `${load.messages.toLocaleString('en-US')} msgs × ${load.rounds}`;
      const range = (costs: number[]) => `${pct(Math.min(...costs))} … ${pct(Math.max(...costs))}`;
      const cpu = (s: ReturnType<typeof summarize>) =>
        `CPU µs/msg: main thread ${s.mainUs.toFixed(1)}, process ${s.processUs.toFixed(1)}`;
      // the rate lost (the target), and the CPU the recorder adds per message: on the main thread
      // (what limits ingest when the cores are free) and in the whole process (the writer thread
      // included), each as the share of the rate it would cost were that the limit
      const costOf = (rounds: Round[], costs: { rate: number[]; main: number[]; process: number[] }, base = off) => {
        const s = summarize(rounds);
        return (
          `cost ${pct(1 - s.rate / base.rate)} (per round ${range(costs.rate)}); ${cpu(s)}; by CPU: main thread ` +
          `${pct(1 - base.mainUs / s.mainUs)} (per round ${range(costs.main)}), process ${pct(1 - base.processUs / s.processUs)}` +
          ` (per round ${range(costs.process)}; +${(s.processUs - base.processUs).toFixed(1)} µs/msg)`
        );
      };
      const offRepeat = summarize(load.offRepeat);
      rows.push(
        ['ingest, recorder off', scope, Math.round(off.rate), '', cpu(off)],
        [
          'ingest, recorder on (writer thread)',
          scope,
          Math.round(summarize(load.on).rate),
          '',
          costOf(load.on, load.onCosts),
        ],
        ['ingest, recorder off, attributes repeat', scope, Math.round(offRepeat.rate), '', cpu(offRepeat)],
        [
          'ingest, recorder on, attributes repeat (typical sensor)',
          scope,
          Math.round(summarize(load.repeat).rate),
          '',
          costOf(load.repeat, load.repeatCosts, offRepeat),
        ],
        [
          'ingest, recorder on, main-thread writes (before)',
          scope,
          Math.round(summarize(load.inline).rate),
          '',
          costOf(load.inline, load.inlineCosts),
        ],
      );
      if (load.base) {
        const b = load.base;
        const baseOff = summarize(b.off);
        const baseOffRepeat = summarize(b.offRepeat);
        rows.push(
          [`ingest, recorder off, edge of ${b.name}`, scope, Math.round(baseOff.rate), '', cpu(baseOff)],
          [
            `ingest, recorder on, edge of ${b.name}`,
            scope,
            Math.round(summarize(b.on).rate),
            '',
            costOf(b.on, b.onCosts, baseOff),
          ],
          [
            `ingest, recorder off, attributes repeat, edge of ${b.name}`,
            scope,
            Math.round(baseOffRepeat.rate),
            '',
            cpu(baseOffRepeat),
          ],
          [
            `ingest, recorder on, attributes repeat, edge of ${b.name}`,
            scope,
            Math.round(summarize(b.repeat).rate),
            '',
            costOf(b.repeat, b.repeatCosts, baseOffRepeat),
          ],
        );
      }
    }

    const entities = part === 'ingest' ? 0 : quick ? 200 : 1000;
    const start = Math.floor(Date.now() / 1000) - 86_400;
    const dir = mkdtempSync(path.join(tmpdir(), 'bench-recorder-'));
    let worstQueryMs = 0;
    if (entities)
      try {
        const seedStarted = performance.now();
        const seeded = seed(dir, entities, start);
        log(`seeded ${seeded.toLocaleString('en-US')} state rows in ${Math.round(performance.now() - seedStarted)} ms`);
        const edge = createEdge({ port: 0, mqttPort: 0, dataDir: dir, host: '127.0.0.1', logger: silentLogger });
        await edge.start();
        try {
          const token = edge.tokens.create('bench').token;
          const base = `http://127.0.0.1:${edge.ports.http}`;
          const ws = await haSocket(`ws://127.0.0.1:${edge.ports.http}/api/websocket`, token);
          const all = Array.from({ length: entities }, (_, i) => entityId(i + 1));
          const startIso = new Date(start * 1000).toISOString();
          // each answers the text and what to count in it (counted after the clock stops)
          type Answer = { text: string; key: RegExp };
          const wsCount = async (msg: Record<string, unknown>, key: RegExp): Promise<Answer> => {
            const text = await ws.request(msg);
            if (!text.startsWith('{"id":') || !text.includes('"success":true'))
              throw new Error(`${String(msg.type)}: ${text.slice(0, 200)}`);
            return { text, key };
          };
          const rest = async (p: string, key: RegExp): Promise<Answer> => {
            const res = await fetch(base + p, { headers: { authorization: `Bearer ${token}` } });
            const text = await res.text();
            if (res.status !== 200) throw new Error(`${p.slice(0, 60)}: ${res.status} ${text.slice(0, 200)}`);
            return { text, key };
          };
          const recorder = edge.recorder!;
          const inProcess = async (json: 'none' | 'objects' | 'writer' | 'sqlite'): Promise<Answer> => {
            if (json === 'sqlite')
              return {
                text: recorder.historyJson({ start, entity_ids: all }, { format: 'websocket' }),
                key: compressed,
              };
            const h = recorder.history({ start, entity_ids: all });
            if (json === 'none') return { text: '', key: compressed };
            return { text: json === 'writer' ? compressedHistoryJson(h) : stringifyObjects(h), key: compressed };
          };
          const history = { type: 'history/history_during_period', start_time: startIso };
          // baselines for the 36.8 MB answer, same run: what any server pays to serialise it from
          // objects, and to send it and have the client receive it as text
          const fullAnswer = await wsCount({ ...history, entity_ids: all }, /"lu":/g);
          const parsed: unknown = JSON.parse(fullAnswer.text);
          const floor = await floorSocket(() => fullAnswer.text);
          const compressed = /"lu":/g;
          const full = /"last_changed":/g;
          // Node's HTTP server takes 16 KB of request line and headers: about 800 entity ids
          const restIds = all.slice(0, Math.min(entities, 500));
          const queries: [string, string, () => Promise<Answer>][] = [
            // where the time goes: the query function alone, then with HA's shape serialised
            ['in process: Recorder.history() (SQLite + objects)', `all ${entities}`, () => inProcess('none')],
            // same-run baseline for the writer: JSON.stringify over one object per item
            ['in process: … + item objects + JSON.stringify', `all ${entities}`, () => inProcess('objects')],
            ['in process: … + compressedHistoryJson', `all ${entities}`, () => inProcess('writer')],
            // what the HA API sends: JSON written from raw rows, no objects in between
            ['in process: Recorder.historyJson()', `all ${entities}`, () => inProcess('sqlite')],
            ['WS history_during_period', `all ${entities}`, () => wsCount({ ...history, entity_ids: all }, compressed)],
            [
              'WS history … minimal_response + no_attributes',
              `all ${entities}`,
              () => wsCount({ ...history, entity_ids: all, minimal_response: true, no_attributes: true }, compressed),
            ],
            [
              'baseline: JSON.stringify of the parsed WS answer',
              `all ${entities}`,
              async () => ({ text: JSON.stringify(parsed), key: compressed }),
            ],
            [
              'baseline: the same text sent by a bare ws server',
              `all ${entities}`,
              async () => ({ text: await floor.request(), key: compressed }),
            ],
            ['WS history_during_period', 'one entity', () => wsCount({ ...history, entity_ids: [all[1]] }, compressed)],
            [
              'REST /api/history/period',
              `${restIds.length} entities`,
              () => rest(`/api/history/period/${startIso}?filter_entity_id=${restIds.join(',')}`, full),
            ],
            [
              'REST /api/history/period, minimal_response + no_attributes',
              `${restIds.length} entities`,
              () =>
                rest(
                  `/api/history/period/${startIso}?filter_entity_id=${restIds.join(',')}&minimal_response&no_attributes`,
                  /"last_changed":/g,
                ),
            ],
            [
              'REST /api/history/period',
              'one entity',
              () => rest(`/api/history/period/${startIso}?filter_entity_id=${all[1]}`, full),
            ],
            [
              'WS logbook/get_events',
              'all',
              () => wsCount({ type: 'logbook/get_events', start_time: startIso }, /"when":/g),
            ],
            ['REST /api/logbook', 'all', () => rest(`/api/logbook/${startIso}`, /"when":/g)],
            ['REST /api/logbook', 'one entity', () => rest(`/api/logbook/${startIso}?entity=${all[0]}`, /"when":/g)],
          ];
          for (const [name, scope, fn] of queries) {
            await fn(); // warm-up: statements prepared, pages cached
            let answer: Answer = { text: '', key: compressed };
            const runs: number[] = [];
            // the process's CPU time (server and client: one process): far steadier than the wall
            // clock on a loaded machine, where the wall clock also counts others' turns on the cores
            const cpu: number[] = [];
            for (let i = 0; i < 3; i++) {
              const used = process.cpuUsage();
              const r = await timed(async () => {
                answer = await fn();
                return 0;
              });
              const d = process.cpuUsage(used);
              runs.push(r.ms);
              cpu.push((d.user + d.system) / 1000);
            }
            const ms = median(runs);
            const items = (answer.text.match(answer.key) ?? []).length;
            if (name.includes('history') && !name.startsWith('in process')) worstQueryMs = Math.max(worstQueryMs, ms);
            rows.push([
              `${name} (${scope})`,
              `24 h × ${entities.toLocaleString('en-US')} entities`,
              '',
              `${Math.round(ms)} (${Math.round(Math.min(...runs))}–${Math.round(Math.max(...runs))})`,
              `${answer.text ? `${items.toLocaleString('en-US')} items, ${(answer.text.length / 1e6).toFixed(1)} MB; ` : ''}CPU ${Math.round(median(cpu))} ms`,
            ]);
            log(`${name} (${scope}): ${Math.round(ms)} ms`);
          }
          ws.close();
          await floor.close();
        } finally {
          await edge.stop();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    const summary: string[] = [];
    if (load) summary.push(`recorder costs ${pct(cost)} of ingest (target ≤ ${MAX_INGEST_COST * 100}%)`);
    if (entities)
      summary.push(
        `24 h history of ${entities} entities in ${Math.round(worstQueryMs)} ms at worst (target < ${MAX_QUERY_MS} ms)`,
      );
    return {
      columns: ['measure', 'load', 'median msg/s', 'median ms (min–max)', 'note'],
      rows,
      summary: summary.join('; '),
      // as every scenario: a missed target is ok: false, and the runner exits 1
      ok: cost <= MAX_INGEST_COST && worstQueryMs < MAX_QUERY_MS,
    };
  },
};
