import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../log.ts';
import { Audience, type Viewer } from './audience.ts';
import type { Visibility } from './interest.ts';

const viewer = (userId: string): Viewer => ({
  userId,
  ended: false,
  visibility: null,
  loadedAt: 0,
  loading: null,
  visibilityGeneration: 0,
});

let stop: (() => void) | null = null;
afterEach(() => stop?.());

describe('Audience', () => {
  it('spreads the safety refresh of sessions loaded together: a bounded share per tick, each once its TTL is over', async () => {
    const ttlMs = 1000;
    const loads: number[] = [];
    const audience = new Audience<Viewer, string>({
      visibility: async () => {
        loads.push(performance.now());
        return { edges: new Set([1]), entities: new Set() } satisfies Visibility;
      },
      log: createLogger('test', { silent: true }),
      ttlMs,
    });
    // a hundred sessions whose visibility loads in the same turn (one event concerning them all)
    for (let i = 0; i < 100; i++) audience.join(viewer(`u${i}`), `socket ${i}`);
    await audience.forUnknown(
      () => true,
      () => true,
      () => {},
    );
    expect(loads).toHaveLength(100);
    const loadedAt = performance.now();
    loads.length = 0;
    audience.start();
    stop = () => audience.stop();
    // due after 1 s, reloaded within half a TTL more (a loaded machine's timers run late: not timed here)
    for (let waited = 0; loads.length < 100 && waited < 10_000; waited += 50)
      await new Promise((r) => setTimeout(r, 50));

    // every session was reloaded once, not all in one piece of work: loads of one tick run within
    // a millisecond, ticks are ttl/50 = 20 ms apart
    expect(loads).toHaveLength(100);
    const ticks: number[] = [];
    loads.forEach((at, i) => {
      if (i === 0 || at - loads[i - 1]! > 8) ticks.push(1);
      else ticks[ticks.length - 1]! += 1;
    });
    expect(Math.max(...ticks)).toBeLessThanOrEqual(4); // a 25th of the sessions
    expect(ticks.length).toBeGreaterThanOrEqual(25);
    expect(loads[0]! - loadedAt).toBeGreaterThanOrEqual(ttlMs - 5);
  });
});
