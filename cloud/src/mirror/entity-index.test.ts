import { describe, expect, it } from 'vitest';
import type { tunnel } from '@smarthome/protocol';
import type { TestCloud } from '../testing/harness.ts';
import { sampleSnapshot } from '../testing/fixtures.ts';
import { useMirrorCloud } from '../testing/mirror-cloud.ts';
import { EntityIndex } from './entity-index.ts';
import type { MirrorStore } from './store.ts';
import { MirrorWriter } from './writer.ts';

let t: TestCloud;
let mirror: MirrorStore;
let edgeA: number;
let edgeB: number;
useMirrorCloud((cloud) => ({ t, mirror, edgeA, edgeB } = cloud), [2, 3]);

/** Counts the index's loads (its queries of mirror_entities). */
function countLoads(): { loads: number; restore: () => void } {
  const db = t.cloud.database;
  const { query } = db;
  const out = { loads: 0, restore: () => void (db.query = query) };
  db.query = ((sql: string, params: unknown[]) => {
    if (sql.startsWith('SELECT entity_id FROM mirror_entities')) out.loads += 1;
    return query.call(db, sql, params);
  }) as never;
  return out;
}

describe('EntityIndex', () => {
  it('answers the lowest edge holding the entity, from memory once loaded; null when absent or too many edges', async () => {
    const index = new EntityIndex(t.cloud.database);
    const counter = countLoads();
    try {
      expect(await index.first([edgeB, edgeA], 'light.lamp_1')).toBe(Math.min(edgeA, edgeB));
      expect(await index.first([edgeA, edgeB], 'light.lamp_3')).toBe(edgeB);
      expect(await index.first([edgeA], 'light.lamp_3')).toBeNull();
      expect(await index.first([edgeA, edgeB], 'light.lamp_3', 1)).toBeNull();
      expect(counter.loads).toBe(2);
    } finally {
      counter.restore();
    }
  });

  it("forgets an edge told of a registry change (the mirror's writes tell it), and another replica's change after ttlMs", async () => {
    let now = 0;
    const index = new EntityIndex(t.cloud.database, { ttlMs: 5000, now: () => now });
    const writer = new MirrorWriter(t.cloud.database, mirror);
    // the mirror's own index is told by the writer; this one listens the same way for the test
    const told = mirror.index.changed.bind(mirror.index);
    mirror.index.changed = (edgeId) => (told(edgeId), index.changed(edgeId));
    try {
      expect(await index.first([edgeA], 'light.lamp_2')).toBe(edgeA);
      const disabled: tunnel.Delta = {
        kind: 'entity_upsert',
        entity: { ...sampleSnapshot({ devices: 2 }).entities[1]!, disabled_by: 'user' },
      };
      await writer.applyDeltas(edgeA, [disabled], 2);
      expect(await index.first([edgeA], 'light.lamp_2')).toBeNull();
      expect(await mirror.index.first([edgeA], 'light.lamp_2')).toBeNull();
      await mirror.replaceSnapshot(edgeA, sampleSnapshot({ devices: 2 }), 3);
      expect(await index.first([edgeA], 'light.lamp_2')).toBe(edgeA);
      // written by another replica (no notice here): seen once the list expires
      await t.cloud.database.execute('DELETE FROM mirror_entities WHERE edge_id = ? AND entity_id = ?', [
        edgeA,
        'light.lamp_2',
      ]);
      now += 4999;
      expect(await index.first([edgeA], 'light.lamp_2')).toBe(edgeA);
      now += 1;
      expect(await index.first([edgeA], 'light.lamp_2')).toBeNull();
      await mirror.clear(edgeB);
      expect(await mirror.index.first([edgeB], 'light.lamp_1')).toBeNull();
    } finally {
      mirror.index.changed = told;
    }
  });

  it('does not keep a load that a change overlapped', async () => {
    const index = new EntityIndex(t.cloud.database);
    await mirror.replaceSnapshot(edgeA, sampleSnapshot({ devices: 2 }), 4);
    const loading = index.first([edgeA], 'light.lamp_1');
    index.changed(edgeA);
    expect(await loading).toBe(edgeA);
    const counter = countLoads();
    try {
      await index.first([edgeA], 'light.lamp_1');
      expect(counter.loads).toBe(1);
    } finally {
      counter.restore();
    }
  });
});
