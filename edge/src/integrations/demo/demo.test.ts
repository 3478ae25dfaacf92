import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigFlowComponent } from '../../config-flow/component.ts';
import type {
  InMemoryConfigEntryStore,
  InMemoryDeviceRegistry,
  InMemoryServicePlatforms,
  InMemoryStates,
} from '../../config-flow/memory-ports.ts';
import { serveConfigFlows, type ConfigFlowHarness } from '../../testing/config-flow.ts';
import type { TestServer } from '../../testing/server.ts';
import { createDemoIntegration, DEMO_DEVICES } from './index.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const EXPECTED_ENTITIES = [
  'binary_sensor.demo_front_door',
  'cover.demo_garage_door',
  'light.demo_living_room_lamp',
  'sensor.demo_outdoor_humidity',
  'sensor.demo_outdoor_temperature',
  'switch.demo_coffee_maker',
];

describe('demo integration', () => {
  let h: ConfigFlowHarness<object>;
  let server: TestServer;
  let component: ConfigFlowComponent;
  let store: InMemoryConfigEntryStore;
  let registry: InMemoryDeviceRegistry;
  let states: InMemoryStates;
  let services: InMemoryServicePlatforms;
  let clock: number;
  // read when an entry is set up: a test that checks the tick-0 states slows the script down first,
  // else a loaded machine ticks before the assertions run
  let demo: { intervalMs: number };

  beforeEach(async () => {
    clock = 0;
    demo = { intervalMs: 15 };
    h = await serveConfigFlows({
      integrations: () => [createDemoIntegration(demo)],
      flowTtlMs: 60_000,
      now: () => clock,
    });
    ({ server, component, store, registry, states, services } = h);
  });
  afterEach(() => h.close());

  const createEntry = async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'demo' });
    const done = await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, {
      name: 'My Demo',
      update_interval: '5',
    });
    expect(done.body).toMatchObject({ type: 'create_entry', stepId: 'done', title: 'My Demo' });
    return done.body.result.config_entry_id as number;
  };

  it('answers errors for a wrong update interval', async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'demo' });
    expect(start.body).toMatchObject({ type: 'form', stepId: 'user', errors: {} });
    expect(start.body.data_schema).toEqual([
      { name: 'name', type: 'string', required: false, default: 'Demo Home' },
      { name: 'update_interval', type: 'integer', required: false, default: 30 },
    ]);
    const flowId = start.body.flowId;
    expect(
      (await server.json('POST', `/v1/config_flow/${flowId}/advance`, { update_interval: 0 })).body.errors,
    ).toEqual({ update_interval: 'invalid_interval' });
    expect(
      (await server.json('POST', `/v1/config_flow/${flowId}/advance`, { update_interval: 'soon' })).body.errors,
    ).toEqual({ update_interval: 'invalid_integer' });
    expect(store.list()).toEqual([]);
  });

  it("creates devices of several domains with the script's tick-0 states", async () => {
    demo.intervalMs = 3_600_000;
    const entryId = await createEntry();
    expect(store.get(entryId)).toMatchObject({
      domain: 'demo',
      title: 'My Demo',
      state: 'loaded',
      data: { update_interval: 5 },
    });
    expect(registry.devices.size).toBe(DEMO_DEVICES.length);
    expect([...registry.devices.values()].map((d) => d.name).sort()).toEqual([
      'Coffee Maker Plug',
      'Front Door',
      'Garage Door',
      'Living Room Lamp',
      'Weather Station',
    ]);
    expect([...registry.entities.keys()].sort()).toEqual(EXPECTED_ENTITIES);
    for (const e of registry.entities.values()) {
      expect(e.config_entry_id).toBe(entryId);
      expect(registry.devices.get(e.device_registry_id!)?.config_entry_id).toBe(entryId);
    }
    // Initial states (tick 0) are published at setup.
    expect(states.states.get('light.demo_living_room_lamp')).toMatchObject({
      state: 'on',
      attributes: { friendly_name: 'Living Room Lamp', brightness: 80 },
    });
    expect(states.states.get('cover.demo_garage_door')).toMatchObject({
      state: 'closed',
      attributes: { current_position: 0 },
    });
    expect(states.states.get('sensor.demo_outdoor_temperature')).toMatchObject({
      state: '18',
      attributes: { unit_of_measurement: '°C' },
    });
    expect(states.states.get('switch.demo_coffee_maker')?.state).toBe('on');
    expect(states.states.get('binary_sensor.demo_front_door')?.state).toBe('off');
  });

  it('changes the states while the entry is loaded, and removes them with the entry', async () => {
    const entryId = await createEntry();
    expect([...registry.entities.keys()].sort()).toEqual(EXPECTED_ENTITIES);
    await sleep(120);
    const cover = states.states.get('cover.demo_garage_door')!;
    expect(cover.changes).toBeGreaterThan(3);
    const seen = new Set<string>();
    for (let i = 0; i < 20 && seen.size < 2; i++) {
      seen.add(states.states.get('switch.demo_coffee_maker')!.state);
      await sleep(15);
    }
    expect(seen).toEqual(new Set(['on', 'off']));

    expect(await server.json('DELETE', `/v1/config_entries/${entryId}`)).toEqual({
      status: 200,
      body: { message: 'config entry removed' },
    });
    expect(registry.devices.size).toBe(0);
    expect(registry.entities.size).toBe(0);
    expect(states.states.size).toBe(0);
    // The timer is stopped: nothing comes back.
    await sleep(60);
    expect(states.states.size).toBe(0);
    expect(await server.json('GET', '/v1/config_entries')).toEqual({ status: 200, body: [] });
  });

  it('answers service calls like real devices: the state changes at once and stays, the script keeps running', async () => {
    const entryId = await createEntry();
    const demo = services.platforms.get('demo')!;
    expect(demo.supportedServices('light')).toEqual(['toggle', 'turn_off', 'turn_on']);
    expect(demo.supportedServices('switch')).toEqual(['toggle', 'turn_off', 'turn_on']);
    expect(demo.supportedServices('cover')).toEqual([
      'close_cover',
      'open_cover',
      'set_cover_position',
      'stop_cover',
      'toggle',
    ]);
    expect(demo.supportedServices('sensor')).toEqual([]);
    const state = (id: string) => states.states.get(id)!;

    await services.call('demo', 'light.demo_living_room_lamp', 'turn_on', { brightness: 100 });
    expect(state('light.demo_living_room_lamp')).toMatchObject({
      state: 'on',
      attributes: {
        friendly_name: 'Living Room Lamp',
        brightness: 100,
        color_mode: 'brightness',
        supported_color_modes: ['brightness'],
      },
    });
    await services.call('demo', 'light.demo_living_room_lamp', 'toggle');
    expect(state('light.demo_living_room_lamp')).toMatchObject({
      state: 'off',
      attributes: { brightness: null, color_mode: null },
    });
    await services.call('demo', 'light.demo_living_room_lamp', 'turn_on', { brightness_pct: 50 });
    expect(state('light.demo_living_room_lamp')).toMatchObject({ state: 'on', attributes: { brightness: 128 } });
    await services.call('demo', 'light.demo_living_room_lamp', 'turn_off');
    await services.call('demo', 'light.demo_living_room_lamp', 'toggle');
    expect(state('light.demo_living_room_lamp')).toMatchObject({ state: 'on', attributes: { brightness: 255 } });
    await expect(
      services.call('demo', 'light.demo_living_room_lamp', 'turn_on', { brightness: 300 }),
    ).rejects.toMatchObject({ name: 'ServiceError', message: 'brightness must be a number from 0 to 255' });
    expect(state('light.demo_living_room_lamp').attributes.brightness).toBe(255);

    await services.call('demo', 'switch.demo_coffee_maker', 'turn_off');
    expect(state('switch.demo_coffee_maker').state).toBe('off');
    await services.call('demo', 'switch.demo_coffee_maker', 'toggle');
    expect(state('switch.demo_coffee_maker').state).toBe('on');

    await services.call('demo', 'cover.demo_garage_door', 'open_cover');
    expect(state('cover.demo_garage_door')).toMatchObject({
      state: 'open',
      attributes: { current_position: 100, device_class: 'garage', supported_features: 15 },
    });
    await services.call('demo', 'cover.demo_garage_door', 'set_cover_position', { position: 30 });
    expect(state('cover.demo_garage_door')).toMatchObject({ state: 'open', attributes: { current_position: 30 } });
    await services.call('demo', 'cover.demo_garage_door', 'close_cover');
    expect(state('cover.demo_garage_door')).toMatchObject({ state: 'closed', attributes: { current_position: 0 } });
    await expect(services.call('demo', 'cover.demo_garage_door', 'set_cover_position', {})).rejects.toThrow(
      'position is required',
    );

    // Ticks go on (the sensors change) but the controlled entities stay where they were put.
    const held = {
      light: state('light.demo_living_room_lamp').changes,
      sw: state('switch.demo_coffee_maker').changes,
      cover: state('cover.demo_garage_door').changes,
    };
    const temperature = state('sensor.demo_outdoor_temperature').changes;
    await sleep(100);
    expect(state('sensor.demo_outdoor_temperature').changes).toBeGreaterThan(temperature + 2);
    expect(state('light.demo_living_room_lamp')).toMatchObject({
      state: 'on',
      attributes: { brightness: 255 },
      changes: held.light,
    });
    expect(state('switch.demo_coffee_maker')).toMatchObject({ state: 'on', changes: held.sw });
    expect(state('cover.demo_garage_door')).toMatchObject({ state: 'closed', changes: held.cover });

    // Removing the entry unregisters the platform.
    await server.json('DELETE', `/v1/config_entries/${entryId}`);
    expect(services.platforms.size).toBe(0);
  });

  it('allows a single demo entry (abort)', async () => {
    await createEntry();
    const again = await server.json('POST', '/v1/config_flow', { handler: 'demo' });
    expect(again).toEqual({
      status: 200,
      body: { type: 'abort', flowId: expect.any(String), handler: 'demo', reason: 'single_instance_allowed' },
    });
  });

  it('sets stored entries up again after a restart with the same entity ids', async () => {
    const entryId = await createEntry();
    await component.stop();
    const before = states.states.get('cover.demo_garage_door')!.changes;
    await sleep(50);
    expect(states.states.get('cover.demo_garage_door')!.changes).toBe(before);
    component = await h.restart();
    expect([...registry.entities.keys()].sort()).toEqual(EXPECTED_ENTITIES);
    expect(registry.devices.size).toBe(DEMO_DEVICES.length);
    expect(component.entries.isLoaded(entryId)).toBe(true);
  });

  it('expires an abandoned flow', async () => {
    const start = await server.json('POST', '/v1/config_flow', { handler: 'demo' });
    clock += 60_001;
    expect(await server.json('POST', `/v1/config_flow/${start.body.flowId}/advance`, {})).toEqual({
      status: 404,
      body: { message: 'flow not found' },
    });
    expect(registry.devices.size).toBe(0);
  });
});
