import { describe, expect, it } from 'vitest';
import { tunnel } from '@smarthome/protocol';
import { describeZodError } from '@smarthome/protocol/server';
import { sampleSnapshot } from '../testing/fixtures.ts';
import { LoopSlices } from './slices.ts';
import { SnapshotEnvelope, validateSnapshot } from './snapshot.ts';

const message = (data: unknown) => ({ type: 'snapshot', seq: 3, data });

describe('validateSnapshot', () => {
  it('checks a 5,000-entity snapshot in slices (a timer runs before it is done) to what the whole schema gives', async () => {
    const snapshot = {
      ...sampleSnapshot({ devices: 5_000, entries: 2, automations: 1 }),
      areas: [{ area_id: 'a', name: 'A' }],
    };
    const events: string[] = [];
    const checking = validateSnapshot(SnapshotEnvelope.parse(message(snapshot)), new LoopSlices()).then((out) => {
      events.push('checked');
      return out;
    });
    setImmediate(() => events.push('immediate'));
    setTimeout(() => events.push('timer'), 0);
    const out = await checking;
    expect(events.indexOf('immediate')).toBeGreaterThanOrEqual(0);
    expect(events.indexOf('timer')).toBeGreaterThanOrEqual(0);
    expect(events.at(-1)).toBe('checked');
    expect(out).toEqual({ data: tunnel.Snapshot.parse(snapshot) });
  });

  it('reports a bad item as the whole schema does; unknown keys are dropped as before', async () => {
    const snapshot = sampleSnapshot({ devices: 3 });
    const bad = { ...snapshot, entities: snapshot.entities.map((e, i) => (i === 2 ? { ...e, entity_id: 7 } : e)) };
    const whole = tunnel.EdgeToCloud.safeParse(message(bad));
    expect(whole.success).toBe(false);
    expect(await validateSnapshot(SnapshotEnvelope.parse(message(bad)), new LoopSlices())).toEqual({
      error: describeZodError(whole.error!),
    });
    expect(describeZodError(whole.error!)).toMatch(/^data\.entities\[2\]\.entity_id: /);
    const extra = { ...snapshot, devices: snapshot.devices.map((d) => ({ ...d, surprise: 1 })), more: true };
    expect(await validateSnapshot(SnapshotEnvelope.parse(message(extra)), new LoopSlices())).toEqual({
      data: tunnel.Snapshot.parse(extra),
    });
  });

  it('the envelope refuses what the protocol refuses around the lists', () => {
    for (const raw of [
      message({ ...sampleSnapshot(), states: 'x' }),
      { type: 'snapshot', seq: 1.5, data: sampleSnapshot() },
    ])
      expect(SnapshotEnvelope.safeParse(raw).success).toBe(tunnel.EdgeToCloud.safeParse(raw).success);
    expect(SnapshotEnvelope.safeParse(message({ ...sampleSnapshot(), states: 'x' })).success).toBe(false);
  });
});
