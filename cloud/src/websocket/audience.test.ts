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
    audience.forUnknown(
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

describe('Audience: events for sessions whose visibility is loading', () => {
  /** an audience whose loads the test resolves (or fails) one at a time, in order */
  function gatedAudience() {
    const loads: { userId: string; answer: (vis: Visibility | Error) => void }[] = [];
    const audience = new Audience<Viewer, string>({
      visibility: (v) =>
        new Promise<Visibility>((resolve, reject) =>
          loads.push({ userId: v.userId!, answer: (x) => (x instanceof Error ? reject(x) : resolve(x)) }),
        ),
      log: createLogger('test', { silent: true }),
      ttlMs: 60_000,
    });
    const sent: string[] = [];
    const event = (edgeId: number, name: string) =>
      audience.forUnknown(
        () => true,
        (vis) => vis.edges.has(edgeId),
        (socket) => sent.push(`${socket} ${name}`),
      );
    return { audience, loads, sent, event };
  }
  const edges = (...ids: number[]): Visibility => ({ edges: new Set(ids), entities: new Set() });
  const settle = () => new Promise((r) => setTimeout(r, 0));

  it('queues them behind one load per session and decides them in order once it answers', async () => {
    const { audience, loads, sent, event } = gatedAudience();
    audience.join(viewer('a'), 'A');
    audience.join(viewer('b'), 'B');
    for (let i = 0; i < 1000; i++) event(i % 2 === 0 ? 1 : 2, `e${i}`);
    expect(loads.map((l) => l.userId)).toEqual(['a', 'b']);
    loads[0]!.answer(edges(1));
    await settle();
    expect(sent).toHaveLength(500);
    expect(sent.slice(0, 3)).toEqual(['A e0', 'A e2', 'A e4']);
    loads[1]!.answer(edges(1, 2));
    await settle();
    expect(sent.filter((s) => s.startsWith('B'))).toHaveLength(1000);
    // both are known now: later events go through the index, not forUnknown
    event(1, 'later');
    expect(loads).toHaveLength(2);
    expect(sent).toHaveLength(1500);
  });

  it('a grant change while loading: later events wait for a new load; a session that left gets nothing', async () => {
    const { audience, loads, sent, event } = gatedAudience();
    const a = viewer('a');
    const b = viewer('b');
    audience.join(a, 'A');
    audience.join(b, 'B');
    event(1, 'before');
    audience.forget(a);
    event(1, 'after');
    expect(loads.map((l) => l.userId)).toEqual(['a', 'b', 'a']);
    audience.leave(b);
    // the load begun before the change answers with the old grants: used for the event before it only
    loads[0]!.answer(edges(1));
    loads[1]!.answer(edges(1));
    loads[2]!.answer(edges(2));
    await settle();
    expect(sent).toEqual(['A before']);
  });

  it('a failed load drops the events that waited for it; the next event loads again', async () => {
    const { audience, loads, sent, event } = gatedAudience();
    audience.join(viewer('a'), 'A');
    event(1, 'lost');
    loads[0]!.answer(new Error('database away'));
    await settle();
    event(1, 'kept');
    expect(loads).toHaveLength(2);
    loads[1]!.answer(edges(1));
    await settle();
    expect(sent).toEqual(['A kept']);
  });
});
