import { describe, expect, it } from 'vitest';
import { LoopSlices } from './slices.ts';

describe('LoopSlices', () => {
  it('runs the slices of all tasks in order, and no more per turn of the loop than its budget allows', async () => {
    const slices = new LoopSlices(0); // a spent budget: one slice per turn
    const events: string[] = [];
    const a = slices.run(() => (events.push('a'), 1));
    const b = slices.run(() => {
      events.push('b');
      throw new Error('bad slice');
    });
    const c = slices.run(() => (events.push('c'), 3));
    setImmediate(() => events.push('turn'));
    expect(slices.pending).toBe(3);
    expect(await a).toBe(1);
    await expect(b).rejects.toThrow('bad slice');
    expect(await c).toBe(3);
    expect(events).toEqual(['a', 'turn', 'b', 'c']);
  });

  it('runs several slices in one turn while its budget lasts', async () => {
    const slices = new LoopSlices(60_000);
    const events: string[] = [];
    const all = Promise.all([1, 2, 3].map((n) => slices.run(() => events.push(`slice ${n}`))));
    setImmediate(() => events.push('turn'));
    await all;
    // all three ran in the turn that began before the test's own immediate
    expect(events).toEqual(['slice 1', 'slice 2', 'slice 3']);
  });
});
