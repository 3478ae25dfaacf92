import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Worker } from 'node:worker_threads';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import type { MqttClient } from 'mqtt';
import { startTestCloud, type TestCloud } from '@smarthome/cloud/testing/harness';
import { sampleSnapshot } from '@smarthome/cloud/testing/fixtures';
import { connect, startEdge, tempDir } from '@smarthome/edge/testing/edge';
import type { Edge } from '@smarthome/edge/edge';
import type { BenchOptions, BenchResult, BenchScenario } from '../lib/types.ts';

/**
 * The tunnel's costs, over loopback, with the load generator in a worker thread (so parsing
 * responses does not steal the servers' event loop):
 * (i)  a service call app → cloud → tunnel → edge → tunnel → cloud → app vs the same call on
 *      the edge's local API: p50/p99 of sequential calls on a keep-alive connection;
 * (ii) GET /v1/entities/states with 10,000 mirrored entities vs a bare Hono hello-world on
 *      @hono/node-server in the same run: requests/s at a fixed concurrency.
 */

/** #19's targets for the latency the tunnel adds to a service call (this bench judged < 1 ms p50 before) */
const TARGET_ADDED_P50_MS = 0.25;
const TARGET_ADDED_P99_MS = 1;
const TARGET_RPS_RATIO = 0.5;
const ENTITY = 'light.desk_lamp_desk';

interface LoadSpec {
  mode: 'latency' | 'throughput';
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** latency: number of sequential calls (after `warmup`) */
  calls?: number;
  warmup?: number;
  /** throughput: parallel keep-alive connections and duration */
  concurrency?: number;
  durationMs?: number;
}

interface LoadResult {
  latencies: number[];
  requests: number;
  bytes: number;
  errors: number;
  statuses: Record<string, number>;
  elapsedMs: number;
}

/** autocannon-style client on node:http keep-alive agents (plain JS: the worker is eval'd). */
const WORKER = `
const http = require('node:http');
const { parentPort, workerData: spec } = require('node:worker_threads');
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.concurrency || 1 });
const url = new URL(spec.url);
function once() {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request({ agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: spec.method, headers: spec.headers }, (res) => {
      let bytes = 0;
      res.on('data', (c) => { bytes += c.length; });
      res.on('end', () => resolve({ ms: performance.now() - t0, status: res.statusCode, bytes }));
    });
    req.on('error', () => resolve({ ms: performance.now() - t0, status: 0, bytes: 0 }));
    if (spec.body) req.end(spec.body); else req.end();
  });
}
(async () => {
  const out = { latencies: [], requests: 0, bytes: 0, errors: 0, statuses: {}, elapsedMs: 0 };
  const note = (r) => { out.requests++; out.bytes += r.bytes; out.statuses[r.status] = (out.statuses[r.status] || 0) + 1; if (r.status < 200 || r.status >= 300) out.errors++; };
  if (spec.mode === 'latency') {
    for (let i = 0; i < (spec.warmup || 0); i++) await once();
    const start = performance.now();
    for (let i = 0; i < spec.calls; i++) { const r = await once(); note(r); out.latencies.push(r.ms); }
    out.elapsedMs = performance.now() - start;
  } else {
    const warmEnd = performance.now() + Math.min(1000, spec.durationMs / 4);
    await Promise.all(Array.from({ length: spec.concurrency }, async () => { while (performance.now() < warmEnd) await once(); }));
    const start = performance.now();
    const end = start + spec.durationMs;
    await Promise.all(Array.from({ length: spec.concurrency }, async () => { while (performance.now() < end) note(await once()); }));
    out.elapsedMs = performance.now() - start;
  }
  agent.destroy();
  parentPort.postMessage(out);
})();
`;

