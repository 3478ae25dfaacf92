import { describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { Edge } from '../edge.ts';
import { recordingLogger, waitFor } from '../testing/edge.ts';
import { edgeWithDevice, publish } from './fixture.ts';

/** migrate_discovery: an entity moves between single-component and device-based discovery, keeping its id and state. */

let edge: Edge;
let device: MqttClient;
const log = recordingLogger();

edgeWithDevice({ username: 'dev' }, (started) => ({ edge, device } = started), { logger: log });

const pub = (topic: string, payload: unknown, retain = true) => publish(device, topic, payload, retain);
const state = () => edge.states.get('sensor.mig_temperature');
const SINGLE = 'homeassistant/sensor/mig/temp/config';
const dev = { ids: ['mig-1'], name: 'Mig' };

describe('migrate_discovery', () => {
  it('moves a single-component entity to device-based discovery; clearing the old topic keeps it', async () => {
    await pub(SINGLE, {
      name: 'Temperature',
      uniq_id: 'mig-temp',
      stat_t: 'mig/temp',
      dev,
      o: { name: 'ESPHome', sw: '2024.6.1' },
    });
    await waitFor(() => edge.registry.getEntity('sensor.mig_temperature'), 3000, 'entity');
    // as HA does, the log names where a config comes from
    expect(log.lines.map((l) => l.msg)).toContain(
      `mqtt discovery: added sensor.mig_temperature (${SINGLE}) from ESPHome 2024.6.1`,
    );
    await pub('mig/temp', '20.5', false);
    await waitFor(() => state()?.state === '20.5', 3000, 'state');

    await pub(SINGLE, { migrate_discovery: true });
    await new Promise((r) => setTimeout(r, 50));
    expect(state()?.state).toBe('20.5');
    await pub('homeassistant/device/mig/config', {
      dev,
      o: { name: 'test' },
      cmps: { temp: { p: 'sensor', name: 'Temperature', uniq_id: 'mig-temp', stat_t: 'mig/temp' } },
    });
    await waitFor(
      () =>
        (edge.registry.getEntity('sensor.mig_temperature')?.config as { discovery_key?: string }).discovery_key ===
        'homeassistant/device/mig/config#temp',
      3000,
      'taken over',
    );
    expect(log.lines.map((l) => l.msg)).toContain(
      'mqtt discovery: homeassistant/sensor/mig/temp/config migrates to another discovery topic',
    );
    await pub(SINGLE, '');
    await new Promise((r) => setTimeout(r, 50));
    expect(
      edge.registry
        .listEntities()
        .filter((e) => e.unique_id === 'mig-temp')
        .map((e) => e.entity_id),
    ).toEqual(['sensor.mig_temperature']);
    expect(state()?.state).toBe('20.5');
    await pub('mig/temp', '21', false);
    await waitFor(() => state()?.state === '21', 3000, 'state after the move');
  });

  it('without a migration, another topic claiming the unique_id is refused', async () => {
    await pub('homeassistant/sensor/other/temp/config', { name: 'Other', uniq_id: 'mig-temp', stat_t: 'other/temp' });
    await new Promise((r) => setTimeout(r, 100));
    expect(edge.registry.getEntity('sensor.mig_temperature')?.config).toMatchObject({
      discovery_key: 'homeassistant/device/mig/config#temp',
    });
    expect(edge.registry.getEntity('sensor.other')).toBeUndefined();
  });
});
