import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Edge } from '../../edge.ts';
import { startEdge, tempDir, waitFor } from '../../testing/edge.ts';

/** The demo integration through a whole edge: its local HTTP API over loopback, a local token, SQLite in a temp dir. */
describe('demo integration on a whole edge', () => {
  let dir: { dir: string; cleanup: () => void };
  let edge: Edge;
  let token: string;

  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`http://127.0.0.1:${edge.ports.http}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const demoDeviceNames = async () => {
    const devices = await api('GET', '/v1/devices');
    expect(devices.status).toBe(200);
    return (devices.body as { name: string; manufacturer: string | null }[])
      .filter((d) => d.manufacturer === 'Smarthome Demo')
      .map((d) => d.name)
      .sort();
  };
  /** The demo flow as an app (or the cloud) runs it: start, then advance once. */
  const addDemo = async (input: Record<string, unknown> = {}) => {
    const start = await api('POST', '/v1/config_flow', { handler: 'demo' });
    expect(start).toEqual({
      status: 200,
      body: {
        type: 'form',
        flowId: expect.stringMatching(/^[0-9a-f]{32}$/),
        handler: 'demo',
        stepId: 'user',
        errors: {},
        data_schema: [
          { name: 'name', type: 'string', required: false, default: 'Demo Home' },
          { name: 'update_interval', type: 'integer', required: false, default: 30 },
        ],
      },
    });
    const done = await api('POST', `/v1/config_flow/${start.body.flowId}/advance`, input);
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      type: 'create_entry',
      flowId: start.body.flowId,
      handler: 'demo',
      stepId: 'done',
      title: (input.name as string | undefined) ?? 'Demo Home',
      result: { config_entry_id: expect.any(Number) },
    });
    return done.body.result.config_entry_id as number;
  };

  beforeEach(async () => {
    dir = tempDir();
    edge = await startEdge(dir.dir);
    token = edge.tokens.create('demo-test').token;
  });
  afterEach(async () => {
    await edge.stop();
    dir.cleanup();
  });

  it('runs the demo flow over the local API; DELETE of the entry removes its devices and entities', async () => {
    expect((await api('GET', '/v1/config_flow/handlers')).body).toEqual(
      expect.arrayContaining([{ domain: 'demo', name: 'Demo' }]),
    );
    const entryId = await addDemo();

    const entries = await api('GET', '/v1/config_entries');
    expect(entries.body.filter((e: { domain: string }) => e.domain === 'demo')).toEqual([
      {
        id: entryId,
        domain: 'demo',
        title: 'Demo Home',
        source: 'user',
        state: 'loaded',
        created_at: expect.any(String),
        edge_id: null,
      },
    ]);
    expect(await demoDeviceNames()).toEqual([
      'Coffee Maker Plug',
      'Front Door',
      'Garage Door',
      'Living Room Lamp',
      'Weather Station',
    ]);
    const lamp = await api('GET', '/v1/entities/states/light.demo_living_room_lamp');
    expect(lamp.status).toBe(200);
    expect(lamp.body).toMatchObject({
      entity_id: 'light.demo_living_room_lamp',
      state: 'on',
      attributes: { friendly_name: 'Living Room Lamp', brightness: 80 },
    });

    // A second flow for the single-instance demo aborts at once.
    expect(await api('POST', '/v1/config_flow', { handler: 'demo' })).toEqual({
      status: 200,
      body: { type: 'abort', flowId: expect.any(String), handler: 'demo', reason: 'single_instance_allowed' },
    });

    expect(await api('DELETE', `/v1/config_entries/${entryId}`)).toEqual({
      status: 200,
      body: { message: 'config entry removed' },
    });
    expect(await demoDeviceNames()).toEqual([]);
    expect(edge.registry.listEntities().filter((e) => e.platform === 'demo')).toEqual([]);
    expect(await api('GET', '/v1/entities/states/light.demo_living_room_lamp')).toEqual({
      status: 404,
      body: { message: 'entity light.demo_living_room_lamp not found' },
    });
    expect(
      (await api('GET', '/v1/config_entries')).body.filter((e: { domain: string }) => e.domain === 'demo'),
    ).toEqual([]);
    expect(await api('DELETE', `/v1/config_entries/${entryId}`)).toEqual({
      status: 404,
      body: { message: 'config entry not found' },
    });
    // The services went with the entities.
    expect(await api('POST', '/v1/services/light/turn_on', { entity_id: 'light.demo_living_room_lamp' })).toEqual({
      status: 404,
      body: { message: 'entity light.demo_living_room_lamp not found' },
    });

    // Once removed, the demo can be added again.
    await addDemo({ name: 'Second Home' });
    expect(await demoDeviceNames()).toHaveLength(5);
  });

  it('demo entities answer service calls through the local API, also after a restart', async () => {
    await addDemo({ update_interval: '1' });

    const on = await api('POST', '/v1/services/light/turn_on', {
      entity_id: 'light.demo_living_room_lamp',
      brightness: 100,
    });
    expect(on.status).toBe(200);
    expect(on.body.changed_states).toEqual([
      expect.objectContaining({
        entity_id: 'light.demo_living_room_lamp',
        state: 'on',
        attributes: expect.objectContaining({ brightness: 100 }),
      }),
    ]);
    const lamp = await api('GET', '/v1/entities/states/light.demo_living_room_lamp');
    expect(lamp.body).toMatchObject({
      state: 'on',
      attributes: { friendly_name: 'Living Room Lamp', brightness: 100, color_mode: 'brightness' },
    });

    expect((await api('POST', '/v1/services/light/toggle', { entity_id: 'light.demo_living_room_lamp' })).status).toBe(
      200,
    );
    expect((await api('GET', '/v1/entities/states/light.demo_living_room_lamp')).body).toMatchObject({
      state: 'off',
      attributes: { brightness: null },
    });

    expect((await api('POST', '/v1/services/switch/turn_off', { entity_id: 'switch.demo_coffee_maker' })).status).toBe(
      200,
    );
    expect((await api('GET', '/v1/entities/states/switch.demo_coffee_maker')).body.state).toBe('off');
    expect((await api('POST', '/v1/services/switch/toggle', { entity_id: 'switch.demo_coffee_maker' })).status).toBe(
      200,
    );
    expect((await api('GET', '/v1/entities/states/switch.demo_coffee_maker')).body.state).toBe('on');

    expect((await api('POST', '/v1/services/cover/open_cover', { entity_id: 'cover.demo_garage_door' })).status).toBe(
      200,
    );
    expect((await api('GET', '/v1/entities/states/cover.demo_garage_door')).body).toMatchObject({
      state: 'open',
      attributes: { current_position: 100 },
    });
    expect(
      (
        await api('POST', '/v1/services/cover/set_cover_position', {
          entity_id: 'cover.demo_garage_door',
          position: 40,
        })
      ).status,
    ).toBe(200);
    expect((await api('GET', '/v1/entities/states/cover.demo_garage_door')).body).toMatchObject({
      state: 'open',
      attributes: { current_position: 40 },
    });
    expect((await api('POST', '/v1/services/cover/close_cover', { entity_id: 'cover.demo_garage_door' })).status).toBe(
      200,
    );
    expect((await api('GET', '/v1/entities/states/cover.demo_garage_door')).body).toMatchObject({
      state: 'closed',
      attributes: { current_position: 0 },
    });

    // Bad data, a service the domain lacks, an entity that does not exist.
    expect(
      await api('POST', '/v1/services/light/turn_on', { entity_id: 'light.demo_living_room_lamp', brightness: 300 }),
    ).toEqual({ status: 400, body: { message: 'brightness must be a number from 0 to 255' } });
    expect(
      (
        await api('POST', '/v1/services/cover/set_cover_position', {
          entity_id: 'cover.demo_garage_door',
          position: 'half',
        })
      ).status,
    ).toBe(400);
    expect(
      (await api('POST', '/v1/services/sensor/turn_on', { entity_id: 'sensor.demo_outdoor_temperature' })).status,
    ).toBe(400);
    expect((await api('POST', '/v1/services/light/turn_on', { entity_id: 'light.nope' })).status).toBe(404);

    // The edge is the same after a restart: entry loaded again, services answered again.
    await edge.stop();
    edge = await startEdge(dir.dir);
    const again = await api('POST', '/v1/services/light/turn_on', {
      entity_id: 'light.demo_living_room_lamp',
      brightness: 42,
    });
    expect(again.status).toBe(200);
    expect((await api('GET', '/v1/entities/states/light.demo_living_room_lamp')).body).toMatchObject({
      state: 'on',
      attributes: { brightness: 42 },
    });
  });
  it('keeps demo states and the registry as they were across a restart', async () => {
    const LAMP = 'light.demo_living_room_lamp';
    const TEMPERATURE = 'sensor.demo_outdoor_temperature';
    await addDemo({ update_interval: '1' });
    // the lamp is put somewhere by a service call; the script moves the sensors on
    expect((await api('POST', '/v1/services/light/turn_off', { entity_id: LAMP })).status).toBe(200);
    await waitFor(() => edge.states.get(TEMPERATURE)?.state !== '18', 3000, 'a demo tick');
    await edge.stop();
    // read after stop: the demo timer is gone, nothing moves any more
    const demoIds = edge.registry
      .listEntities()
      .filter((e) => e.platform === 'demo')
      .map((e) => e.entity_id)
      .sort();
    const view = (e: Edge) => ({
      devices: e.registry.listDevices().filter((d) => d.manufacturer === 'Smarthome Demo'),
      entities: e.registry.listEntities().filter((x) => x.platform === 'demo'),
      states: demoIds.map((id) => e.states.get(id)),
    });
    const before = view(edge);
    expect(before.states.find((s) => s?.entity_id === LAMP)).toMatchObject({ state: 'off' });
    expect(before.states.find((s) => s?.entity_id === TEMPERATURE)?.state).not.toBe('18');

    edge = await startEdge(dir.dir);
    expect(view(edge)).toEqual(before);
    // the lamp stays where the service call put it while the script ticks on
    const lampChanged = edge.states.get(LAMP)!.last_changed;
    const temperature = edge.states.get(TEMPERATURE)!.state;
    await waitFor(() => edge.states.get(TEMPERATURE)?.state !== temperature, 3000, 'a demo tick after the restart');
    expect(edge.states.get(LAMP)).toMatchObject({ state: 'off', last_changed: lampChanged });
  });
});
