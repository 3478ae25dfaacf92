import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { TickBatch } from './tick-batch.ts';

describe('TickBatch', () => {
  it('runs the calls of one turn together and answers each its own output, in order', async () => {
    const runs: number[][] = [];
    const batch = new TickBatch(async (xs: number[]) => {
      runs.push(xs);
      return xs.map((x) => x * 10);
    });
    const outs = await Promise.all([batch.call(1), batch.call(2), batch.call(3)]);
    expect(outs).toEqual([10, 20, 30]);
    expect(runs).toEqual([[1, 2, 3]]);
    // a later turn is another run
    expect(await batch.call(4)).toBe(40);
    expect(runs).toEqual([[1, 2, 3], [4]]);
    expect(batch.runs).toBe(2);
  });

  it('takes at most `max` per run; calls made while a run is in flight wait for the next', async () => {
    const runs: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const batch = new TickBatch(
      async (xs: number[]) => {
        runs.push(xs);
        if (runs.length === 1) await gate;
        return xs;
      },
      { max: 2, maxInFlight: 1 },
    );
    const first = [batch.call(1), batch.call(2), batch.call(3)];
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    // the first run holds 1 and 2; 3 waits for it (one in flight), and so does a call made now
    expect(runs).toEqual([[1, 2]]);
    const late = batch.call(4);
    release();
    expect(await Promise.all([...first, late])).toEqual([1, 2, 3, 4]);
    expect(runs).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it("runs in the context the batch was made in, not its first caller's (a transaction's, say)", async () => {
    const store = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const batch = new TickBatch(async (xs: number[]) => {
      seen.push(store.getStore());
      return xs;
    });
    await store.run('in a transaction', () => Promise.all([batch.call(1), batch.call(2)]));
    expect(seen).toEqual([undefined]);
  });

  it('fails every call of a failed run with its error, and later calls run again', async () => {
    let fail = true;
    const batch = new TickBatch(async (xs: string[]) => {
      if (fail) throw new Error('database unavailable');
      return xs;
    });
    const failed = await Promise.allSettled([batch.call('a'), batch.call('b')]);
    expect(failed.map((r) => r.status === 'rejected' && (r.reason as Error).message)).toEqual([
      'database unavailable',
      'database unavailable',
    ]);
    fail = false;
    expect(await batch.call('c')).toBe('c');
  });
});
