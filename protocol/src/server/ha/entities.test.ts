import { describe, expect, it } from 'vitest';
import type { HaState } from '../../ha/index.ts';
import { compressDiff, compressState, entitiesEvent } from './entities.ts';

const state = (over: Partial<HaState> = {}): HaState => ({
  entity_id: 'light.a',
  state: 'off',
  attributes: { friendly_name: 'A', brightness: 10 },
  last_changed: '2026-01-01T00:00:00.000Z',
  last_updated: '2026-01-01T00:00:00.000Z',
  last_reported: '2026-01-01T00:00:00.000Z',
  context: { id: 'CTX1', parent_id: null, user_id: null },
  ...over,
});

describe("subscribe_entities' compressed format (HA core's as_compressed_state / compressed_state_diff)", () => {
  it('compresses a state; lu only when it differs from lc', () => {
    expect(compressState(state())).toEqual({
      s: 'off',
      a: { friendly_name: 'A', brightness: 10 },
      c: 'CTX1',
      lc: 1767225600,
    });
    expect(compressState(state({ last_updated: '2026-01-01T00:00:01.500Z' }))).toMatchObject({
      lc: 1767225600,
      lu: 1767225601.5,
    });
  });

  it('a state change carries s, lc and c; an attribute-only change lu and the changed attributes; removed keys go in "-"', () => {
    const changed = state({
      state: 'on',
      last_changed: '2026-01-01T00:00:02.000Z',
      last_updated: '2026-01-01T00:00:02.000Z',
      context: { id: 'CTX2', parent_id: null, user_id: null },
    });
    expect(compressDiff(state(), changed)).toEqual({ '+': { s: 'on', c: 'CTX2', lc: 1767225602 } });
    const attrs = state({ attributes: { friendly_name: 'A', color: 'red' }, last_updated: '2026-01-01T00:00:03.000Z' });
    expect(compressDiff(state(), attrs)).toEqual({
      '+': { lu: 1767225603, a: { color: 'red' } },
      '-': { a: ['brightness'] },
    });
    expect(compressDiff(state(), state())).toBeNull();
  });

  it('added, changed and removed entities', () => {
    expect(entitiesEvent('light.a', null, state())).toEqual({ a: { 'light.a': compressState(state()) } });
    expect(entitiesEvent('light.a', state(), null)).toEqual({ r: ['light.a'] });
    expect(entitiesEvent('light.a', state(), state({ state: 'on' }))).toEqual({
      c: { 'light.a': { '+': { s: 'on' } } },
    });
  });
});
