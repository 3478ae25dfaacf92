/**
 * The fleet benchmark's edges: many light edges in one process (one of the benchmark's children,
 * so their CPU is not the cloud's; SimulatedFleet may spread a fleet over several), each the
 * edge's real TunnelClient (hello, resume or snapshot, deltas, acks, RPC answers, the real
 * backoff) over an in-memory home of `entities` lights. Driven over IPC by SimulatedFleet:
 * Edge k's lights are light.e<k>_lamp_<i> (k counts from the process's `offset` in the fleet).
 *   parent → { cmd: 'deltas', everyMs } | { cmd: 'quiet' } | { cmd: 'stats' } | { cmd: 'lagging' }
 *            | { cmd: 'resetLoop' } | { cmd: 'stop' }
 *   child  → { type: 'started' } | { type: 'stats', online, synced, deltas, rpcs, handshakeTimeouts, errors, closes, loopMaxMs }
 *            | { type: 'lagging', groups: [{ state, count, edges }] } (the edges not synced, and why)
 * Each delta carries `attributes.sent_at` (epoch ms) so the app side can measure delta → event.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tunnel } from '@smarthome/protocol';
import { TunnelClient } from '@smarthome/edge/tunnel/client';
import type { FleetProcessConfig, FleetStats, LaggingGroup } from './fleet-processes.ts';

const config = JSON.parse(readFileSync(process.env.FLEET_CONFIG_FILE!, 'utf8')) as FleetProcessConfig;
let deltas = 0;
let rpcs = 0;
let handshakeTimeouts = 0;
let errors = 0;
/** tunnel closes by code and reason: a tunnel that closes while nothing should close it says why */
const closes: Record<string, number> = {};
/** this process's own stalls: while its loop is blocked, its edges' due reconnects and frames wait, then leave together */
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();

function home(edgeIndex: number, entities: number): tunnel.Snapshot {
  const devices = Array.from({ length: entities }, (_, i) => ({
    id: i + 1,
    name: `Lamp ${i + 1}`,
    manufacturer: 'Acme',
    model: 'L1',
    config_entry_id: 1,
    user_id: null,
  }));
  const records = devices.map((d) => ({
    id: d.id,
    entity_id: `light.e${edgeIndex}_lamp_${d.id}`,
    name: d.name,
    domain: 'light',
    platform: 'mqtt',
    unique_id: `e${edgeIndex}-lamp-${d.id}`,
    config_entry_id: 1,
    device_registry_id: d.id,
  }));
  return {
    devices,
    entities: records,
    states: records.map((e) => ({
      entity_id: e.entity_id,
      name: e.name,
      domain: 'light',
      platform: 'mqtt',
      state: 'off',
      attributes: {
        brightness: 0,
        color_mode: 'brightness',
        supported_color_modes: ['brightness'],
        friendly_name: e.name,
        sent_at: 0,
      },
      last_changed: new Date().toISOString(),
      last_updated: new Date().toISOString(),
    })),
    config_entries: [
      { id: 1, domain: 'mqtt', title: 'MQTT', source: 'user', state: 'loaded', created_at: new Date().toISOString() },
    ],
    automations: [],
  };
}

interface FleetEdge {
  client: TunnelClient;
  snapshot: tunnel.Snapshot;
  emit: ((d: tunnel.Delta) => void) | null;
  /** why it is down, for the bench's report of edges that did not come online */
  last: { close?: string; refused?: number; error?: string };
}

/** Each edge's own logger: the bench counts handshake timeouts and errors, and keeps the last of each. */
const logFor = (edge: FleetEdge) => ({
  info: () => {},
  warn: (_msg: string, fields?: Record<string, unknown>) => {
    if (typeof fields?.status === 'number') edge.last.refused = fields.status;
    const err = String(fields?.err ?? '');
    if (/handshake has timed out/i.test(err)) handshakeTimeouts += 1;
    else if (err) errors += 1;
    if (err) edge.last.error = err;
  },
  error: () => {
    errors += 1;
  },
});

