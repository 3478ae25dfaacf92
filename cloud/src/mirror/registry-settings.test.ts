import { describe, expect, it } from 'vitest';
import { sampleSnapshot } from '../testing/fixtures.ts';
import { useMirrorCloud } from '../testing/mirror-cloud.ts';
import type { MirrorStore } from './store.ts';

let mirror: MirrorStore;
let edgeA: number;
let edgeB: number;
useMirrorCloud((cloud) => ({ mirror, edgeA, edgeB } = cloud));

describe('MirrorStore: areas and HA registry settings', () => {
  it('keeps each edge’s areas, devices’ area_id and entities’ settings from snapshots and deltas', async () => {
    const snapshot = sampleSnapshot({ devices: 2 });
    snapshot.devices[0] = { ...snapshot.devices[0]!, area_id: 'living_room' };
    snapshot.entities[0] = { ...snapshot.entities[0]!, entity_category: 'diagnostic', area_id: 'living_room' };
    await mirror.replaceSnapshot(edgeA, { ...snapshot, areas: [{ area_id: 'living_room', name: 'Living Room' }] });
    // an old edge sends no areas
    await mirror.replaceSnapshot(edgeB, sampleSnapshot({ devices: 1 }));
    expect(await mirror.areas([edgeA, edgeB])).toEqual([
      { area_id: 'living_room', name: 'Living Room', edge_id: edgeA },
    ]);
    const [first, second] = await mirror.entityRecords([edgeA]);
    expect(first).toMatchObject({ entity_category: 'diagnostic', area_id: 'living_room' });
    expect(second).not.toHaveProperty('entity_category');
    expect((await mirror.device(edgeA, snapshot.devices[0]!.id))?.device.area_id).toBe('living_room');
    expect((await mirror.device(edgeA, snapshot.devices[1]!.id))?.device).not.toHaveProperty('area_id');

    await mirror.applyDeltas(edgeA, [
      { kind: 'area_upsert', area: { area_id: 'kitchen', name: 'Kitchen' } },
      { kind: 'area_upsert', area: { area_id: 'living_room', name: 'Lounge' } },
      {
        kind: 'entity_upsert',
        entity: {
          ...snapshot.entities[1]!,
          name_by_user: 'Mine',
          icon: 'mdi:x',
          hidden_by: 'user',
          area_id: 'kitchen',
        },
      },
    ]);
    expect((await mirror.areas([edgeA])).map((a) => [a.area_id, a.name])).toEqual([
      ['kitchen', 'Kitchen'],
      ['living_room', 'Lounge'],
    ]);
    expect((await mirror.entityRecords([edgeA]))[1]).toMatchObject({
      name_by_user: 'Mine',
      icon: 'mdi:x',
      hidden_by: 'user',
      area_id: 'kitchen',
    });
    // a snapshot replaces the areas; clear forgets them
    await mirror.replaceSnapshot(edgeA, { ...snapshot, areas: [] });
    expect(await mirror.areas([edgeA])).toEqual([]);
    await mirror.applyDelta(edgeA, { kind: 'area_upsert', area: { area_id: 'kitchen', name: 'Kitchen' } });
    await mirror.clear(edgeA);
    expect(await mirror.areas([edgeA])).toEqual([]);
  });
});