function load(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: spec });
    worker.once('message', (m: LoadResult) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function system(
  cleanups: Array<() => Promise<unknown> | unknown>,
): Promise<{ cloud: TestCloud; edge: Edge; owner: string; local: string; device: MqttClient }> {
  const cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  const owner = await cloud.user();
  const created = await cloud.post('/v1/edges', { token: owner.token, body: { name: 'Bench' } });
  const data = tempDir('bench-tunnel-');
  cleanups.push(data.cleanup);
  const edge = await startEdge(data.dir, { cloudUrl: cloud.url, token: created.body.token });
  cleanups.push(() => edge.stop());
  const device = await connect(edge, await edge.createMqttCredentials({ role: 'device' }));
  cleanups.push(() => device.endAsync(true));
  await device.publishAsync(
    'homeassistant/light/desk/config',
    JSON.stringify({
      name: 'Desk',
      uniq_id: 'desk',
      cmd_t: 'desk/set',
      stat_t: 'desk/state',
      dev: { ids: 'desk-1', name: 'Desk lamp' },
    }),
    { qos: 1, retain: true },
  );
  await device.publishAsync('desk/state', 'OFF', { qos: 1 });
  const end = Date.now() + 10_000;
  while ((await cloud.get(`/v1/entities/states/${ENTITY}`, { token: owner.token })).status !== 200) {
    if (Date.now() > end) throw new Error('entity never reached the cloud mirror');
    await new Promise((r) => setTimeout(r, 20));
  }
  return { cloud, edge, owner: owner.token, local: edge.tokens.create('bench').token, device };
}

/** Hono hello-world at `/`, and at `/big` a fixed pre-serialized body (the ceiling of any response cache). */
async function helloWorld(cleanups: Array<() => Promise<unknown> | unknown>, big: string): Promise<string> {
  const app = new Hono();
  app.get('/', (c) => c.text('Hello Hono!'));
  const bytes = Buffer.from(big);
  app.get('/big', () => new Response(bytes, { headers: { 'content-type': 'application/json' } }));
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server)) as Server;
  });
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

