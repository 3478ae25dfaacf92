import { afterEach, describe, expect, it } from 'vitest';
import { TestCloud, startTestCloud } from '@smarthome/cloud/testing/harness';
import { redisReachable } from '@smarthome/cloud/testing/redis';
import { startEdge, tempDir } from '@smarthome/edge/testing/edge';
import { openAppSocket, pairEdge, startReplicaPair, until, viewOnlyMember, type Cleanups } from './support.ts';

/**
 * Edge bus events through the cloud, end to end and in-process: an automation's `event` action on
 * a paired edge triggers another automation there and reaches the app WebSocket subscribers who
 * may view that whole edge; viewers of a single shared entity and strangers get none of them.
 */
const LAMP = 'light.demo_living_room_lamp';
const redis = await redisReachable();
const cleanups: Cleanups = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An authenticated app WebSocket; `subscribe` answers the subscription id. */
async function appSocket(cloud: TestCloud, token: string) {
  const socket = await openAppSocket(cloud.url, token, cleanups);
  const subscribe = async (eventType?: string) => {
    const answer = await socket.ask({ type: 'subscribe_events', ...(eventType ? { event_type: eventType } : {}) });
    expect(answer.success).toBe(true);
    return answer.id as number;
  };
  /** events received on a subscription, in order */
  const received = (id: number) => socket.inbox.filter((m) => m.type === 'event' && m.id === id).map((m) => m.event);
  return { subscribe, received };
}

describe('edge bus events through the cloud', () => {
  it('an event action triggers another automation and reaches whole-edge viewers subscribed to its type or to all events', async () => {
    const cloud = await startTestCloud();
    cleanups.push(() => cloud.stop());
    const owner = await cloud.user();
    const { edge } = await pairEdge(cloud, cleanups, owner.token, 'Home');
    await until(
      async () =>
        edge.link?.connected && (await cloud.get('/v1/edges', { token: owner.token })).body[0]?.status === 'online',
    );
    const flow = await cloud.post('/v1/config_flow', { token: owner.token, body: { handler: 'demo' } });
    expect(
      (
        await cloud.post(`/v1/config_flow/${flow.body.flowId}/advance`, {
          token: owner.token,
          body: { update_interval: 3600 },
        })
      ).status,
    ).toBe(200);
    await until(async () => (await cloud.get(`/v1/entities/states/${LAMP}`, { token: owner.token })).status === 200);

    // an org member who may view only the lamp (a single shared entity), and a stranger
    const member = await viewOnlyMember(cloud, owner.token, LAMP);
    const stranger = await cloud.user();

    const doorbell = await cloud.post('/v1/automations', {
      token: owner.token,
      body: {
        alias: 'Doorbell',
        trigger: [{ platform: 'webhook' }],
        action: [{ event: 'doorbell', event_data: { button: '{{ trigger.json.button }}' } }],
      },
    });
    expect(doorbell.status).toBe(201);
    const chime = await cloud.post('/v1/automations', {
      token: owner.token,
      body: {
        alias: 'Chime',
        trigger: [{ platform: 'event', event_type: 'doorbell', event_data: { button: 'front' } }],
        action: [
          { service: 'light.turn_off', target: { entity_id: LAMP } },
          { event: 'chimed', event_data: { by: '{{ trigger.event.data.button }}' } },
        ],
      },
    });
    expect(chime.status).toBe(201);

    const ownerSocket = await appSocket(cloud, owner.token);
    const onDoorbell = await ownerSocket.subscribe('doorbell');
    const onOther = await ownerSocket.subscribe('something_else');
    const onAll = await ownerSocket.subscribe();
    const memberSocket = await appSocket(cloud, member.token);
    const memberAll = await memberSocket.subscribe();
    const strangerSocket = await appSocket(cloud, stranger.token);
    const strangerAll = await strangerSocket.subscribe();

    const hook = await fetch(`${cloud.url}/v1/automations/webhook/${doorbell.body.webhook_id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"button":"front"}',
    });
    expect(hook.status).toBe(200);

    const [rang] = await until(() => {
      const r = ownerSocket.received(onDoorbell);
      return r.length ? r : null;
    });
    expect(rang).toEqual({
      event_type: 'doorbell',
      data: { button: 'front' },
      origin: 'LOCAL',
      time_fired: expect.any(String),
      context: { id: expect.any(String), parent_id: expect.any(String), user_id: null },
    });
    // the event triggered Chime on the edge, whose own event reaches the all-events subscription
    const chimed = await until(() => ownerSocket.received(onAll).find((e) => e.event_type === 'chimed'));
    expect(chimed.data).toEqual({ by: 'front' });
    const types = ownerSocket.received(onAll).map((e) => e.event_type);
    expect(types).toEqual(
      expect.arrayContaining(['automation_triggered', 'doorbell', 'call_service', 'state_changed', 'chimed']),
    );
    expect(ownerSocket.received(onAll).find((e) => e.event_type === 'call_service').data).toEqual({
      domain: 'light',
      service: 'turn_off',
      service_data: { entity_id: LAMP },
    });
    expect(
      ownerSocket
        .received(onAll)
        .filter((e) => e.event_type === 'automation_triggered')
        .map((e) => e.data.name)
        .sort(),
    ).toEqual(['Chime', 'Doorbell']);
    expect(ownerSocket.received(onDoorbell).map((e) => e.event_type)).toEqual(['doorbell']);
    expect(ownerSocket.received(onOther)).toEqual([]);

    // the member sees the lamp's state change (its share), not the edge's other events; the stranger nothing
    await until(() =>
      memberSocket.received(memberAll).find((e) => e.event_type === 'state_changed' && e.data.entity_id === LAMP),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(memberSocket.received(memberAll).map((e) => e.event_type)).toEqual(['state_changed']);
    expect(strangerSocket.received(strangerAll)).toEqual([]);
  });

  it.skipIf(!redis)('reaches an app WebSocket on another cloud replica (in-process replicas over Redis)', async () => {
    // two clouds on one database and one Redis prefix; the edge's tunnel on B, the app socket on A
    const [A, B] = await startReplicaPair(cleanups, 'events-replicas');
    const owner = await A.user();
    const created = await A.post('/v1/edges', { token: owner.token, body: { name: 'Home' } });
    expect(created.status).toBe(201);
    const data = tempDir();
    cleanups.push(data.cleanup);
    const edge = await startEdge(data.dir, { cloudUrl: B.url, token: created.body.token });
    cleanups.push(() => edge.stop());
    await until(
      async () =>
        edge.link?.connected && (await A.get('/v1/edges', { token: owner.token })).body[0]?.status === 'online',
    );

    const socket = await appSocket(A, owner.token);
    const onPress = await socket.subscribe('pressed');
    const automation = await edge.features.automations.create({
      alias: 'Press',
      mode: 'single',
      condition: [],
      enabled: true,
      trigger: [{ platform: 'webhook' }],
      action: [{ event: 'pressed', event_data: { n: 1 } }],
    });
    expect(edge.features.automations.handleWebhook(automation.webhook_id!, {}, 'local')).toEqual({ status: 200 });
    const [pressed] = await until(() => {
      const r = socket.received(onPress);
      return r.length ? r : null;
    });
    expect(pressed).toMatchObject({ event_type: 'pressed', data: { n: 1 }, origin: 'LOCAL' });
    await new Promise((r) => setTimeout(r, 200));
    expect(socket.received(onPress)).toHaveLength(1);
  });
});
