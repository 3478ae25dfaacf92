import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { UpgradeDispatcher } from '@smarthome/protocol/server';
import { createLogger } from '../log.ts';
import type { StateChanged, TunnelHub } from '../tunnel/hub.ts';
import { AppSocketServer, APP_SOCKET_PATH, type AppApi, type Visibility } from './app-socket.ts';
import { until } from '../testing/until.ts';
import { SessionRegistry } from './sessions.ts';

/**
 * The app socket's fan-out over a real HTTP server and real ws clients; the hub is an emitter
 * and the grants a map the test edits (what EntityAccess would answer).
 */
interface Client {
  events: Array<{ entity_id: string; state: string }>;
  /** the event messages as received */
  raw: string[];
  ws: WebSocket;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: { visibilityTtlMs?: number } = {}) {
  const grants = new Map<string, Visibility>();
  const loads = new Map<string, number>();
  const api: AppApi = {
    authenticate: async (token) => ({ userId: token, credential: `pat:${token}`, expiresAt: null }),
    visibility: async (userId) => {
      loads.set(userId, (loads.get(userId) ?? 0) + 1);
      const v = grants.get(userId) ?? { edges: new Set(), entities: new Set() };
      return { edges: new Set(v.edges), entities: new Set(v.entities) };
    },
    states: async () => [],
    callService: async () => null,
  };
  const hub = new EventEmitter() as unknown as TunnelHub;
  const registry = new SessionRegistry();
  const log = createLogger('test', { silent: true });
  const server = new AppSocketServer({ hub, api, log, sessions: registry, ...opts });
  const upgrades = new UpgradeDispatcher(log);
  const httpServer = http.createServer(upgrades.serverOptions(), (_req, res) => res.end());
  upgrades.attach(httpServer);
  server.start(upgrades);
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', r));
  const port = (httpServer.address() as AddressInfo).port;
  cleanups.push(async () => {
    server.stop();
    await new Promise((r) => httpServer.close(r));
  });

  /** A socket authenticated as `user`, subscribed to state_changed (subscription id `id`). */
  async function connect(user: string, id = 7): Promise<Client> {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${APP_SOCKET_PATH}`);
    cleanups.push(() => ws.terminate());
    const client: Client = { events: [], raw: [], ws };
    await new Promise<void>((resolve, reject) => {
      ws.on('error', reject);
      ws.on('message', (raw) => {
        const m = JSON.parse(raw.toString()) as any;
        if (m.type === 'auth_required') ws.send(JSON.stringify({ type: 'auth', access_token: user }));
        else if (m.type === 'auth_ok')
          ws.send(JSON.stringify({ id, type: 'subscribe_events', event_type: 'state_changed' }));
        else if (m.type === 'result' && m.id === id) resolve();
        else if (m.type === 'event') {
          client.events.push({ entity_id: m.event.data.entity_id, state: m.event.data.new_state?.state });
          client.raw.push(raw.toString());
        }
      });
    });
    return client;
  }

  let n = 0;
  /** Emits a state change, then a marker every client sees, and waits until all got the marker. */
  async function change(edgeId: number, entityId: string, clients: Client[]): Promise<string> {
    const state = `s${++n}`;
    const emit = (e: StateChanged) => hub.emit('state_changed', e);
    emit({ edgeId, entity_id: entityId, old_state: null, new_state: { entity_id: entityId, state } as never });
    emit({ edgeId: 0, entity_id: 'marker.x', old_state: null, new_state: { entity_id: 'marker.x', state } as never });
    for (const c of clients) await until(() => c.events.some((e) => e.entity_id === 'marker.x' && e.state === state));
    return state;
  }
  const got = (c: Client, entityId: string, state: string) =>
    c.events.some((e) => e.entity_id === entityId && e.state === state);

  return { grants, loads, registry, connect, change, got };
}

// every user sees edge 0 (the marker's), so every client gets the marker
const vis = (edges: number[], entities: string[] = []): Visibility => ({
  edges: new Set([0, ...edges]),
  entities: new Set(entities),
});

describe('app socket fan-out', () => {
  it('sends one serialization of an event to all its sessions, around each subscription id', async () => {
    const t = await setup();
    for (const user of ['a', 'b', 'c']) t.grants.set(user, vis([1]));
    const [a, b, c] = [await t.connect('a', 3), await t.connect('b', 7), await t.connect('c', 7)];
    const s = await t.change(1, 'light.a', [a, b, c]);
    const [ra, rb, rc] = [a, b, c].map((client) => client.raw.find((m) => m.includes(`"state":"${s}"`))!);
    expect(JSON.parse(ra!)).toEqual({
      id: 3,
      type: 'event',
      event: {
        event_type: 'state_changed',
        data: { entity_id: 'light.a', old_state: null, new_state: { entity_id: 'light.a', state: s } },
        time_fired: expect.any(String),
      },
    });
    // the same text for the same id; the same event (time_fired included) whatever the id
    expect(rc).toBe(rb);
    expect(rb).toBe(ra!.replace('{"id":3,', '{"id":7,'));
  });

  it('a state change reaches the sessions that see its edge or the entity, and no other; visibility loads once', async () => {
    const t = await setup();
    t.grants.set('owner', vis([1]));
    t.grants.set('guest', vis([], ['1:light.a']));
    t.grants.set('other', vis([2]));
    const [owner, guest, other] = [await t.connect('owner'), await t.connect('guest'), await t.connect('other')];
    const clients = [owner, guest, other];

    const a = await t.change(1, 'light.a', clients);
    expect([t.got(owner, 'light.a', a), t.got(guest, 'light.a', a), t.got(other, 'light.a', a)]).toEqual([
      true,
      true,
      false,
    ]);
    const b = await t.change(1, 'light.b', clients);
    expect([t.got(owner, 'light.b', b), t.got(guest, 'light.b', b), t.got(other, 'light.b', b)]).toEqual([
      true,
      false,
      false,
    ]);
    for (let i = 0; i < 5; i++) await t.change(2, 'light.c', clients);
    expect(other.events.filter((e) => e.entity_id === 'light.c')).toHaveLength(5);
    expect(owner.events.filter((e) => e.entity_id === 'light.c')).toHaveLength(0);
    // loaded with the first event, then served from the index
    expect(Object.fromEntries(t.loads)).toEqual({ owner: 1, guest: 1, other: 1 });
  });

  it('a grant change stops events at once: the next state change goes by the reloaded visibility', async () => {
    const t = await setup();
    t.grants.set('member', vis([1], ['2:light.shared']));
    const member = await t.connect('member');
    const before = await t.change(2, 'light.shared', [member]);
    expect(t.got(member, 'light.shared', before)).toBe(true);

    // the share is deleted and the notice arrives (what linkSessions does for every grant write)
    t.grants.set('member', vis([1]));
    t.registry.accessChanged();
    const after = await t.change(2, 'light.shared', [member]);
    expect(t.got(member, 'light.shared', after)).toBe(false);
    const still = await t.change(1, 'light.own', [member]);
    expect(t.got(member, 'light.own', still)).toBe(true);
    expect(t.loads.get('member')).toBe(2);
  });

  it('a grant change that no notice reports is picked up by the safety refresh', async () => {
    const t = await setup({ visibilityTtlMs: 50 });
    t.grants.set('member', vis([1]));
    const member = await t.connect('member');
    expect(t.got(member, 'light.a', await t.change(1, 'light.a', [member]))).toBe(true);
    t.grants.set('member', vis([]));
    const loaded = t.loads.get('member')!;
    await until(() => t.loads.get('member')! > loaded + 1);
    expect(t.got(member, 'light.a', await t.change(1, 'light.a', [member]))).toBe(false);
  });

  it('a closed socket leaves the fan-out', async () => {
    const t = await setup();
    t.grants.set('a', vis([1]));
    t.grants.set('b', vis([1]));
    const [a, b] = [await t.connect('a'), await t.connect('b')];
    await t.change(1, 'light.a', [a, b]);
    a.ws.close();
    await until(() => t.registry.size === 1);
    const s = await t.change(1, 'light.a', [b]);
    expect(t.got(b, 'light.a', s)).toBe(true);
    expect(t.got(a, 'light.a', s)).toBe(false);
  });
});
