import { describe, expect, it } from 'vitest';
import { BurstDetector, collectAfterBursts } from './burst-gc.ts';

const messages = (d: BurstDetector, n: number) => {
  for (let i = 0; i < n; i++) d.message();
};

describe('collection after a burst of MQTT messages', () => {
  it('is due at the first quiet tick after a burst, once', () => {
    const d = new BurstDetector({ minMessages: 1000, windowTicks: 20, minIntervalMs: 30_000 });
    messages(d, 600);
    expect(d.tick(500)).toBe(false);
    messages(d, 600);
    expect(d.tick(1000)).toBe(false); // still coming
    expect(d.tick(1500)).toBe(true); // quiet: 1,200 within the window
    expect(d.tick(2000)).toBe(false); // counted once
  });

  it('a trickle never adds up to a burst, and a flood without a pause is left to V8', () => {
    const d = new BurstDetector({ minMessages: 1000, windowTicks: 20 });
    let t = 0;
    // 40 messages a tick (80 a second), with a quiet tick every fifth: 640 within any 20 ticks
    for (let i = 0; i < 200; i++) {
      if (i % 5 !== 4) messages(d, 40);
      expect(d.tick((t += 500))).toBe(false);
    }
    const flood = new BurstDetector({ minMessages: 1000, windowTicks: 20 });
    for (let i = 0; i < 100; i++) {
      messages(flood, 5000);
      expect(flood.tick((t += 500))).toBe(false);
    }
    expect(flood.tick((t += 500))).toBe(true);
  });

  it('at most one collection per interval; messages older than the window do not count', () => {
    const d = new BurstDetector({ minMessages: 1000, windowTicks: 4, minIntervalMs: 30_000 });
    messages(d, 1000);
    d.tick(500);
    expect(d.tick(1000)).toBe(true);
    messages(d, 1000);
    d.tick(1500);
    expect(d.tick(2000)).toBe(false); // 1 s after the last one
    // the window moved on: that burst is forgotten by the time a collection may run again
    for (let t = 2500; t < 40_000; t += 500) expect(d.tick(t)).toBe(false);
    messages(d, 1000);
    d.tick(40_500);
    expect(d.tick(41_000)).toBe(true);
  });

  it("is wired to the broker's messages and a timer, and undone", async () => {
    const listeners: (() => void)[] = [];
    const broker = {
      onMessage(l: () => void) {
        listeners.push(l);
        return () => listeners.splice(listeners.indexOf(l), 1);
      },
    };
    let collected = 0;
    const stop = collectAfterBursts(broker, { tickMs: 20, minMessages: 10 }, () => collected++);
    for (let i = 0; i < 10; i++) listeners.forEach((l) => l());
    await new Promise((r) => setTimeout(r, 100));
    expect(collected).toBe(1);
    stop();
    expect(listeners).toHaveLength(0);
  });
});
