import { collectStartupGarbage } from './startup-gc.ts';

export interface BurstGcOptions {
  /** a tick with no message is quiet (ms; default 500) */
  tickMs?: number;
  /** messages within the last `windowTicks` that make a burst (default 1,000 in 20 ticks: 10 s) */
  minMessages?: number;
  windowTicks?: number;
  /** at most one collection per this many ms (default 30 s) */
  minIntervalMs?: number;
}

/**
 * Decides, one tick at a time, when a burst of MQTT messages is over: the first quiet tick after
 * at least `minMessages` within the window. A steady trickle (a home's sensors: a few a second)
 * never adds up to a burst; a steady flood has no quiet tick, and V8's own collections keep up.
 */
export class BurstDetector {
  private readonly counts: number[];
  private readonly minMessages: number;
  private readonly minIntervalMs: number;
  private next = 0;
  private current = 0;
  private lastCollection = -Infinity;

  constructor(options: BurstGcOptions = {}) {
    this.counts = new Array<number>(options.windowTicks ?? 20).fill(0);
    this.minMessages = options.minMessages ?? 1000;
    this.minIntervalMs = options.minIntervalMs ?? 30_000;
  }

  message(): void {
    this.current++;
  }

  /** Ends a tick: true when a collection is due now. */
  tick(now: number): boolean {
    const quiet = this.current === 0;
    this.counts[this.next] = this.current;
    this.next = (this.next + 1) % this.counts.length;
    this.current = 0;
    if (!quiet || now - this.lastCollection < this.minIntervalMs) return false;
    if (this.counts.reduce((a, b) => a + b, 0) < this.minMessages) return false;
    this.counts.fill(0);
    this.lastCollection = now;
    return true;
  }
}

/**
 * One compacting collection (startup-gc.ts) once a burst of MQTT messages is over: a burst (every
 * sensor reporting after a restart or a broker reconnect) grows V8's young generation and leaves
 * old-space pages half used, which an edge that goes quiet again would keep committed (edge-start,
 * 1,000 entities: −3 MB of the growth after a change per entity). Costs the event loop what
 * the start's collection does (~50 ms at 1,000 entities), at most every 30 s.
 * Returns the undo (for stop).
 */
export function collectAfterBursts(
  broker: { onMessage(listener: () => void): () => void },
  options: BurstGcOptions = {},
  collect: () => void = collectStartupGarbage,
): () => void {
  const detector = new BurstDetector(options);
  const off = broker.onMessage(() => detector.message());
  const timer = setInterval(() => {
    if (detector.tick(performance.now())) collect();
  }, options.tickMs ?? 500);
  timer.unref();
  return () => {
    clearInterval(timer);
    off();
  };
}