async function run(options: BenchOptions): Promise<BenchResult> {
  const calls = options.quick ? 300 : 2000;
  const durationMs = options.quick ? 2000 : 5000;
  const concurrency = 16;
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  try {
    // (i) service call latency
    const { cloud, edge, owner, local } = await system(cleanups);
    const body = JSON.stringify({ entity_id: ENTITY, brightness: 128 });
    const json = { 'content-type': 'application/json' };
    const direct = await load({
      mode: 'latency',
      url: `http://127.0.0.1:${edge.ports.http}/v1/services/light/turn_on`,
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${local}` },
      body,
      calls,
      warmup: 200,
    });
    const relayed = await load({
      mode: 'latency',
      url: `${cloud.url}/v1/services/light/turn_on`,
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${owner}` },
      body,
      calls,
      warmup: 200,
    });
    // The cloud's own share without the tunnel: auth + access check + a mirror read of one entity.
    const cloudOnly = await load({
      mode: 'latency',
      url: `${cloud.url}/v1/entities/states/${ENTITY}`,
      method: 'GET',
      headers: { authorization: `Bearer ${owner}` },
      calls,
      warmup: 200,
    });
    for (const r of [direct, relayed, cloudOnly])
      if (r.errors) throw new Error(`service calls failed: ${JSON.stringify(r.statuses)}`);
    const d = [...direct.latencies].sort((a, b) => a - b);
    const c = [...relayed.latencies].sort((a, b) => a - b);
    const o = [...cloudOnly.latencies].sort((a, b) => a - b);
    const addedP50 = pct(c, 50) - pct(d, 50);
    const addedP99 = pct(c, 99) - pct(d, 99);
    options.log(`service calls: ${calls} direct, ${calls} through the cloud`);

    // (ii) 10k mirrored entities for a second user's edge, vs hello-world
    const reader = await cloud.user();
    const scope = { kind: 'personal' as const, userId: reader.id, orgId: null };
    const edgeId = (await cloud.cloud.services.edges.create(scope, { name: 'Big' })).edge.id;
    await cloud.cloud.services.mirror.replaceSnapshot(edgeId, sampleSnapshot({ devices: 10_000 }), 1);
    const check = await cloud.get('/v1/entities/states', { token: reader.token });
    if (check.status !== 200 || check.body.length !== 10_000)
      throw new Error(`expected 10,000 states, got ${check.status} ${check.body?.length}`);
    const hello = await helloWorld(cleanups, JSON.stringify(check.body));
    const bare = await load({ mode: 'throughput', url: hello, method: 'GET', headers: {}, concurrency, durationMs });
    const states = await load({
      mode: 'throughput',
      url: `${cloud.url}/v1/entities/states`,
      method: 'GET',
      headers: { authorization: `Bearer ${reader.token}` },
      concurrency,
      durationMs,
    });
    // What fetch, browsers and the mobile HTTP stacks send by default.
    const statesGzip = await load({
      mode: 'throughput',
      url: `${cloud.url}/v1/entities/states`,
      method: 'GET',
      headers: { authorization: `Bearer ${reader.token}`, 'accept-encoding': 'gzip, deflate, br' },
      concurrency,
      durationMs,
    });
    // A polling app that keeps the ETag: 304 while nothing it may see has changed.
    const unchanged = await load({
      mode: 'throughput',
      url: `${cloud.url}/v1/entities/states`,
      method: 'GET',
      headers: { authorization: `Bearer ${reader.token}`, 'if-none-match': check.headers.get('etag') ?? '' },
      concurrency,
      durationMs,
    });
    if (unchanged.statuses['304'] !== unchanged.requests)
      throw new Error(`expected only 304s, got ${JSON.stringify(unchanged.statuses)}`);
    unchanged.errors = 0;
    const ceiling = await load({
      mode: 'throughput',
      url: `${hello}big`,
      method: 'GET',
      headers: {},
      concurrency,
      durationMs,
    });
    for (const r of [bare, states, statesGzip, ceiling])
      if (r.errors) throw new Error(`requests failed: ${JSON.stringify(r.statuses)}`);
    const rps = (r: LoadResult) => r.requests / (r.elapsedMs / 1000);
    const ratio = rps(states) / rps(bare);
    const bytesPer = states.bytes / states.requests;

    const okLatency = addedP50 <= TARGET_ADDED_P50_MS && addedP99 <= TARGET_ADDED_P99_MS;
    const okRps = ratio >= TARGET_RPS_RATIO;
    const ms = (x: number) => x.toFixed(3);
    return {
      columns: ['measurement', 'requests', 'p50 (ms)', 'p99 (ms)', 'req/s', 'bytes/resp', 'target'],
      rows: [
        [
          'service call, edge local API',
          calls,
          ms(pct(d, 50)),
          ms(pct(d, 99)),
          Math.round(rps(direct)),
          Math.round(direct.bytes / direct.requests),
          '',
        ],
        [
          'service call, app→cloud→edge→cloud→app',
          calls,
          ms(pct(c, 50)),
          ms(pct(c, 99)),
          Math.round(rps(relayed)),
          Math.round(relayed.bytes / relayed.requests),
          '',
        ],
        [
          'added by the tunnel',
          '',
          ms(addedP50),
          ms(addedP99),
          '',
          '',
          `p50 ≤ ${TARGET_ADDED_P50_MS}, p99 ≤ ${TARGET_ADDED_P99_MS} ms`,
        ],
        [
          '(cloud alone: GET one mirrored state)',
          calls,
          ms(pct(o, 50)),
          ms(pct(o, 99)),
          Math.round(rps(cloudOnly)),
          Math.round(cloudOnly.bytes / cloudOnly.requests),
          '',
        ],
        [
          `Hono hello-world (c=${concurrency})`,
          bare.requests,
          '',
          '',
          Math.round(rps(bare)),
          Math.round(bare.bytes / bare.requests),
          '(baseline)',
        ],
        [
          `GET /v1/entities/states, 10k (c=${concurrency})`,
          states.requests,
          '',
          '',
          Math.round(rps(states)),
          Math.round(bytesPer),
          `≥ ${TARGET_RPS_RATIO * 100} % of hello-world`,
        ],
        [
          `GET /v1/entities/states, 10k, Accept-Encoding: gzip`,
          statesGzip.requests,
          '',
          '',
          Math.round(rps(statesGzip)),
          Math.round(statesGzip.bytes / statesGzip.requests),
          '',
        ],
        [
          `(ceiling: same bytes pre-serialized on bare Hono)`,
          ceiling.requests,
          '',
          '',
          Math.round(rps(ceiling)),
          Math.round(ceiling.bytes / ceiling.requests),
          '',
        ],
        [
          `GET /v1/entities/states, 10k, If-None-Match → 304`,
          unchanged.requests,
          '',
          '',
          Math.round(rps(unchanged)),
          0,
          '',
        ],
      ],
      summary:
        `tunnel adds ${ms(addedP50)} ms p50 / ${ms(addedP99)} ms p99 to a service call (target ≤ ${TARGET_ADDED_P50_MS} ms p50, ≤ ${TARGET_ADDED_P99_MS} ms p99): ${okLatency ? 'met' : 'MISSED'}; ` +
        `10k-entity states reach ${(ratio * 100).toFixed(1)}% of hello-world req/s (target ≥ ${TARGET_RPS_RATIO * 100}%): ${okRps ? 'met' : 'MISSED'}; ` +
        `a pre-serialized ${(bytesPer / 1e6).toFixed(1)} MB body alone reaches ${((rps(ceiling) / rps(bare)) * 100).toFixed(1)}%, ` +
        `the endpoint ${((rps(states) / rps(ceiling)) * 100).toFixed(0)}% of that; gzip-accepting clients ${((rps(statesGzip) / rps(bare)) * 100).toFixed(1)}%; ` +
        `with If-None-Match (304) ${((rps(unchanged) / rps(bare)) * 100).toFixed(1)}% of hello-world`,
      ok: okLatency && okRps,
    };
  } finally {
    for (const c of cleanups.reverse()) {
      try {
        await c();
      } catch {
        /* best effort */
      }
    }
  }
}

export const scenario: BenchScenario = {
  name: 'tunnel',
  description: 'service call latency added by the cloud↔edge tunnel; 10k mirrored states vs Hono hello-world',
  run,
};
