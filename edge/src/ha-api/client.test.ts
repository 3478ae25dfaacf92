import { afterAll, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import WebSocket from 'ws';
import {
  callService,
  createConnection,
  createLongLivedTokenAuth,
  getConfig,
  getServices,
  getStates,
  subscribeConfig,
  subscribeEntities,
  subscribeServices,
  type Connection,
  type HassEntities,
} from 'home-assistant-js-websocket';
import type { Edge } from '../edge.ts';
import { collector, connect, waitFor } from '../testing/edge.ts';
import { useEdge } from '../testing/use-edge.ts';

/** The real home-assistant-js-websocket client (what HA's frontend uses) against a real edge. */

let edge: Edge;
let device: MqttClient;
let conn: Connection;

useEdge({}, async (started) => {
  edge = started;
  device = await connect(edge, await edge.createMqttCredentials({ username: 'plug' }));
  await device.publishAsync(
    'homeassistant/switch/plug/config',
    JSON.stringify({ name: 'Plug', uniq_id: 'plug-1', stat_t: 'plug/state', cmd_t: 'plug/set' }),
    { qos: 1, retain: true },
  );
  await device.publishAsync(
    'homeassistant/sensor/hall/config',
    JSON.stringify({ name: 'Hall temperature', uniq_id: 'hall-t', stat_t: 'hall/t', unit_of_meas: '°C' }),
    { qos: 1, retain: true },
  );
  await waitFor(
    () => edge.registry.getEntity('switch.plug') && edge.registry.getEntity('sensor.hall_temperature'),
    3000,
    'entities',
  );
  await device.publishAsync('plug/state', 'OFF', { qos: 1 });
  await waitFor(() => edge.states.get('switch.plug')?.state === 'off', 3000, 'plug off');
  (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
  const auth = createLongLivedTokenAuth(`http://127.0.0.1:${edge.ports.http}`, edge.tokens.create('ha-client').token);
  conn = await createConnection({ auth });
});
afterAll(async () => {
  conn?.close();
  await device?.endAsync();
});

describe('home-assistant-js-websocket against an edge', () => {
  it('connects with a long-lived token and reports an HA version that enables subscribe_entities', () => {
    expect(conn.haVersion).toBe('2026.11.0');
  });

  it('refuses a wrong token (auth_invalid)', async () => {
    const auth = createLongLivedTokenAuth(`http://127.0.0.1:${edge.ports.http}`, 'sht_not-a-token');
    // ERR_INVALID_AUTH = 2
    await expect(createConnection({ auth })).rejects.toBe(2);
  });

  it('getStates returns HA state objects', async () => {
    const states = await getStates(conn);
    const plug = states.find((s) => s.entity_id === 'switch.plug')!;
    expect(plug).toMatchObject({
      entity_id: 'switch.plug',
      state: 'off',
      attributes: { friendly_name: 'Plug' },
      context: { parent_id: null, user_id: null },
    });
    expect(plug.context.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Date(plug.last_changed).toISOString()).toBe(plug.last_changed);
    expect(plug.last_updated).toBe(edge.states.get('switch.plug')!.last_updated);
    expect(states.find((s) => s.entity_id === 'sensor.hall_temperature')).toMatchObject({
      state: 'unknown',
      attributes: { unit_of_measurement: '°C' },
    });
  });

  it('getConfig returns the config the frontend reads', async () => {
    const config = await getConfig(conn);
    expect(config).toMatchObject({
      version: '2026.11.0',
      state: 'RUNNING',
      location_name: 'Home',
      unit_system: { temperature: '°C', length: 'km' },
    });
    expect(config.components).toEqual(expect.arrayContaining(['mqtt', 'switch', 'sensor', 'api', 'websocket_api']));
    expect(typeof config.time_zone).toBe('string');
  });

  it('getServices lists what the entities offer', async () => {
    const services = await getServices(conn);
    expect(Object.keys(services.switch).sort()).toEqual(expect.arrayContaining(['turn_off', 'turn_on', 'toggle']));
    expect(services.switch.turn_on).toMatchObject({
      name: 'turn on',
      fields: {},
      target: { entity: [{ domain: ['switch'] }] },
    });
  });

  it('callService publishes the MQTT command', async () => {
    const watcher = await connect(edge, await edge.createMqttCredentials({ username: 'watcher', role: 'integration' }));
    try {
      const commands = await collector(watcher, 'plug/set');
      const result = (await callService(conn, 'switch', 'turn_on', undefined, { entity_id: 'switch.plug' })) as {
        context: { id: string };
      };
      expect(result.context.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(await commands.next()).toEqual([{ topic: 'plug/set', payload: 'ON' }]);
    } finally {
      await watcher.endAsync();
    }
  });

  it('callService of an unknown service fails with not_found', async () => {
    await expect(callService(conn, 'switch', 'explode', {}, { entity_id: 'switch.plug' })).rejects.toEqual({
      code: 'not_found',
      message: 'Service switch.explode not found.',
    });
  });

  it('subscribeEntities: a published MQTT state arrives as a diff', async () => {
    let latest: HassEntities | undefined;
    const unsubscribe = subscribeEntities(conn, (entities) => {
      latest = entities;
    });
    try {
      await waitFor(() => latest?.['switch.plug'], 3000, 'initial entities');
      expect(latest!['sensor.hall_temperature'].state).toBe('unknown');
      await device.publishAsync('hall/t', '21.5', { qos: 1 });
      await waitFor(() => latest?.['sensor.hall_temperature'].state === '21.5', 3000, 'diff');
      const edgeState = edge.states.get('sensor.hall_temperature')!;
      expect(latest!['sensor.hall_temperature']).toMatchObject({
        state: '21.5',
        attributes: { friendly_name: 'Hall temperature', unit_of_measurement: '°C' },
        last_changed: edgeState.last_changed,
      });
      await device.publishAsync('plug/state', 'ON', { qos: 1 });
      await waitFor(() => latest?.['switch.plug'].state === 'on', 3000, 'plug on');
    } finally {
      unsubscribe();
    }
  });

  it('lists the entity, device and area registries', async () => {
    const entities = await conn.sendMessagePromise<
      { entity_id: string; platform: string; unique_id: string; device_id: string | null }[]
    >({ type: 'config/entity_registry/list' });
    expect(entities.find((e) => e.entity_id === 'switch.plug')).toMatchObject({
      platform: 'mqtt',
      unique_id: 'plug-1',
      original_name: 'Plug',
      labels: [],
    });
    await device.publishAsync(
      'homeassistant/sensor/box/config',
      JSON.stringify({
        name: 'Box',
        uniq_id: 'box-1',
        stat_t: 'box/t',
        dev: { ids: ['box-dev'], name: 'Box device', mf: 'Acme' },
      }),
      { qos: 1, retain: true },
    );
    await waitFor(
      () =>
        edge.registry.getEntity('sensor.box_device_box') ??
        edge.registry.listEntities().find((e) => e.unique_id === 'box-1'),
      3000,
      'box entity',
    );
    const devices = await conn.sendMessagePromise<{ id: string; name: string; identifiers: [string, string][] }[]>({
      type: 'config/device_registry/list',
    });
    const box = devices.find((d) => d.name === 'Box device')!;
    expect(box).toMatchObject({ manufacturer: 'Acme', identifiers: [['mqtt', 'box-dev']], name_by_user: null });
    const boxEntity = (
      await conn.sendMessagePromise<{ unique_id: string; device_id: string | null }[]>({
        type: 'config/entity_registry/list',
      })
    ).find((e) => e.unique_id === 'box-1');
    expect(boxEntity?.device_id).toBe(box.id);
    expect(await conn.sendMessagePromise({ type: 'config/area_registry/list' })).toEqual([]);
  });

  it('subscribeConfig and subscribeServices load through get_config / get_services and their events', async () => {
    let config: unknown;
    let services: Record<string, unknown> | undefined;
    const offConfig = subscribeConfig(conn, (c) => {
      config = c;
    });
    const offServices = subscribeServices(conn, (s) => {
      services = s;
    });
    try {
      await waitFor(() => config && services, 3000, 'config and services');
      expect(config).toMatchObject({ version: '2026.11.0' });
      expect(Object.keys(services!)).toEqual(expect.arrayContaining(['switch']));
    } finally {
      offConfig();
      offServices();
    }
  });

  it('render_template (subscribeMessage): the result and its listeners, then a re-render when a state changes', async () => {
    const events: { result?: unknown; listeners?: unknown; error?: string }[] = [];
    const unsubscribe = await conn.subscribeMessage<{ result: unknown }>(
      (e) => {
        events.push(e);
      },
      {
        type: 'render_template',
        template: "{{ states('sensor.hall_temperature') }} in {{ where }}",
        variables: { where: 'hall' },
      },
    );
    try {
      await waitFor(() => events.length >= 1, 3000, 'first render');
      const before = edge.states.get('sensor.hall_temperature')!.state ?? 'unknown';
      expect(events[0]).toEqual({
        result: `${before} in hall`,
        listeners: { all: false, domains: [], entities: ['sensor.hall_temperature'], time: false },
      });
      await device.publishAsync('hall/t', '19.25', { qos: 1 });
      await waitFor(() => events.length >= 2, 3000, 're-render');
      expect(events[1].result).toBe('19.25 in hall');
    } finally {
      await unsubscribe();
    }
  });

  it('render_template parses a numeric result; strict turns a broken template into template_error', async () => {
    const events: { result?: unknown }[] = [];
    const unsubscribe = await conn.subscribeMessage<{ result: unknown }>(
      (e) => {
        events.push(e);
      },
      { type: 'render_template', template: '{{ 20 + 1 }}' },
    );
    await waitFor(() => events.length >= 1, 3000, 'render');
    expect(events[0].result).toBe(21);
    await unsubscribe();
    await expect(
      conn.subscribeMessage(() => {}, { type: 'render_template', template: '{% if %}', strict: true }),
    ).rejects.toMatchObject({ code: 'template_error' });
  });

  it('render_template with report_errors sends the error as an event', async () => {
    const events: { error?: string; level?: string }[] = [];
    const unsubscribe = await conn.subscribeMessage<{ error: string }>(
      (e) => {
        events.push(e);
      },
      { type: 'render_template', template: '{% if %}', report_errors: true },
    );
    try {
      await waitFor(() => events.length >= 1, 3000, 'error event');
      expect(events[0]).toMatchObject({ level: 'ERROR' });
      expect(typeof events[0].error).toBe('string');
    } finally {
      await unsubscribe();
    }
  });

  it("history/history_during_period answers HA's compressed format", async () => {
    const start = new Date(Date.now() - 3_600_000).toISOString();
    await device.publishAsync('plug/state', 'OFF', { qos: 1 });
    await waitFor(() => edge.states.get('switch.plug')?.state === 'off', 3000, 'plug off');
    const history = await conn.sendMessagePromise<
      Record<string, { s: string; a?: Record<string, unknown>; lu: number; lc?: number }[]>
    >({
      type: 'history/history_during_period',
      start_time: start,
      entity_ids: ['switch.plug', 'sensor.nothing_here'],
    });
    expect(Object.keys(history)).toEqual(['switch.plug']);
    const plug = history['switch.plug'];
    expect(plug.map((s) => s.s)).toEqual(expect.arrayContaining(['off', 'on']));
    expect(plug.at(-1)).toMatchObject({ s: 'off', a: { friendly_name: 'Plug' } });
    expect(plug.at(-1)!.lu).toBeCloseTo(Date.parse(edge.states.get('switch.plug')!.last_updated!) / 1000, 3);
    const minimal = await conn.sendMessagePromise<Record<string, Record<string, unknown>[]>>({
      type: 'history/history_during_period',
      start_time: start,
      entity_ids: ['switch.plug'],
      minimal_response: true,
      no_attributes: true,
    });
    expect(minimal['switch.plug'][0].a).toEqual({});
    expect(Object.keys(minimal['switch.plug'].at(-1)!).sort()).toEqual(['lu', 's']);
    await expect(
      conn.sendMessagePromise({
        type: 'history/history_during_period',
        start_time: 'yesterday',
        entity_ids: ['switch.plug'],
      }),
    ).rejects.toEqual({ code: 'invalid_start_time', message: 'Invalid start_time' });
    expect(
      await conn.sendMessagePromise({
        type: 'history/history_during_period',
        start_time: new Date(Date.now() + 3_600_000).toISOString(),
        entity_ids: ['switch.plug'],
      }),
    ).toEqual({});
  });

  it('logbook/get_events and logbook/event_stream (past entries, then live ones)', async () => {
    const start = new Date(Date.now() - 3_600_000).toISOString();
    const entries = await conn.sendMessagePromise<
      { when: number; entity_id?: string; state?: string; name?: string; message?: string }[]
    >({ type: 'logbook/get_events', start_time: start });
    expect(entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'Home Assistant', message: 'started', domain: 'homeassistant' }),
        expect.objectContaining({ entity_id: 'switch.plug', state: 'off' }),
      ]),
    );
    expect(typeof entries[0].when).toBe('number');
    const events: { events: { entity_id?: string; state?: string }[]; start_time?: number }[] = [];
    const unsubscribe = await conn.subscribeMessage<(typeof events)[number]>(
      (e) => {
        events.push(e);
      },
      { type: 'logbook/event_stream', start_time: start, entity_ids: ['switch.plug'] },
    );
    try {
      await waitFor(() => events.length >= 1, 3000, 'past entries');
      expect(events[0].start_time).toBeCloseTo(Date.parse(start) / 1000, 3);
      expect(events[0].events.every((e) => e.entity_id === 'switch.plug')).toBe(true);
      await device.publishAsync('plug/state', 'ON', { qos: 1 });
      await waitFor(() => events.length >= 2, 3000, 'live entry');
      expect(events[1].events).toEqual([expect.objectContaining({ entity_id: 'switch.plug', state: 'on' })]);
    } finally {
      await unsubscribe();
    }
  });

  it('validate_config: {valid, error} per part', async () => {
    const result = await conn.sendMessagePromise({
      type: 'validate_config',
      trigger: { platform: 'state', entity_id: 'switch.plug', to: 'on' },
      condition: [{ condition: 'nonsense' }],
    });
    expect(result).toMatchObject({
      trigger: { valid: true, error: null },
      condition: { valid: false, error: expect.any(String) },
    });
  });

  it('subscribe_trigger: a state trigger (HA 2024.10 spelling) and an event trigger fired by execute_script', async () => {
    const fired: { variables: { trigger: Record<string, any> }; context: unknown }[] = [];
    const offState = await conn.subscribeMessage<(typeof fired)[number]>(
      (e) => {
        fired.push(e);
      },
      {
        type: 'subscribe_trigger',
        trigger: { trigger: 'state', entity_id: 'sensor.hall_temperature' },
      },
    );
    const offEvent = await conn.subscribeMessage<(typeof fired)[number]>(
      (e) => {
        fired.push(e);
      },
      {
        type: 'subscribe_trigger',
        trigger: [{ platform: 'event', event_type: 'doorbell' }],
        variables: { source: 'test' },
      },
    );
    try {
      await device.publishAsync('hall/t', '30', { qos: 1 });
      await waitFor(() => fired.length >= 1, 3000, 'state trigger');
      expect(fired[0].variables.trigger).toMatchObject({
        platform: 'state',
        entity_id: 'sensor.hall_temperature',
        to_state: { entity_id: 'sensor.hall_temperature', state: '30' },
      });
      expect(fired[0].variables.trigger.to_state.context.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      // as HA: the fire's context is the new state's
      expect(fired[0].context).toEqual(fired[0].variables.trigger.to_state.context);
      const result = await conn.sendMessagePromise<{ context: { id: string }; response: unknown }>({
        type: 'execute_script',
        variables: { answer: { ok: true } },
        sequence: [
          { event: 'doorbell', event_data: { ring: '{{ answer.ok }}' } },
          { stop: 'done', response_variable: 'answer' },
        ],
      });
      expect(result.response).toEqual({ ok: true });
      expect(result.context.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      await waitFor(() => fired.length >= 2, 3000, 'event trigger');
      expect(fired[1].variables).toMatchObject({
        source: 'test',
        trigger: { platform: 'event', event: { event_type: 'doorbell', data: { ring: true } } },
      });
    } finally {
      await offState();
      await offEvent();
    }
    await expect(
      conn.subscribeMessage(() => {}, { type: 'subscribe_trigger', trigger: { platform: 'sunrise' } }),
    ).rejects.toMatchObject({ code: 'invalid_format' });
  });

  it('execute_script calls a service (the MQTT command arrives); a bad sequence is invalid_format; a failing call home_assistant_error', async () => {
    const watcher = await connect(
      edge,
      await edge.createMqttCredentials({ username: 'watcher2', role: 'integration' }),
    );
    try {
      const commands = await collector(watcher, 'plug/set');
      const result = await conn.sendMessagePromise<{ response: unknown }>({
        type: 'execute_script',
        sequence: [{ service: 'switch.turn_off', target: { entity_id: 'switch.plug' } }],
      });
      expect(result.response).toBeNull();
      expect(await commands.next()).toEqual([{ topic: 'plug/set', payload: 'OFF' }]);
    } finally {
      await watcher.endAsync();
    }
    await expect(
      conn.sendMessagePromise({ type: 'execute_script', sequence: [{ nonsense: true }] }),
    ).rejects.toMatchObject({ code: 'invalid_format' });
    await expect(
      conn.sendMessagePromise({
        type: 'execute_script',
        sequence: [{ service: 'switch.turn_on', target: { entity_id: 'switch.nope' } }],
      }),
    ).rejects.toMatchObject({ code: 'home_assistant_error' });
  });

  it('a command the edge does not know answers unknown_command', async () => {
    await expect(
      conn.sendMessagePromise({ type: 'history/stream', start_time: new Date().toISOString() }),
    ).rejects.toEqual({ code: 'unknown_command', message: 'Unknown command.' });
  });
});
