import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { createConnection, createLongLivedTokenAuth, type Connection } from 'home-assistant-js-websocket';
import { addMember } from '@smarthome/cloud/testing/fixtures';
import { TestCloud, startTestCloud } from '@smarthome/cloud/testing/harness';
import { redisReachable } from '@smarthome/cloud/testing/redis';
import type { Edge } from '@smarthome/edge/edge';
import { DESK_LAMP, mqttLamp, pairEdge, sharedDeskLamp, startReplicaPair, until, type Cleanups } from './support.ts';

/**
 * subscribe_trigger on the CLOUD's HA API with home-assistant-js-websocket: a real cloud, real
 * edges paired over the tunnel, a real MQTT lamp. The trigger is armed on the edges' automation
 * engines through the tunnel; fires come back as HA's `{variables: {trigger}, context}` events.
 */
const DESK = DESK_LAMP;
const redis = await redisReachable();

const cleanups: Cleanups = [];
let cloud: TestCloud;
let house: { id: number; edge: Edge };
let cabin: { id: number; edge: Edge };
let lamp: Awaited<ReturnType<typeof mqttLamp>>;
type User = Awaited<ReturnType<TestCloud['user']>>;
let a: User;
let v: User;
let b: User;
let org: string;
let shareId: string;

type TriggerEvent = { variables: { trigger: Record<string, any> }; context: unknown };

async function haConnect(token: string, url = cloud.url): Promise<Connection> {
  const conn = await createConnection({ auth: createLongLivedTokenAuth(url, token) });
  cleanups.push(() => conn.close());
  return conn;
}

/** subscribe_trigger as a client sends it; the events collected in order */
async function subscribeTrigger(conn: Connection, trigger: unknown) {
  const events: TriggerEvent[] = [];
  const unsubscribe = await conn.subscribeMessage<TriggerEvent>((e) => events.push(e), {
    type: 'subscribe_trigger',
    trigger,
  });
  return { events, unsubscribe };
}

async function setDesk(state: 'ON' | 'OFF', client = lamp.client, on = cloud) {
  await client.publishAsync('desk/state', state, { qos: 1 });
  await until(
    async () => (await on.get(`/v1/entities/states/${DESK}`, { token: a.token })).body?.state === state.toLowerCase(),
    5000,
    `desk ${state} mirrored`,
  );
}

beforeAll(async () => {
  (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
  cloud = await startTestCloud();
  cleanups.push(() => cloud.stop());
  [a, v, b] = [await cloud.user(), await cloud.user(), await cloud.user()];
  org = (await cloud.post('/v1/organizations', { token: a.token, body: { name: 'Family' } })).body.id as string;
  await addMember(cloud, org, v.id, 'member');
  house = await pairEdge(cloud, cleanups, a.token, 'House');
  cabin = await pairEdge(cloud, cleanups, a.token, 'Cabin');
  ({ lamp, shareId } = await sharedDeskLamp(cloud, cleanups, house.edge, a.token, org, v.id));
}, 60_000);
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
});

