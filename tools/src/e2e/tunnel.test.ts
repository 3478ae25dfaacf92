import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { EntityState, tunnel } from '@smarthome/protocol';
import { HttpError, UpgradeDispatcher } from '@smarthome/protocol/server';
import { probeUpgrade } from '@smarthome/protocol/server/upgrade-probe';
import { TunnelHub, type TunnelDeps } from '@smarthome/cloud/tunnel/hub';
import { EdgeBusyError, EdgeTimeoutError, EdgeOfflineError } from '@smarthome/cloud/tunnel/connection';
import WebSocket from 'ws';
import { createLogger } from '@smarthome/cloud/log';
import { TunnelClient } from '@smarthome/edge/tunnel/client';
import { until } from './support.ts';

const silent = createLogger('test', { silent: true });
const state = (entity_id: string, s: string): EntityState => ({
  entity_id,
  name: entity_id,
  domain: entity_id.split('.')[0],
  platform: 'mqtt',
  state: s,
  attributes: {},
});

/** The cloud side's mirror, in memory. */
class FakeMirror {
  lastSeq: number | null = null;
  states = new Map<string, EntityState>();
  snapshots = 0;
  online = new Set<number>();
  /** size of each batch of deltas applied */
  batches: number[] = [];
  /** how long applying a batch takes (a slow database) */
  delayMs = 0;
}