const edges: FleetEdge[] = config.tokens.map((token, index) => {
  const edge: FleetEdge = {
    client: null as unknown as TunnelClient,
    snapshot: home(config.offset + index, config.entities),
    emit: null,
    last: {},
  };
  edge.client = new TunnelClient({
    cloudUrl: config.cloudUrl,
    token,
    edgeVersion: 'fleet-bench',
    hostname: 'fleet',
    log: logFor(edge),
    snapshot: () => edge.snapshot,
    onDelta: (listener) => {
      edge.emit = listener;
      return () => {
        edge.emit = null;
      };
    },
    onDisconnect: ({ code, reason }) => {
      edge.last.close = reason ? `${code} ${reason}` : String(code);
      closes[edge.last.close] = (closes[edge.last.close] ?? 0) + 1;
    },
    handleRequest: async (req) => {
      rpcs += 1;
      const m = /^\/v1\/services\/([a-z_]+)\/([a-z_]+)$/.exec(req.path);
      if (req.method === 'POST' && m) return { status: 200, body: { changed_states: [] } };
      return { status: 404, body: { message: 'not found' } };
    },
  });
  return edge;
});

/** One state change on a random light of `edge`, stamped with the time it left. */
function change(edge: FleetEdge): void {
  const i = Math.floor(Math.random() * edge.snapshot.states.length);
  const old = edge.snapshot.states[i];
  const now = Date.now();
  const state = {
    ...old,
    state: old.state === 'on' ? 'off' : 'on',
    attributes: { ...old.attributes, brightness: Math.floor(Math.random() * 255), sent_at: now },
    last_changed: new Date(now).toISOString(),
    last_updated: new Date(now).toISOString(),
  };
  edge.snapshot.states[i] = state;
  deltas += 1;
  edge.emit?.({ kind: 'state', state, old_state: old });
}

let timers: NodeJS.Timeout[] = [];
function quiet(): void {
  for (const t of timers) clearTimeout(t);
  timers = [];
}
/** Each edge changes a state every `everyMs` on average, at its own random phase (Poisson-like spacing). */
function startDeltas(everyMs: number): void {
  quiet();
  edges.forEach((edge, index) => {
    const next = () => {
      timers[index] = setTimeout(
        () => {
          change(edge);
          next();
        },
        -Math.log(1 - Math.random()) * everyMs,
      );
    };
    next();
  });
}

function stats(): FleetStats {
  let online = 0;
  let synced = 0;
  for (const e of edges) {
    if (e.client.welcomed) online += 1;
    if (e.client.synced) synced += 1;
  }
  return {
    type: 'stats',
    online,
    synced,
    deltas,
    rpcs,
    handshakeTimeouts,
    errors,
    closes: { ...closes },
    loopMaxMs: loop.max / 1e6,
  };
}

/**
 * The edges not synced, grouped by where they are (connected but not welcomed, welcomed but not
 * acknowledged, not connected) and what last happened to them (close code and reason, refusal,
 * socket error), a few edge indexes each: what the bench prints when it stops waiting.
 */
function lagging(): { type: 'lagging'; groups: LaggingGroup[] } {
  const groups = new Map<string, Omit<LaggingGroup, 'state'>>();
  edges.forEach((e, index) => {
    if (e.client.synced) return;
    const where = e.client.welcomed
      ? 'welcomed, not synced'
      : e.client.connected
        ? 'connected, not welcomed'
        : 'not connected';
    const { close, refused, error } = e.last;
    const why = [close && `last close ${close}`, refused && `last refused ${refused}`, error && `last error ${error}`]
      .filter(Boolean)
      .join('; ');
    const key = `${where}${why ? ` (${why})` : ''}`;
    const g = groups.get(key) ?? { count: 0, edges: [] };
    g.count += 1;
    if (g.edges.length < 5) g.edges.push(config.offset + index);
    groups.set(key, g);
  });
  return { type: 'lagging', groups: [...groups].map(([state, g]) => ({ state, ...g })) };
}

process.on('message', (msg: { cmd: string; everyMs?: number }) => {
  if (msg.cmd === 'deltas') startDeltas(msg.everyMs ?? 10_000);
  else if (msg.cmd === 'quiet') quiet();
  else if (msg.cmd === 'stats') process.send!(stats());
  else if (msg.cmd === 'lagging') process.send!(lagging());
  else if (msg.cmd === 'resetLoop') loop.reset();
  else if (msg.cmd === 'stop') {
    quiet();
    void Promise.all(edges.map((e) => e.client.stop())).then(() => process.exit(0));
  }
});

// connect gradually at first start (a fleet does not boot in the same millisecond); reconnects use the real backoff
let started = 0;
const perBatch = Math.max(1, Math.round(200 / config.processes));
const batch = () => {
  for (const e of edges.slice(started, started + perBatch)) e.client.start();
  started += perBatch;
  if (started < edges.length) setTimeout(batch, 20);
};
batch();
process.send!({ type: 'started', edges: edges.length });
