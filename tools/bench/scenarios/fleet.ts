import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { createTestSchema, type TestSchema } from '@smarthome/cloud/testing/database';
import { REPO_ROOT } from '@smarthome/cloud/testing/process';
import { buildCloud } from '../../src/build-cloud/build.ts';
import { CloudProcess } from '../lib/fleet-cloud.ts';
import { api, eventLatencyMs, pct, pool, sleep, stallProbe } from '../lib/fleet-http.ts';
import { bareRun, type BareResult } from '../lib/fleet-baseline.ts';
import { SimulatedFleet, countsSince, grownSince, type FleetStats } from '../lib/fleet-processes.ts';
import { postgresCpu, postgresCpuSince } from '../lib/proc-cpu.ts';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * `pnpm bench fleet`: one cloud replica (the bundle, SQLite; FLEET_DATABASE_URL=postgres://… for
 * PostgreSQL) carrying N edges simulated by tools/bench/lib/fleet-edges.ts (the edge's real
 * TunnelClient, 100 lights each unless FLEET_ENTITIES, a state change every 10 s per edge on average,
 * FLEET_EDGES_PER_PROCESS to a process, default all in one: SimulatedFleet), one owner per
 * 10 homes with one app WebSocket subscribed to state_changed. Per N (FLEET_SIZES, default
 * 1000,5000,10000; --quick: 100): cloud RSS after the snapshots and after a forced GC (through
 * the inspector), CPU per 1,000 deltas (the replica, the PostgreSQL server, the simulated
 * edges: the cores they share), delta → app event p50/p99, service call p50/p99, the longest
 * /healthz answer and the longest event-loop delay (read inside the replica through the inspector:
 * on PostgreSQL a /healthz also waits for a pool connection and the server) during the first sync (every edge sends its snapshot: the
 * cold storm) and in the steady state, and the reconnect storm after a replica restart (edges
 * resume without a snapshot; with the simulating processes' own longest loop delay, since their
 * stalls bunch their edges' traffic), with the share of the steady state and of the storm that the
 * replica's main thread spent runnable but waiting for a core (/proc schedstat: the other
 * processes on the two cores starving it). FLEET_ENTITIES sets the entities per home (default 100).
 * FLEET_CLOUD_NODE_ARGS passes Node flags to the replica (profiling: `--cpu-prof --cpu-prof-dir=…`
 * writes one profile for the steady state and one for the storm, at each stop); FLEET_CLOUD_ENV="K=V …"
 * sets variables for the replica only (GLIBC_TUNABLES=…). FLEET_CLOUD_LOG=<file>
 * keeps the replica's log. No wait is unbounded: a wait for the fleet ends once its online and
 * synced counts have not moved for FLEET_STALLED_S (default 120), and then lists the edges not
 * synced, grouped by state and last close code, refusal or error. The same-run baseline, per N
 * before the replica's run: the steady state against a bare relay (lib/fleet-bare.ts: the same
 * edges, app sockets and window, `ws` and JSON.parse only), its CPU per 1,000 deltas, delta→event
 * p50 / p99 and longest loop delay: what this machine and harness give with no work of the
 * replica's own (FLEET_BARE=0 skips it).
 */
/** entities per home (FLEET_ENTITIES): larger snapshots weigh on the first sync */
const ENTITIES = Number(process.env.FLEET_ENTITIES ?? 100);
const DELTA_EVERY_MS = 10_000;
const TARGETS = { rssMb10k: 1024, p99EventMs: 20, stormS: 30, stallMs: 100 };
/** a wait for the fleet ends once neither its online nor its synced count moved for this long (FLEET_STALLED_S) */
const STALLED_MS = Number(process.env.FLEET_STALLED_S ?? 120) * 1000;
/**
 * simulated edges per process (FLEET_EDGES_PER_PROCESS; default: all in one). On 2 cores more
 * processes only starved each other (session 18: 4 and 10 processes made the storm slower, with
 * handshake timeouts, and each still stalled ~2.8 s).
 */
const EDGES_PER_PROCESS = Number(process.env.FLEET_EDGES_PER_PROCESS) || Infinity;

