import { describe, expect, it } from 'vitest';
import { RowBatcher } from './batcher.ts';

describe('recorder row batcher', () => {
  it('hands rows over in order, all queued in one batch on the turn after maxBatch', async () => {
    const batches: number[][] = [];
    const b = new RowBatcher<number>({
      delayMs: 60_000,
      maxBatch: 3,
      write: (r) => batches.push(r),
      onError: () => {},
    });
    b.start();
    for (let i = 0; i < 5; i++) b.push(i);
    expect(batches).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[0, 1, 2, 3, 4]]);
    b.push(5);
    b.stop();
    expect(batches).toEqual([[0, 1, 2, 3, 4], [5]]);
  });

  it('a failed write keeps its rows in front of newer ones; flush throws it', () => {
    const batches: number[][] = [];
    let fail = true;
    const b = new RowBatcher<number>({
      delayMs: 60_000,
      maxBatch: 100,
      write: (r) => {
        if (fail) throw new Error('disk full');
        batches.push(r);
      },
      onError: () => {},
    });
    b.start();
    b.push(1);
    b.push(2);
    expect(() => b.flush()).toThrow('disk full');
    expect(b.pending).toBe(2);
    b.push(3);
    fail = false;
    b.stop();
    expect(batches).toEqual([[1, 2, 3]]);
    expect(b.pending).toBe(0);
  });

  it('a background write waits while the gate is held elsewhere and takes it while writing; flush() does not wait', async () => {
    const batches: number[][] = [];
    let held = true;
    const during: boolean[] = [];
    const b = new RowBatcher<number>({
      delayMs: 1,
      maxBatch: 100,
      write: (r) => {
        batches.push(r);
        during.push(held);
      },
      gate: () => ({
        tryEnter: () => {
          if (held) return false;
          held = true;
          return true;
        },
        leave: () => {
          held = false;
        },
      }),
    });
    b.start();
    b.push(1);
    await new Promise((r) => setTimeout(r, 30));
    expect(batches).toEqual([]);
    held = false;
    await new Promise((r) => setTimeout(r, 30));
    expect(batches).toEqual([[1]]);
    expect(during).toEqual([true]);
    expect(held).toBe(false);
    held = true;
    b.push(2);
    b.flush();
    expect(batches).toEqual([[1], [2]]);
    b.stop();
  });
});
