import { afterEach, describe, expect, it } from 'vitest';
import { EventBus } from '../bus.ts';
import { EdgeDatabase } from '../db/database.ts';
import { tempDir } from '../testing/edge.ts';
import { Registry, toRecord } from './registry.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function open(dir: string) {
  const database = new EdgeDatabase(dir);
  database.open();
  cleanups.push(() => database.close());
  const bus = new EventBus();
  const events: [string, unknown][] = [];
  bus.onAny((type, e) => events.push([type, e]));
  const registry = new Registry(database, bus);
  registry.load();
  return { registry, events };
}

const sensor = (entity_category: 'config' | 'diagnostic' | null) => ({
  platform: 'mqtt',
  unique_id: 'lq',
  domain: 'sensor',
  name: 'Linkquality',
  suggested_object_id: 'linkquality',
  entity_category,
});

describe('entity registry settings (HA: entity_category, area_id, name, icon, hidden_by)', () => {
  it('keeps the integration’s entity_category and the user’s settings, announces them and survives a restart', () => {
    const tmp = tempDir();
    cleanups.push(tmp.cleanup);
    const { registry, events } = open(tmp.dir);
    const created = registry.upsertEntity(sensor('diagnostic'));
    expect(toRecord(created)).toMatchObject({ entity_id: 'sensor.linkquality', entity_category: 'diagnostic' });
    // the integration's next config decides entity_category; an unchanged one is no event
    events.length = 0;
    registry.upsertEntity(sensor('diagnostic'));
    expect(events).toEqual([]);
    registry.upsertEntity(sensor('config'));
    expect(registry.getEntity('sensor.linkquality')?.entity_category).toBe('config');

    const kitchen = registry.areas.getOrCreate('Kitchen');
    expect(events.at(-1)).toEqual(['area_upsert', { area: { area_id: 'kitchen', name: 'Kitchen' } }]);
    expect(registry.areas.getOrCreate(' kitchen ')).toEqual(kitchen);
    expect(events.filter(([t]) => t === 'area_upsert')).toHaveLength(1);

    events.length = 0;
    expect(
      registry.setEntitySettings('sensor.linkquality', {
        name_by_user: 'Signal',
        icon: 'mdi:wifi',
        area_id: 'kitchen',
        hidden_by: 'user',
      }),
    ).toBe(true);
    const record = {
      entity_id: 'sensor.linkquality',
      name: 'Linkquality',
      entity_category: 'config',
      name_by_user: 'Signal',
      icon: 'mdi:wifi',
      area_id: 'kitchen',
      hidden_by: 'user',
    };
    expect(events).toEqual([['entity_upsert', { entity: expect.objectContaining(record) }]]);
    // the integration's update keeps the user's settings
    registry.upsertEntity(sensor('config'));
    expect(toRecord(registry.getEntity('sensor.linkquality')!)).toMatchObject(record);
    // undefined keeps, null clears
    registry.setEntitySettings('sensor.linkquality', { icon: null });
    expect(registry.getEntity('sensor.linkquality')).toMatchObject({ icon: null, name_by_user: 'Signal' });
    expect(toRecord(registry.getEntity('sensor.linkquality')!)).not.toHaveProperty('icon');
    expect(registry.setEntitySettings('sensor.nope', { icon: 'x' })).toBe(false);

    const again = open(tmp.dir).registry;
    expect(toRecord(again.getEntity('sensor.linkquality')!)).toEqual(
      toRecord(registry.getEntity('sensor.linkquality')!),
    );
    expect(again.areas.list()).toEqual([kitchen]);
  });
});