async function fleetRun(
  n: number,
  bundle: string,
  quick: boolean,
  log: (m: string) => void,
): Promise<Record<string, number>> {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-'));
  // a fresh schema per run: the tables the runs before left (a million rows per 10,000 edges) would weigh on this one
  const schema: TestSchema | null = process.env.FLEET_DATABASE_URL
    ? await createTestSchema(process.env.FLEET_DATABASE_URL)
    : null;
  const dbArgs = schema ? ['--database-url', schema.url] : [];
  const cloud = new CloudProcess(bundle, ['--data-dir', data, ...dbArgs]);
  const sockets: WebSocket[] = [];
  let fleet: SimulatedFleet | null = null;
  try {
    await cloud.start(0);
    const port = cloud.port;
    // owners: one per 10 homes
    const owners = await pool(
      Array.from({ length: Math.ceil(n / 10) }, (_, i) => i),
      8,
      async (i) => {
        const email = `owner${i}-${Date.now()}@fleet.test`;
        await api(cloud.url, 'POST', '/v1/auth/register', { email, password: 'fleet-password' });
        const login = await api(cloud.url, 'POST', '/v1/auth/token', {
          grant_type: 'password',
          email,
          password: 'fleet-password',
        });
        return login.access_token as string;
      },
    );
    const tokens = await pool(
      Array.from({ length: n }, (_, i) => i),
      16,
      async (i) =>
        (await api(cloud.url, 'POST', '/v1/edges', { name: `Home ${i}` }, owners[Math.floor(i / 10)])).token as string,
    );
    log(`${n} edges: ${owners.length} owners and their edges created`);

    fleet = new SimulatedFleet(data, {
      cloudUrl: cloud.url,
      tokens,
      entities: ENTITIES,
      perProcess: EDGES_PER_PROCESS,
    });
    const edges = fleet;
    const ask = () => edges.stats();
    // the first sync: every edge sends a snapshot at once (the cold storm: an empty mirror)
    const syncProbe = stallProbe(() => cloud.url);
    await cloud.resetLoopDelay();
    const syncStartedAt = performance.now();
    await fleet.start();
    /**
     * Polls until `what` holds; null after `ms`, or sooner once neither the online nor the synced
     * count has moved for STALLED_MS (a fleet stuck for good: #19), and then the edges still
     * not synced are reported, grouped by state and last close, refusal or error.
     */
    const until = async (what: (s: FleetStats) => boolean, ms: number, label: string) => {
      const end = Date.now() + ms;
      let seen = '';
      let movedAt = Date.now();
      for (;;) {
        const s = await ask();
        if (what(s)) return s;
        if (`${s.online}/${s.synced}` !== seen) [seen, movedAt] = [`${s.online}/${s.synced}`, Date.now()];
        const stalled = Date.now() - movedAt > STALLED_MS;
        if (Date.now() > end || stalled) {
          const groups = await edges.lagging();
          log(
            `${n} edges: ${label} not reached (${s.online} online, ${s.synced} synced; ${stalled ? `no progress for ${STALLED_MS / 1000} s` : `${ms / 1000} s passed`}); not synced:`,
          );
          for (const g of groups)
            log(`  ${g.count} × ${g.state} (edges ${g.edges.join(', ')}${g.count > g.edges.length ? ', …' : ''})`);
          return null;
        }
        await sleep(100);
      }
    };
    const connected = await until((s) => s.synced === n, 600_000, 'first sync');
    if (!connected) throw new Error(`the fleet did not sync (the edges left are listed above)`);
    const firstSyncS = (performance.now() - syncStartedAt) / 1000;
    const firstSyncStall = await syncProbe.stop();
    const firstSyncLoop = await cloud.maxLoopDelayMs();
    const rssAfterSnapshots = cloud.rssMb();
    const rssPeak = cloud.rssMb('VmHWM'); // the peak since start: its start-up and the first sync, nothing else yet
    await cloud.collectGarbage();
    const rssAfterGc = cloud.rssMb();
    log(
      `${n} edges synced; RSS ${rssAfterSnapshots.toFixed(0)} MB (peak ${rssPeak.toFixed(0)}), after GC ${rssAfterGc.toFixed(0)} MB`,
    );

    // app WebSockets, one per owner, each on state_changed
    const latencies: number[] = [];
    let measuring = false;
    await pool(owners, 32, async (token) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/websocket`);
      sockets.push(ws);
      await new Promise<void>((resolve, reject) => {
        // bounded: an app socket the replica never answers must not hold the bench for good
        const timer = setTimeout(() => reject(new Error('an app WebSocket was not subscribed within 30 s')), 30_000);
        ws.on('error', reject);
        ws.on('close', (code) => reject(new Error(`an app WebSocket closed (${code}) before it was subscribed`)));
        ws.on('message', (raw) => {
          const m = JSON.parse(raw.toString()) as any;
          if (m.type === 'auth_required') ws.send(JSON.stringify({ type: 'auth', access_token: token }));
          else if (m.type === 'auth_ok')
            ws.send(JSON.stringify({ id: 1, type: 'subscribe_events', event_type: 'state_changed' }));
          else if (m.type === 'result' && m.id === 1) {
            clearTimeout(timer);
            resolve();
          } else if (m.type === 'event' && measuring) {
            const ms = eventLatencyMs(m);
            if (ms !== null) latencies.push(ms);
          }
        });
      });
    });

    // steady state
    const probe = stallProbe(() => cloud.url);
    fleet.send({ cmd: 'deltas', everyMs: DELTA_EVERY_MS });
    await sleep(quick ? 2000 : 5000);
    measuring = true;
    probe.reset();
    await cloud.resetLoopDelay();
    // the replica's CPU, and the other two processes' that share its cores
    const cpus = () => [cloud.cpuMs(), edges.cpuMs()];
    const dbBefore = schema ? postgresCpu() : null;
    const atStart = await ask();
    const threadsBefore = cloud.threadCpu();
    const before = { cpu: cpus(), deltas: atStart.deltas };
    const steadyStarvation = cloud.starvationWindow();
    await sleep(quick ? 10_000 : 30_000);
    const steadyStarved = steadyStarvation();
    const atEnd = await ask();
    const after = { cpu: cpus(), deltas: atEnd.deltas };
    const perThousand = 1000 / (atEnd.deltas - atStart.deltas);
    const byThread = grownSince(threadsBefore, cloud.threadCpu()).map(
      ([name, ms]) => `${name} ${(ms * perThousand).toFixed(0)}`,
    );
    log(`${n} edges: the replica's CPU by thread in the steady window, ms per 1,000 deltas: ${byThread.join(', ')}`);
    // in a steady state no tunnel closes: one that does (a heartbeat missed, a replaced tunnel) says why
    log(
      `${n} edges: tunnels closed after the first sync, before the steady window: ${countsSince(connected.closes, atStart.closes)}; in it: ${countsSince(atStart.closes, atEnd.closes)}`,
    );
    const dbCpu = dbBefore ? postgresCpuSince(dbBefore) : NaN;
    measuring = false;
    const steadyStall = await probe.stop();
    const steadyLoop = await cloud.maxLoopDelayMs();
    const deltas = after.deltas - before.deltas;
    const [cpuPer1000, edgesCpuPer1000] = after.cpu.map((ms, i) => ((ms - before.cpu[i]!) / deltas) * 1000);
    const dbCpuPer1000 = (dbCpu / deltas) * 1000;

    // service calls from one owner to a light of its first home
    // a saturated replica may not even accept the connection: counted, not fatal
    const calls: number[] = [];
    let failedCalls = 0;
    for (let i = 0; i < (quick ? 50 : 200); i++) {
      const t = performance.now();
      try {
        await api(
          cloud.url,
          'POST',
          '/v1/services/light/turn_on',
          { entity_id: `light.e0_lamp_${1 + (i % ENTITIES)}` },
          owners[0],
          10_000,
        );
        calls.push(performance.now() - t);
      } catch {
        failedCalls += 1;
      }
    }

    // reconnect storm: the replica restarts on the same port; every edge reconnects with its real backoff
    fleet.send({ cmd: 'quiet' });
    for (const ws of sockets.splice(0)) ws.terminate();
    const timeoutsBefore = (await ask()).handshakeTimeouts;
    await cloud.stop();
    const stormProbe = stallProbe(() => cloud.url);
    const restartedAt = performance.now();
    fleet.send({ cmd: 'resetLoop' });
    await cloud.start(port);
    stormProbe.reset();
    await cloud.resetLoopDelay();
    const stormStarvation = cloud.starvationWindow();
    const online = await until((s) => s.online === n, 300_000, 'storm: all online');
    const onlineS = (performance.now() - restartedAt) / 1000;
    const synced = online && (await until((s) => s.synced === n, 300_000, 'storm: all synced'));
    const syncedS = (performance.now() - restartedAt) / 1000;
    const stormStall = await stormProbe.stop();
    const stormLoop = await cloud.maxLoopDelayMs();
    const stormStarved = stormStarvation();
    const final = await ask();
    const stormEdgesLoop = final.loopMaxMs;
    return {
      n,
      rssAfterSnapshots,
      rssAfterGc,
      rssPeak,
      cpuPer1000,
      dbCpuPer1000,
      edgesCpuPer1000,
      deltasPerS: deltas / (quick ? 10 : 30),
      eventP50: pct(latencies, 0.5),
      eventP99: pct(latencies, 0.99),
      events: latencies.length,
      callP50: pct(calls, 0.5),
      callP99: pct(calls, 0.99),
      failedCalls,
      firstSyncS,
      firstSyncStall,
      firstSyncLoop,
      steadyStall,
      steadyLoop,
      steadyStarved,
      stormOnlineS: online ? onlineS : NaN,
      stormSyncedS: synced ? syncedS : NaN,
      stormStall,
      stormLoop,
      stormStarved,
      stormEdgesLoop,
      handshakeTimeouts: final.handshakeTimeouts - timeoutsBefore,
    };
  } finally {
    for (const ws of sockets) ws.terminate();
    await fleet?.stop();
    if (cloud.child?.exitCode === null) await cloud.stop();
    fs.rmSync(data, { recursive: true, force: true });
    await schema?.drop();
  }
}

export const scenario: BenchScenario = {
  name: 'fleet',
  description:
    'one cloud replica carrying N simulated edges (real tunnel client, 100 entities each): memory, CPU, latency, reconnect storm',
  async run({ quick, log }: BenchOptions): Promise<BenchResult> {
    const sizes = quick ? [100] : (process.env.FLEET_SIZES ?? '1000,5000,10000').split(',').map(Number);
    const work = fs.mkdtempSync(path.join(REPO_ROOT, 'cloud', '.bundle-test-'));
    try {
      // FLEET_CLOUD_BUNDLE: a bundle built before (another commit's, for a before/after in one run)
      const bundle = process.env.FLEET_CLOUD_BUNDLE
        ? path.resolve(process.env.FLEET_CLOUD_BUNDLE)
        : (await buildCloud(path.join(work, 'smarthome-cloud.mjs'))).file;
      const rows: (string | number)[][] = [];
      let ok = true;
      for (const n of sizes) {
        let bare: BareResult | null = null;
        if (process.env.FLEET_BARE !== '0') {
          bare = await bareRun({
            n,
            entities: ENTITIES,
            perProcess: EDGES_PER_PROCESS,
            everyMs: DELTA_EVERY_MS,
            windowMs: quick ? 10_000 : 30_000,
          });
          log(
            `${n} edges, bare relay: ${bare.cpuPer1000.toFixed(0)} ms CPU / 1,000 deltas, delta→event p50 / p99 ${bare.eventP50.toFixed(1)} / ${bare.eventP99.toFixed(1)} ms, loop delay ${bare.loopMs.toFixed(0)} ms`,
          );
        }
        const r = await fleetRun(n, bundle, quick, log);
        const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'not reached');
        rows.push([
          n,
          `${f(r.rssPeak, 0)} / ${f(r.rssAfterSnapshots, 0)} / ${f(r.rssAfterGc, 0)}`,
          `${f(r.cpuPer1000, 0)} / ${Number.isNaN(r.dbCpuPer1000) ? '-' : f(r.dbCpuPer1000, 0)} / ${f(r.edgesCpuPer1000, 0)}`,
          f(r.deltasPerS, 0),
          `${f(r.eventP50)} / ${f(r.eventP99)}`,
          `${f(r.callP50)} / ${f(r.callP99)}${r.failedCalls ? ` (${r.failedCalls} failed)` : ''}`,
          `${f(r.firstSyncS)} / ${f(r.firstSyncStall, 0)} / ${f(r.firstSyncLoop, 0)}`,
          `${f(r.steadyStall, 0)} / ${f(r.steadyLoop, 0)}`,
          `${f(r.stormOnlineS)} / ${f(r.stormSyncedS)}`,
          `${f(r.stormStall, 0)} / ${f(r.stormLoop, 0)} / ${f(r.stormEdgesLoop, 0)}`,
          r.handshakeTimeouts,
          `${f(r.steadyStarved * 100, 0)} / ${f(r.stormStarved * 100, 0)}`,
          bare
            ? `${f(bare.cpuPer1000, 0)}; ${f(bare.eventP50)} / ${f(bare.eventP99)}; ${f(bare.loopMs, 0)}`
            : 'not run',
        ]);
        if (n >= 10_000 && r.rssAfterSnapshots > TARGETS.rssMb10k) ok = false;
        if (
          r.failedCalls > 0 ||
          !(r.eventP99 <= TARGETS.p99EventMs) ||
          !(r.stormSyncedS <= TARGETS.stormS) ||
          r.stormStall > TARGETS.stallMs ||
          r.stormLoop > TARGETS.stallMs ||
          r.handshakeTimeouts > 0
        )
          ok = false;
      }
      return {
        columns: [
          'edges',
          'RSS MB: peak until synced / after the first sync / after GC',
          'CPU ms / 1,000 deltas: replica / PostgreSQL / simulated edges',
          'deltas/s',
          'delta→event ms p50 / p99',
          'service call ms p50 / p99',
          'first sync: s / longest /healthz / loop delay ms',
          'longest /healthz / loop delay ms',
          'storm: online / synced s',
          "storm: longest /healthz / loop delay / simulated edges' loop delay ms",
          'handshake timeouts',
          'replica waiting for a core, % of the time: steady / storm',
          'same run, bare relay (baseline): CPU ms / 1,000 deltas; delta→event ms p50 / p99; loop delay ms',
        ],
        rows,
        summary: `targets (#19): 10,000 edges ≤ ${TARGETS.rssMb10k} MB; delta→event p99 ≤ ${TARGETS.p99EventMs} ms; storm settled ≤ ${TARGETS.stormS} s with no handshake timeout and no stall > ${TARGETS.stallMs} ms`,
        ok,
      };
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
};
