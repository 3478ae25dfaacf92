import { beforeAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { Edge } from '../edge.ts';
import { collector, connect, haSession, waitFor } from '../testing/edge.ts';
import { edgeWithDevice } from './fixture.ts';

/**
 * enabled_by_default: false, as HA: the entity is in the entity registry with disabled_by
 * "integration" and has no state anywhere (get_states, subscribe_entities, REST and v1 state
 * lists); config/entity_registry/update {disabled_by: null} enables it at once (HA needs a
 * reload): it takes its topic's retained message, then every new one. Over a real broker,
 * HTTP and WebSocket.
 */

let edge: Edge;
let device: MqttClient;
let token: string;

edgeWithDevice({ username: 'z2m' }, (started) => ({ edge, device } = started));
beforeAll(() => {
  token = edge.tokens.create('disabled').token;
});

const get = async (path: string) => {
  const res = await fetch(`http://127.0.0.1:${edge.ports.http}${path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: (await res.json()) as any };
};

describe('disabled MQTT entities', () => {
  it('have no state until config/entity_registry/update enables them; then they listen at once', async () => {
    await device.publishAsync('zigbee2mqtt/plug', JSON.stringify({ linkquality: 42 }), { qos: 1, retain: true });
    await device.publishAsync(
      'homeassistant/sensor/0xplug/linkquality/config',
      JSON.stringify({
        name: 'Linkquality',
        unique_id: '0xplug_linkquality',
        state_topic: 'zigbee2mqtt/plug',
        value_template: '{{ value_json.linkquality }}',
        enabled_by_default: false,
        entity_category: 'diagnostic',
        device: { identifiers: ['zigbee2mqtt_0xplug'], name: 'Plug' },
      }),
      { qos: 1, retain: true },
    );
    const id = 'sensor.plug_linkquality';
    await waitFor(() => edge.registry.getEntity(id), 3000, id);
    await new Promise((r) => setTimeout(r, 100));

    const ha = await haSession(edge, token);
    const registry = await ha.call({ type: 'config/entity_registry/list' });
    expect(registry.result.find((e: any) => e.entity_id === id)).toMatchObject({ disabled_by: 'integration' });
    expect((await ha.call({ type: 'get_states' })).result.map((s: any) => s.entity_id)).not.toContain(id);
    await ha.call({ type: 'subscribe_entities' });
    const initial = await waitFor(() => ha.messages.find((m) => m.type === 'event' && m.event.a), 3000, 'initial');
    expect(Object.keys(initial.event.a)).not.toContain(id);
    expect((await get('/api/states')).body.map((s: any) => s.entity_id)).not.toContain(id);
    expect((await get(`/api/states/${id}`)).status).toBe(404);
    expect((await get('/v1/entities/states')).body.map((s: any) => s.entity_id)).not.toContain(id);
    expect((await get(`/v1/entities/states/${id}`)).status).toBe(404);

    // enabled: the retained message is its state at once, later messages follow
    const enabled = await ha.call({ type: 'config/entity_registry/update', entity_id: id, disabled_by: null });
    expect(enabled).toMatchObject({ success: true, result: { entity_entry: { entity_id: id, disabled_by: null } } });
    await waitFor(() => edge.states.get(id)?.state === '42' || undefined, 3000, 'retained state');
    await waitFor(
      () =>
        ha.messages.find(
          (m) => m.type === 'event' && (m.event.a?.[id]?.s === '42' || m.event.c?.[id]?.['+']?.s === '42'),
        ),
      3000,
      'subscribe_entities add',
    );
    await device.publishAsync('zigbee2mqtt/plug', JSON.stringify({ linkquality: 57 }), { qos: 1 });
    await waitFor(() => edge.states.get(id)?.state === '57' || undefined, 3000, 'next state');
    expect((await get(`/v1/entities/states/${id}`)).body.state).toBe('57');

    // disabled by the user: the state is gone (subscribe_entities says removed) and messages are ignored
    const disabled = await ha.call({ type: 'config/entity_registry/update', entity_id: id, disabled_by: 'user' });
    expect(disabled.result.entity_entry.disabled_by).toBe('user');
    await waitFor(() => ha.messages.find((m) => m.type === 'event' && m.event.r?.includes(id)), 3000, 'removed');
    await device.publishAsync('zigbee2mqtt/plug', JSON.stringify({ linkquality: 60 }), { qos: 1 });
    await new Promise((r) => setTimeout(r, 100));
    expect(edge.states.get(id)).toBeUndefined();
    expect(edge.states.raw(id)).toBeUndefined();

    // what it cannot do answers a clear error
    expect(
      await ha.call({ type: 'config/entity_registry/update', entity_id: 'sensor.nope', disabled_by: null }),
    ).toMatchObject({ success: false, error: { code: 'not_found' } });
    expect(await ha.call({ type: 'config/entity_registry/update', entity_id: id, aliases: ['x'] })).toMatchObject({
      success: false,
      error: { code: 'invalid_format' },
    });
    ha.close();
  });

  it('a service call on a disabled entity is refused, nothing is published', async () => {
    await device.publishAsync(
      'homeassistant/switch/0xplug/child_lock/config',
      JSON.stringify({
        name: 'Child lock',
        unique_id: '0xplug_child_lock',
        command_topic: 'zigbee2mqtt/plug/set/child_lock',
        state_topic: 'zigbee2mqtt/plug',
        value_template: '{{ value_json.child_lock }}',
        enabled_by_default: false,
        device: { identifiers: ['zigbee2mqtt_0xplug'], name: 'Plug' },
      }),
      { qos: 1, retain: true },
    );
    await waitFor(() => edge.registry.getEntity('switch.plug_child_lock'), 3000, 'switch');
    const watcher = await connect(edge, await edge.createMqttCredentials({ username: 'watcher', role: 'integration' }));
    const inbox = await collector(watcher, 'zigbee2mqtt/plug/set/#');
    await expect(edge.callService('switch', 'turn_on', 'switch.plug_child_lock', {})).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 100));
    expect(inbox.messages).toEqual([]);
    await watcher.endAsync();
  });
});
