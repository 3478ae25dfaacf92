import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, backoffCeiling } from './client.ts';

describe('tunnel reconnect backoff', () => {
  it('doubles from 0.5 s and caps at 10 s, so an edge is back within 10 s of the cloud coming back', () => {
    const ceilings = Array.from({ length: 30 }, (_, attempt) => backoffCeiling(attempt));
    expect(ceilings.slice(0, 7)).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(Math.max(...ceilings)).toBe(10_000);
  });

  it('waits up to 30 s after the cloud refused the token (it will not get better by retrying often)', () => {
    expect(backoffCeiling(0, DEFAULT_BACKOFF, true)).toBe(30_000);
    // a custom backoff without a refused ceiling uses its maximum
    expect(backoffCeiling(0, { initialMs: 20, maxMs: 100 }, true)).toBe(100);
  });
});