async function startHub(tokens: Record<string, number>, mirror: FakeMirror, limits?: TunnelDeps['limits'], port = 0) {
  const upgrades = new UpgradeDispatcher(silent);
  const server = http.createServer(upgrades.serverOptions(), (_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  upgrades.attach(server);
  const hub = new TunnelHub({
    log: silent,
    limits,
    authenticateEdge: async (t) => (tokens[t] ? { id: tokens[t] } : null),
    lastSeq: async () => mirror.lastSeq,
    applySnapshot: async (_e, seq, snap) => {
      mirror.snapshots += 1;
      mirror.states = new Map(snap.states.map((s) => [s.entity_id, s]));
      mirror.lastSeq = seq;
    },
    applyDeltas: async (_e, lastSeq, deltas) => {
      if (mirror.delayMs) await new Promise((r) => setTimeout(r, mirror.delayMs));
      mirror.lastSeq = lastSeq;
      mirror.batches.push(deltas.length);
      return deltas.map((delta) => {
        if (delta.kind !== 'state') return;
        const old = mirror.states.get(delta.state.entity_id) ?? null;
        mirror.states.set(delta.state.entity_id, delta.state);
        return { oldState: old };
      });
    },
    markOnline: async (id) => {
      mirror.online.add(id);
    },
    markOffline: async (id) => {
      mirror.online.delete(id);
    },
  });
  hub.start(upgrades);
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { hub, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** The edge side: a tiny state store that emits deltas. */
class FakeEdge {
  states = new Map<string, EntityState>();
  listeners: Array<(d: tunnel.Delta) => void> = [];
  set(id: string, s: string) {
    const st = state(id, s);
    this.states.set(id, st);
    for (const l of this.listeners) l({ kind: 'state', state: st });
  }
  client(
    url: string,
    token: string,
    handle?: (req: tunnel.TunnelRequest) => Promise<{ status: number; body: unknown }>,
  ) {
    return new TunnelClient({
      cloudUrl: url,
      token,
      edgeVersion: 'test',
      log: silent,
      backoff: { initialMs: 20, maxMs: 100 },
      snapshot: () => ({
        devices: [],
        entities: [],
        states: [...this.states.values()],
        config_entries: [],
        automations: [],
      }),
      onDelta: (l) => {
        this.listeners.push(l);
        return () => {
          this.listeners = this.listeners.filter((x) => x !== l);
        };
      },
      handleRequest: handle ?? (async (req) => ({ status: 200, body: { echo: req.path, origin: req.origin } })),
    });
  }
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A hub and an edge (id 7) holding one entity, connected and synced. */
async function connectedEdge(entityId: string, value: string) {
  const mirror = new FakeMirror();
  const { hub, server, url } = await startHub({ good: 7 }, mirror);
  cleanups.push(
    () => new Promise((r) => server.close(() => r())),
    () => hub.stop(),
  );
  const edge = new FakeEdge();
  edge.set(entityId, value);
  const client = edge.client(url, 'good');
  client.start();
  cleanups.push(() => client.stop());
  await until(() => mirror.snapshots === 1);
  return { mirror, hub, edge, client };
}

describe('edge↔cloud tunnel', () => {
  it('syncs a snapshot, then deltas with sequence numbers, and answers RPCs', async () => {
    const { mirror, hub, edge, client } = await connectedEdge('light.a', 'off');
    expect(mirror.online.has(7)).toBe(true);
    expect(client.edgeId).toBe(7);
    expect(mirror.states.get('light.a')?.state).toBe('off');
    const changes: unknown[] = [];
    hub.on('state_changed', (e) => changes.push(e));
    edge.set('light.a', 'on');
    await until(() => mirror.states.get('light.a')?.state === 'on');
    expect(changes).toEqual([
      { edgeId: 7, entity_id: 'light.a', old_state: state('light.a', 'off'), new_state: state('light.a', 'on') },
    ]);
    expect(mirror.lastSeq).toBe(1);
    const res = await hub.request(7, {
      method: 'GET',
      path: '/v1/devices',
      origin: { via: 'cloud', user_id: 'u1', remote_addr: null },
    });
    expect(res).toEqual({
      status: 200,
      body: { echo: '/v1/devices', origin: { via: 'cloud', user_id: 'u1', remote_addr: null } },
    });
  });

  it('applies a burst of deltas in a few batches, in order, with one state_changed per delta', async () => {
    const { mirror, hub, edge } = await connectedEdge('sensor.power', '0');
    const changes: { old_state: EntityState | null; new_state: EntityState }[] = [];
    hub.on('state_changed', (e) => changes.push(e));
    mirror.delayMs = 20;
    for (let i = 1; i <= 50; i++) edge.set('sensor.power', String(i));
    await until(() => mirror.lastSeq === 50, 5000, 'all 50 deltas');
    expect(mirror.states.get('sensor.power')?.state).toBe('50');
    expect(mirror.batches.reduce((a, b) => a + b, 0)).toBe(50);
    expect(mirror.batches.length).toBeLessThan(10);
    expect(changes.map((c) => [c.old_state?.state, c.new_state.state])).toEqual(
      Array.from({ length: 50 }, (_, i) => [String(i), String(i + 1)]),
    );
  });

  it('refuses bad tokens, times out slow RPCs, and reports an offline edge', async () => {
    const mirror = new FakeMirror();
    const { hub, server, url } = await startHub({ good: 1 }, mirror, { rpcTimeoutMs: 100 });
    cleanups.push(
      () => new Promise((r) => server.close(() => r())),
      () => hub.stop(),
    );
    const bad = new FakeEdge().client(url, 'bad');
    bad.start();
    cleanups.push(() => bad.stop());
    await new Promise((r) => setTimeout(r, 200));
    expect(bad.edgeId).toBeNull();
    expect(mirror.online.size).toBe(0);
    await expect(
      hub.request(1, { method: 'GET', path: '/x', origin: { via: 'cloud', user_id: null, remote_addr: null } }),
    ).rejects.toBeInstanceOf(EdgeOfflineError);
    const slow = new FakeEdge().client(url, 'good', () => new Promise(() => {}));
    slow.start();
    cleanups.push(() => slow.stop());
    await until(() => hub.isOnline(1) && mirror.online.has(1));
    await expect(
      hub.request(1, { method: 'GET', path: '/x', origin: { via: 'cloud', user_id: null, remote_addr: null } }),
    ).rejects.toBeInstanceOf(EdgeTimeoutError);
  });

  it('resumes from the acknowledged sequence after a reconnect, with no lost state', async () => {
    const mirror = new FakeMirror();
    const first = await startHub({ good: 3 }, mirror);
    const port = (first.server.address() as AddressInfo).port;
    const edge = new FakeEdge();
    edge.set('sensor.t', '20');
    const client = edge.client(first.url, 'good');
    client.start();
    cleanups.push(() => client.stop());
    await until(() => mirror.snapshots === 1);
    // The connection drops; changes keep happening on the edge meanwhile.
    // (The client may be back within milliseconds, so there is no point waiting to see it offline.)
    first.hub.disconnect(3, 'test drop');
    edge.set('sensor.t', '21');
    edge.set('sensor.t', '22');
    await until(() => mirror.states.get('sensor.t')?.state === '22');
    expect(mirror.snapshots).toBe(1);
    expect(mirror.lastSeq).toBe(2);
    // The cloud restarts (same mirror); changes made while it is down arrive after the reconnect.
    await first.hub.stop();
    await new Promise<void>((r) => {
      first.server.close(() => r());
      first.server.closeAllConnections();
    });
    await until(() => !client.connected);
    edge.set('sensor.t', '23');
    const second = await startHub({ good: 3 }, mirror, undefined, port);
    cleanups.push(
      () => new Promise((r) => second.server.close(() => r())),
      () => second.hub.stop(),
    );
    await until(() => mirror.states.get('sensor.t')?.state === '23');
    expect(mirror.snapshots).toBe(1);
    expect(mirror.lastSeq).toBe(3);
  });

  it('sends a snapshot when the cloud lost track (mirror reset)', async () => {
    const mirror = new FakeMirror();
    const { hub, server, url } = await startHub({ good: 4 }, mirror);
    cleanups.push(
      () => new Promise((r) => server.close(() => r())),
      () => hub.stop(),
    );
    const edge = new FakeEdge();
    const client = edge.client(url, 'good');
    client.start();
    cleanups.push(() => client.stop());
    await until(() => mirror.snapshots === 1);
    edge.set('switch.x', 'on');
    await until(() => mirror.lastSeq === 1);
    mirror.lastSeq = null;
    mirror.states.clear();
    hub.disconnect(4, 'test');
    await until(() => mirror.snapshots === 2);
    expect(mirror.states.get('switch.x')?.state).toBe('on');
  });

  it('drops the tunnel of a revoked edge at once', async () => {
    const mirror = new FakeMirror();
    const tokens: Record<string, number> = { good: 9 };
    const { hub, server, url } = await startHub(tokens, mirror);
    cleanups.push(
      () => new Promise((r) => server.close(() => r())),
      () => hub.stop(),
    );
    const client = new FakeEdge().client(url, 'good');
    client.start();
    cleanups.push(() => client.stop());
    await until(() => mirror.online.has(9));
    // Revocation: the token is dead and the live tunnel is dropped.
    delete tokens.good;
    hub.disconnect(9);
    await until(() => !mirror.online.has(9) && !client.connected);
    await new Promise((r) => setTimeout(r, 300));
    expect(hub.isOnline(9)).toBe(false);
    expect(mirror.online.has(9)).toBe(false);
  });

  it('refuses new requests at once instead of buffering without bound when an edge is slow', async () => {
    const mirror = new FakeMirror();
    const { hub, server, url } = await startHub({ good: 5 }, mirror, { maxPendingRequests: 5, rpcTimeoutMs: 5000 });
    cleanups.push(
      () => new Promise((r) => server.close(() => r())),
      () => hub.stop(),
    );
    const slow = new FakeEdge().client(url, 'good', () => new Promise(() => {}));
    slow.start();
    cleanups.push(() => slow.stop());
    await until(() => hub.isOnline(5) && mirror.online.has(5));
    const origin = { via: 'cloud' as const, user_id: null, remote_addr: null };
    const pending = Array.from({ length: 5 }, () =>
      hub.request(5, { method: 'GET', path: '/x', origin }).catch((e) => e),
    );
    const started = Date.now();
    await expect(hub.request(5, { method: 'GET', path: '/x', origin })).rejects.toBeInstanceOf(EdgeBusyError);
    expect(Date.now() - started).toBeLessThan(500);
    await hub.stop();
    for (const p of pending) expect(await p).toBeInstanceOf(EdgeOfflineError);
  });

  it('cuts a peer that stops answering heartbeats and marks the edge offline', async () => {
    const mirror = new FakeMirror();
    const { hub, server, url } = await startHub({ good: 6 }, mirror, { heartbeatMs: 100 });
    cleanups.push(
      () => new Promise((r) => server.close(() => r())),
      () => hub.stop(),
    );
    // A raw client that says hello and then goes silent: it never answers pings.
    const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/edge/connect`, {
      headers: { authorization: 'Bearer good' },
      autoPong: false,
    });
    cleanups.push(() => ws.terminate());
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: 'hello', protocol: 1, edge_version: 'test', resume_from: null }));
    await until(() => mirror.online.has(6));
    const closed = new Promise((r) => ws.once('close', r));
    await until(() => !mirror.online.has(6), 3000);
    await closed;
    expect(hub.isOnline(6)).toBe(false);
  });

  it('pings tunnels opened together at spread points of the interval, each within its first interval', async () => {
    const mirror = new FakeMirror();
    const heartbeatMs = 1000;
    const tokens = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`t${i}`, 100 + i]));
    const { hub, server, url } = await startHub(tokens, mirror, { heartbeatMs });
    cleanups.push(
      () => new Promise((r) => server.close(() => r())),
      () => hub.stop(),
    );
    // a storm in small: twenty edges connect at once; when does each get its first ping?
    const firstPings = await Promise.all(
      Object.keys(tokens).map(async (token) => {
        const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/edge/connect`, {
          headers: { authorization: `Bearer ${token}` },
        });
        cleanups.push(() => ws.terminate());
        await new Promise((r) => ws.once('open', r));
        const opened = Date.now();
        ws.send(JSON.stringify({ type: 'hello', protocol: 1, edge_version: 'test', resume_from: null }));
        await new Promise((r) => ws.once('ping', r));
        return Date.now() - opened;
      }),
    );
    // not all in the same few milliseconds (intervals started together would be): twenty uniform
    // draws over 1 s span less than 300 ms with a probability of about 1e-9
    expect(Math.max(...firstPings) - Math.min(...firstPings)).toBeGreaterThan(300);
    expect(Math.max(...firstPings)).toBeLessThan(heartbeatMs + 500);
  });

  it('reports a message nested too deep as a protocol error without applying it, and keeps the tunnel (issue #13)', async () => {
    const mirror = new FakeMirror();
    const { hub, server, url } = await startHub({ good: 9 }, mirror);
    cleanups.push(
      () => new Promise((r) => server.close(() => r())),
      () => hub.stop(),
    );
    const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/edge/connect`, {
      headers: { authorization: 'Bearer good' },
    });
    cleanups.push(() => ws.terminate());
    const messages: any[] = [];
    ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
    await new Promise((r) => ws.once('open', r));
    ws.send(JSON.stringify({ type: 'hello', protocol: 1, edge_version: 'test', resume_from: null }));
    await until(() => mirror.online.has(9));
    const deep = '{"a":'.repeat(5000) + '1' + '}'.repeat(5000);
    ws.send(
      `{"type":"delta","seq":1,"delta":{"kind":"state","state":{"entity_id":"light.x","name":"x","domain":"light","platform":"mqtt","state":"on","attributes":${deep}}}}`,
    );
    const error = await until(() => messages.find((m) => m.type === 'error'));
    expect(error).toMatchObject({ code: 'protocol_error', message: expect.stringContaining('nested deeper than') });
    expect(mirror.batches).toEqual([]);
    ws.send(JSON.stringify({ type: 'ping', ts: 42 }));
    expect(await until(() => messages.find((m) => m.type === 'pong'))).toMatchObject({ ts: 42 });
    expect(hub.isOnline(9)).toBe(true);
  });

  it('answers 503 database_unavailable, not 500, when edge tokens cannot be checked, and closes the socket', async () => {
    const upgrades = new UpgradeDispatcher(silent);
    const server = http.createServer(upgrades.serverOptions());
    upgrades.attach(server);
    const unavailable = new HttpError(503, 'database_unavailable', { headers: { 'Retry-After': '1' } });
    const hub = new TunnelHub({
      log: silent,
      authenticateEdge: async () => {
        throw new Error('Failed query', { cause: unavailable });
      },
      lastSeq: async () => null,
      applySnapshot: async () => {},
      applyDeltas: async () => [],
      markOnline: async () => {},
      markOffline: async () => {},
    });
    hub.start(upgrades);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    cleanups.push(
      () => new Promise((r) => server.close(() => r())),
      () => hub.stop(),
    );
    const res = await probeUpgrade(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, '/v1/edge/connect', {
      upgrade: 'websocket',
      headers: { authorization: 'Bearer good' },
    });
    expect([res.status, res.body, res.headers['retry-after'], res.closed]).toEqual([
      503,
      { error: 'database_unavailable' },
      '1',
      true,
    ]);
  });

  it('refuses a hello with another protocol version and anything before hello', async () => {
    const mirror = new FakeMirror();
    const { hub, server, url } = await startHub({ good: 8 }, mirror);
    cleanups.push(
      () => new Promise((r) => server.close(() => r())),
      () => hub.stop(),
    );
    const connect = async (first: object) => {
      const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/edge/connect`, {
        headers: { authorization: 'Bearer good' },
      });
      cleanups.push(() => ws.terminate());
      const messages: any[] = [];
      ws.on('message', (d) => messages.push(JSON.parse(d.toString())));
      await new Promise((r) => ws.once('open', r));
      ws.send(JSON.stringify(first));
      const code = await new Promise<number>((r) => ws.once('close', (c) => r(c)));
      return { code, messages };
    };
    const old = await connect({ type: 'hello', protocol: 99, edge_version: 'x', resume_from: null });
    expect(old.code).toBe(4001);
    expect(old.messages[0]).toMatchObject({ type: 'error', code: 'protocol_version' });
    const rude = await connect({ type: 'delta', seq: 1, delta: { kind: 'device_remove', id: 1 } });
    expect(rude.code).toBe(4002);
    expect(mirror.online.has(8)).toBe(false);
  });
});
