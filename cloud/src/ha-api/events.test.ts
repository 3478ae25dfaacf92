import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type WebSocket from 'ws';
import { sampleSnapshot } from '../testing/fixtures.ts';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { connectHa, haWorld } from '../testing/ha.ts';
import { changeState } from './testing.ts';

/**
 * The HA event listeners on the Audience index (events.ts), over the cloud's real
 * /api/websocket on SQLite and PostgreSQL: a state change reaches the sessions that may see it,
 * each session's scope loads once, and a removed share stops its events at once.
 */
let t: TestCloud;
let world: Awaited<ReturnType<typeof haWorld>>;
let edgeB: number;
const sockets: WebSocket[] = [];
const connect = (token: string) => connectHa(t.url, sockets, token);

// B (another tenant) has an edge of its own with a light.lamp_1 too: same entity id, other edge
beforeAll(async () => {
  t = await startTestCloud();
  world = await haWorld(t);
  edgeB = (await t.post('/v1/edges', { token: world.b.token, body: { name: 'Flat' } })).body.edge.id as number;
  await t.cloud.services.mirror.replaceSnapshot(edgeB, sampleSnapshot({ devices: 1 }));
});
afterAll(async () => {
  for (const s of sockets) s.terminate();
  await t.stop();
});

type Client = Awaited<ReturnType<typeof connect>>;

/** subscribe_events (state_changed) and subscribe_entities on one session; the entities' initial event taken. */
async function subscribeBoth(client: Client): Promise<{ events: number; entities: number; initial: string[] }> {
  const events = await client.ask({ type: 'subscribe_events', event_type: 'state_changed' });
  const entities = await client.ask({ type: 'subscribe_entities' });
  expect([events.success, entities.success]).toEqual([true, true]);
  const initial = await client.next((m) => m.type === 'event' && m.id === entities.id);
  return { events: events.id, entities: entities.id, initial: Object.keys(initial.event.a).sort() };
}

/** The entity ids of the state_changed events the client received on subscription `id` (taken from its inbox). */
const changedIds = (client: Client, id: number): string[] =>
  client.inbox.filter((m) => m.type === 'event' && m.id === id).map((m) => m.event.data.entity_id);

describe('cloud HA events on the audience index', () => {
  it('a removed share stops subscribe_events and subscribe_entities at once; another tenant never receives', async () => {
    const { a, b, v, org, edgeA } = world;
    // a second share keeps the viewer in the fan-out after the first one is removed
    const second = await t.post(`/v1/organizations/${org}/shares`, {
      token: a.token,
      body: { resource_type: 'entity', resource_id: 'light.lamp_1', can_view: true, user_id: v.id },
    });
    expect(second.status).toBe(201);
    const shares = (await t.get(`/v1/organizations/${org}/shares`, { token: a.token })).body as {
      id: number;
      resource_id: string;
    }[];
    const lamp2 = shares.find((s) => s.resource_id === 'light.lamp_2')!;

    const viewer = await connect(v.token);
    const stranger = await connect(b.token);
    const vs = await subscribeBoth(viewer);
    const bs = await subscribeBoth(stranger);
    expect(vs.initial).toEqual(['light.lamp_1', 'light.lamp_2']);
    expect(bs.initial).toEqual(['light.lamp_1']);

    await changeState(t, edgeA, 'light.lamp_2', 'on');
    expect((await viewer.next((m) => m.type === 'event' && m.id === vs.events)).event.data.entity_id).toBe(
      'light.lamp_2',
    );
    expect((await viewer.next((m) => m.type === 'event' && m.id === vs.entities)).event).toEqual({
      c: { 'light.lamp_2': { '+': expect.objectContaining({ s: 'on' }) } },
    });

    expect((await t.delete(`/v1/organizations/${org}/shares/${lamp2.id}`, { token: a.token })).status).toBe(200);
    // at once: no wait between the removal and the next change
    await changeState(t, edgeA, 'light.lamp_2', 'off');
    await changeState(t, edgeA, 'light.lamp_1', 'on');
    await changeState(t, edgeB, 'light.lamp_1', 'on');
    // a session's events arrive in order: lamp_1's came after whatever lamp_2's change sent (nothing)
    expect((await viewer.next((m) => m.type === 'event' && m.id === vs.events)).event.data.entity_id).toBe(
      'light.lamp_1',
    );
    expect((await viewer.next((m) => m.type === 'event' && m.id === vs.entities)).event).toEqual({
      c: { 'light.lamp_1': { '+': expect.objectContaining({ s: 'on' }) } },
    });
    expect(changedIds(viewer, vs.events)).toEqual([]);
    expect(viewer.inbox.filter((m) => m.type === 'event')).toEqual([]);

    // B gets its own edge's lamp_1, never A's lamp_1 or lamp_2
    const own = await stranger.next((m) => m.type === 'event' && m.id === bs.events);
    expect([own.event.data.entity_id, own.event.data.new_state.state]).toEqual(['light.lamp_1', 'on']);
    expect(changedIds(stranger, bs.events)).toEqual([]);
    expect(stranger.inbox.filter((m) => m.type === 'event' && m.id === bs.entities).length).toBe(1);
  });

  it("an edge's other events reach only the sessions that see the whole edge", async () => {
    const { a, b, v, edgeA, edgeO } = world;
    const [owner, viewer, stranger] = [await connect(a.token), await connect(v.token), await connect(b.token)];
    const ids = await Promise.all(
      [owner, viewer, stranger].map(async (c) => (await c.ask({ type: 'subscribe_events' })).id as number),
    );
    const fire = (edgeId: number, eventType: string) =>
      t.cloud.services.tunnel.emit('edge_event', {
        edgeId,
        event: {
          event_type: eventType,
          data: { edge: edgeId },
          origin: 'LOCAL',
          time_fired: new Date().toISOString(),
          context: { id: `ctx-${eventType}`, parent_id: null, user_id: null },
        },
      });
    // A owns edge A and organization O's edge; V sees O's edge whole and only a share on A; B its own edge
    fire(edgeA, 'doorbell_a');
    fire(edgeO, 'doorbell_o');
    fire(edgeB, 'doorbell_b');
    const types = async (c: Client, id: number, n: number) => {
      const out: string[] = [];
      for (let i = 0; i < n; i++) out.push((await c.next((m) => m.type === 'event' && m.id === id)).event.event_type);
      return out;
    };
    expect(await types(owner, ids[0], 2)).toEqual(['doorbell_a', 'doorbell_o']);
    expect(await types(viewer, ids[1], 1)).toEqual(['doorbell_o']);
    expect(await types(stranger, ids[2], 1)).toEqual(['doorbell_b']);
    // each session's events arrive in order: what came before its last one is all it got
    for (const c of [owner, viewer, stranger]) expect(c.inbox.filter((m) => m.type === 'event')).toEqual([]);
  });

  it("a session's scope loads once, not per state change", async () => {
    const { a, edgeA } = world;
    const owner = await connect(a.token);
    const os = await subscribeBoth(owner);
    const edgeGrants = vi.spyOn(t.cloud.services.access, 'edgeGrants');
    try {
      for (let i = 0; i < 5; i++) {
        await changeState(t, edgeA, 'light.lamp_1', i % 2 ? 'on' : 'off');
        await owner.next((m) => m.type === 'event' && m.id === os.events);
      }
      const mine = edgeGrants.mock.calls.filter(([userId]) => userId === a.id);
      // one load (the background refresh may add one on a slow machine); per event it would be 10
      expect(mine.length).toBeLessThanOrEqual(2);
    } finally {
      edgeGrants.mockRestore();
    }
  });
});
