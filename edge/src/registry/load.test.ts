import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../bus.ts';
import { devices, entities } from '../db/schema.ts';
import { openTempDatabase } from '../testing/edge.ts';
import { loadDeviceRows, loadEntityRows } from './load.ts';
import { Registry } from './registry.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

describe('registry start-up load', () => {
  it('reads every device and entity row exactly as drizzle does, settings and JSON included', () => {
    const database = openTempDatabase(cleanups);
    const registry = new Registry(database, new EventBus());
    registry.load();
    const entry = registry.addConfigEntry({ domain: 'mqtt', title: 'MQTT', source: 'user' });
    const dev = registry.upsertDevice({
      identifiers: ['probe', 'mac:01'],
      name: 'Probe',
      manufacturer: 'Acme',
      model: 'P1',
      sw_version: '1.2',
      config_entry_id: entry.id,
      via_device: 'hub',
      suggested_area: 'Kitchen',
    });
    registry.upsertEntity({
      platform: 'mqtt',
      unique_id: 'probe_t',
      domain: 'sensor',
      name: 'Temperature',
      suggested_object_id: 'probe temperature',
      config_entry_id: entry.id,
      device_registry_id: dev.id,
      config: { state_topic: 'probe/t', nested: { unit: '°C', list: [1, null, true] } },
      entity_category: 'diagnostic',
    });
    const plain = registry.upsertEntity({
      platform: 'mqtt',
      unique_id: 'plain',
      domain: 'switch',
      name: 'Plain',
      suggested_object_id: 'plain',
    });
    registry.setDisabledBy(plain.entity_id, 'user');
    registry.setEntitySettings('sensor.probe_temperature', {
      name_by_user: 'Kitchen probe',
      icon: 'mdi:thermometer',
      area_id: 'kitchen',
      hidden_by: 'user',
    });

    const viaDrizzleDevices = database.db.select().from(devices).all();
    const viaDrizzleEntities = database.db.select().from(entities).all();
    expect(viaDrizzleDevices).toHaveLength(2);
    expect(viaDrizzleEntities).toHaveLength(2);
    expect(loadDeviceRows(database.sqlite)).toEqual(viaDrizzleDevices);
    expect(loadEntityRows(database.sqlite)).toEqual(viaDrizzleEntities);
    expect(loadEntityRows(database.sqlite)[0].config).toEqual({
      state_topic: 'probe/t',
      nested: { unit: '°C', list: [1, null, true] },
    });

    const reloaded = new Registry(database, new EventBus());
    reloaded.load();
    expect(reloaded.entitiesWithConfig()).toEqual(registry.entitiesWithConfig());
    expect(reloaded.listDevices()).toEqual(registry.listDevices());
    expect(reloaded.deviceLinks(dev.id)).toEqual(registry.deviceLinks(dev.id));
    expect(reloaded.deviceLinks(dev.id).via_device_id).not.toBeNull();
  });
});