describe('subscribe_trigger on the cloud, armed on the edges', () => {
  it("a state trigger fires with HA's variables; unsubscribing disarms it on the edge", async () => {
    const conn = await haConnect(a.token);
    const sub = await subscribeTrigger(conn, { platform: 'state', entity_id: DESK, to: 'on' });
    // only the edge holding the entity has it armed
    expect(house.edge.cloudTriggers.ids).toHaveLength(1);
    expect(cabin.edge.cloudTriggers.ids).toEqual([]);
    await setDesk('ON');
    await until(() => sub.events.length === 1, 5000, 'the trigger event');
    const { trigger } = sub.events[0].variables;
    expect(trigger).toMatchObject({
      platform: 'state',
      entity_id: DESK,
      from_state: { entity_id: DESK, state: 'off' },
      to_state: { entity_id: DESK, state: 'on', attributes: { friendly_name: 'Desk lamp Desk' } },
    });
    // HA's context of a state trigger: the new state's
    expect(sub.events[0].context).toEqual(trigger.to_state.context);
    await setDesk('OFF'); // `to: on` does not match
    await sub.unsubscribe();
    await until(() => house.edge.cloudTriggers.ids.length === 0, 5000, 'the edge disarmed it');
    await setDesk('ON');
    await setDesk('OFF');
    expect(sub.events).toHaveLength(1);
  });

  it("an invalid trigger is HA's invalid_format, worded by the edge; nothing stays armed", async () => {
    const conn = await haConnect(a.token);
    await expect(subscribeTrigger(conn, { platform: 'state' })).rejects.toMatchObject({
      code: 'invalid_format',
      message: expect.stringContaining('trigger[0]'),
    });
    await expect(subscribeTrigger(conn, { platform: 'no_such_platform' })).rejects.toMatchObject({
      code: 'invalid_format',
    });
    expect([house.edge.cloudTriggers.ids, cabin.edge.cloudTriggers.ids]).toEqual([[], []]);
  });

  it('a trigger naming no entity goes to every edge the caller has; closing the socket disarms it everywhere', async () => {
    const conn = await haConnect(a.token);
    const sub = await subscribeTrigger(conn, { platform: 'event', event_type: 'doorbell' });
    expect([house.edge.cloudTriggers.ids.length, cabin.edge.cloudTriggers.ids.length]).toEqual([1, 1]);
    // fire_event reaches every edge the caller administers: each edge's trigger fires once
    await conn.sendMessagePromise({ type: 'fire_event', event_type: 'doorbell', event_data: { door: 'front' } });
    await until(() => sub.events.length === 2, 5000, 'both edges fired');
    for (const e of sub.events)
      expect(e.variables.trigger).toMatchObject({
        platform: 'event',
        event: { event_type: 'doorbell', data: { door: 'front' } },
      });
    expect(sub.events[0].context).toMatchObject({ id: expect.any(String) });
    const timed = await subscribeTrigger(conn, { platform: 'time_pattern', seconds: '/1' });
    await until(() => timed.events.length >= 2, 5000, 'time pattern fires');
    expect(timed.events[0]).toMatchObject({ variables: { trigger: { platform: 'time_pattern' } }, context: null });
    expect([house.edge.cloudTriggers.ids.length, cabin.edge.cloudTriggers.ids.length]).toEqual([2, 2]);
    conn.close();
    await until(
      () => house.edge.cloudTriggers.ids.length + cabin.edge.cloudTriggers.ids.length === 0,
      5000,
      'both edges disarmed',
    );
  });

  it('another tenant: not_found for the entity, nothing to arm without one; a view-only share gets its entity', async () => {
    const stranger = await haConnect(b.token);
    await expect(subscribeTrigger(stranger, { platform: 'state', entity_id: DESK })).rejects.toMatchObject({
      code: 'not_found',
      message: `Entity ${DESK} not found.`,
    });
    await expect(subscribeTrigger(stranger, { platform: 'time_pattern', seconds: '/1' })).rejects.toMatchObject({
      code: 'home_assistant_error',
      message: 'No edge in scope to subscribe on.',
    });
    // the viewer reaches the lamp through a share only: its entity, not the edge's events
    const viewer = await haConnect(v.token);
    await expect(subscribeTrigger(viewer, { platform: 'event', event_type: 'doorbell' })).rejects.toMatchObject({
      code: 'home_assistant_error',
    });
    const seen = await subscribeTrigger(viewer, { platform: 'state', entity_id: DESK });
    await setDesk('ON');
    await until(() => seen.events.length === 1, 5000, "the viewer's trigger");
    expect(seen.events[0].variables.trigger.to_state.state).toBe('on');
    // the share deleted: the subscription stays (as HA's would) but sends nothing more
    const deleted = await cloud.delete(`/v1/organizations/${org}/shares/${shareId}`, { token: a.token });
    expect(deleted.status, deleted.text).toBe(200);
    const owner = await subscribeTrigger(await haConnect(a.token), { platform: 'state', entity_id: DESK });
    await setDesk('OFF');
    await setDesk('ON');
    await until(() => owner.events.length === 2, 5000, "the owner's fires");
    expect(seen.events).toHaveLength(1);
    await seen.unsubscribe();
    await owner.unsubscribe();
    await setDesk('OFF');
    await until(() => house.edge.cloudTriggers.ids.length === 0, 5000, 'both disarmed');
  });

  it('the edge going offline drops its subscriptions; they are armed again when it is back', async () => {
    const conn = await haConnect(a.token);
    const sub = await subscribeTrigger(conn, { platform: 'state', entity_id: DESK, to: 'on' });
    const before = house.edge.cloudTriggers.ids;
    expect(before).toHaveLength(1);
    // the edge may be back before a poll could see it empty: watch it clear instead
    const cleared = vi.spyOn(house.edge.cloudTriggers, 'clear');
    cloud.cloud.services.tunnel.disconnectLocal(house.id, 'test: tunnel cut', 4000);
    await until(() => cleared.mock.calls.length === 1, 5000, 'dropped with the tunnel');
    cleared.mockRestore();
    await until(() => house.edge.cloudTriggers.ids.length === 1, 15_000, 'armed again after hello');
    expect(house.edge.cloudTriggers.ids).toEqual(before);
    await setDesk('ON');
    await until(() => sub.events.length === 1, 5000, 'the trigger after the reconnect');
    await sub.unsubscribe();
    await setDesk('OFF');
    await until(() => house.edge.cloudTriggers.ids.length === 0, 5000, 'disarmed');
  }, 30_000);
});

describe.skipIf(!redis)('subscribe_trigger with the socket on one replica and the tunnel on another', () => {
  it('the subscription is armed through the other replica and its fires come back', async () => {
    const [A, B] = await startReplicaPair(cleanups, 'ha-triggers');
    const owner = await A.user();
    const { edge } = await pairEdge(B, cleanups, owner.token, 'Cabin');
    const far = await mqttLamp(edge, cleanups, 'desk', 'Desk lamp');
    await until(
      async () => (await A.get(`/v1/entities/states/${DESK}`, { token: owner.token })).body?.state === 'off',
      10_000,
      'lamp mirrored',
    );
    const conn = await haConnect(owner.token, A.url);
    const sub = await subscribeTrigger(conn, { platform: 'state', entity_id: DESK });
    expect(edge.cloudTriggers.ids).toHaveLength(1);
    await far.client.publishAsync('desk/state', 'ON', { qos: 1 });
    await until(() => sub.events.length === 1, 5000, 'the fire relayed from B');
    expect(sub.events[0].variables.trigger).toMatchObject({ platform: 'state', to_state: { state: 'on' } });
    // the tunnel cut on B: A learns of the edge's hello through Redis and arms the trigger again
    const id = edge.cloudTriggers.ids[0];
    const cleared = vi.spyOn(edge.cloudTriggers, 'clear');
    B.cloud.services.tunnel.disconnectLocal(edge.link!.edgeId!, 'test: tunnel cut', 4000);
    await until(() => cleared.mock.calls.length === 1, 5000, 'dropped with the tunnel');
    cleared.mockRestore();
    await until(() => edge.cloudTriggers.ids[0] === id, 15_000, 'armed again from A');
    await far.client.publishAsync('desk/state', 'OFF', { qos: 1 });
    await until(() => sub.events.length === 2, 5000, 'the fire after the reconnect');
    await sub.unsubscribe();
    await until(() => edge.cloudTriggers.ids.length === 0, 5000, 'disarmed through B');
  }, 60_000);
});
