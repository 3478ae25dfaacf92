import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../bus.ts';
import { openTempDatabase } from '../testing/edge.ts';
import { Registry, slugify } from './registry.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function open() {
  const database = openTempDatabase(cleanups);
  const bus = new EventBus();
  const events: string[] = [];
  bus.onAny((type) => events.push(type));
  const registry = new Registry(database, bus);
  registry.load();
  return { database, registry, events, bus };
}

describe('registry', () => {
  it('slugifies names into object ids', () => {
    expect(slugify('Küche Deckenlicht #2')).toBe('kuche_deckenlicht_2');
    expect(slugify('  --  ')).toBe('unnamed');
  });

  it('assigns unique entity_ids once and keeps them on update', () => {
    const { registry, events } = open();
    const a = registry.upsertEntity({
      platform: 'mqtt',
      unique_id: 'a',
      domain: 'light',
      name: 'Lamp',
      suggested_object_id: 'Lamp',
    });
    const b = registry.upsertEntity({
      platform: 'mqtt',
      unique_id: 'b',
      domain: 'light',
      name: 'Lamp',
      suggested_object_id: 'Lamp',
    });
    expect([a.entity_id, b.entity_id]).toEqual(['light.lamp', 'light.lamp_2']);
    const renamed = registry.upsertEntity({
      platform: 'mqtt',
      unique_id: 'a',
      domain: 'light',
      name: 'Desk',
      suggested_object_id: 'Desk',
    });
    expect(renamed).toMatchObject({ entity_id: 'light.lamp', name: 'Desk', id: a.id });
    expect(events).toEqual(['entity_upsert', 'entity_upsert', 'entity_upsert']);
    // unchanged upsert: no event
    registry.upsertEntity({
      platform: 'mqtt',
      unique_id: 'a',
      domain: 'light',
      name: 'Desk',
      suggested_object_id: 'Desk',
    });
    expect(events).toHaveLength(3);
  });

  it('matches devices by any identifier and merges them', () => {
    const { registry } = open();
    const d1 = registry.upsertDevice({ identifiers: ['mac:1'], name: 'Plug', manufacturer: 'Acme' });
    const d2 = registry.upsertDevice({ identifiers: ['zigbee:9', 'mac:1'], name: 'Plug', model: 'P1' });
    expect(d2.id).toBe(d1.id);
    expect(d2).toMatchObject({ identifiers: ['mac:1', 'zigbee:9'], manufacturer: 'Acme', model: 'P1', user_id: null });
    expect(registry.findDevice(['zigbee:9'])?.id).toBe(d1.id);
  });

  it('persists everything and removes a config entry with its devices and entities', () => {
    const { registry, database, bus } = open();
    const entry = registry.addConfigEntry({ domain: 'demo', title: 'Demo', source: 'user' });
    const dev = registry.upsertDevice({ identifiers: ['x'], name: 'X', config_entry_id: entry.id });
    registry.upsertEntity({
      platform: 'demo',
      unique_id: 'u',
      domain: 'sensor',
      name: 'T',
      suggested_object_id: 'T',
      config_entry_id: entry.id,
      device_registry_id: dev.id,
    });
    const reloaded = new Registry(database, bus);
    reloaded.load();
    expect(reloaded.listEntities()).toEqual(registry.listEntities());
    expect(reloaded.listDevices()).toEqual(registry.listDevices());
    expect(reloaded.listConfigEntries()).toEqual([
      expect.objectContaining({ domain: 'demo', title: 'Demo', state: 'loaded' }),
    ]);
    expect(registry.removeConfigEntry(entry.id)).toBe(true);
    expect(registry.listEntities()).toEqual([]);
    expect(registry.listDevices()).toEqual([]);
    reloaded.load();
    expect(reloaded.listConfigEntries()).toEqual([]);
  });
});
