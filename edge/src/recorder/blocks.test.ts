import { describe, expect, it } from 'vitest';
import { BLOCK_SPAN_S, decodeBlock, encodeBlock, splitBlocks, type BlockState } from './blocks.ts';

const T0 = Date.UTC(2026, 10, 20, 12) / 1000;
const s = (state: string | null, t: number, shared: string | null, changed: number | null = null): BlockState => ({
  state,
  last_updated: t,
  last_changed: changed,
  shared,
});
const items = (states: BlockState[]) =>
  splitBlocks(states).map((group) => {
    const b = encodeBlock(group);
    return decodeBlock(b.data, b.shared);
  });

describe('history blocks', () => {
  it('hand back each state, its times to the bit and its set as the same text', () => {
    const odd = 'quote " back \\ nl \n tab \t é ☃ 🙂 \u2028 ]],[null';
    const states = [
      s('1', T0 + 0.1234567, '{"unit_of_measurement":"W"}'),
      s(odd, T0 + 1 / 3, '{"unit_of_measurement":"W"}', T0 - 100.000001),
      s(null, T0 + 2, null),
      s('3', T0 + 3, '{"a":"]]\\",[1"}'),
      s('4', T0 + 4, '{"a":"]]\\",[1"}'),
      s('', T0 + 5, ''),
      s('6', T0 + 6, '{"unit_of_measurement":"W"}'),
    ];
    expect(splitBlocks(states)).toEqual([states]);
    const blocks = [encodeBlock(states)];
    expect(blocks[0].first).toBe(T0 + 0.1234567);
    // each set's text once, in order: a repeated set is a reference to the state that carries it
    expect(blocks[0].shared).toBe('{"unit_of_measurement":"W"}{"a":"]]\\",[1"}{"unit_of_measurement":"W"}');
    expect(decodeBlock(blocks[0].data, blocks[0].shared)).toEqual([
      ['1', T0 + 0.1234567, null, '{"unit_of_measurement":"W"}'],
      [odd, T0 + 1 / 3, T0 - 100.000001, '{"unit_of_measurement":"W"}'],
      [null, T0 + 2, null, null],
      ['3', T0 + 3, null, '{"a":"]]\\",[1"}'],
      ['4', T0 + 4, null, '{"a":"]]\\",[1"}'],
      // an empty set text is no set, as for a plain row
      ['', T0 + 5, null, null],
      ['6', T0 + 6, null, '{"unit_of_measurement":"W"}'],
    ]);
  });

  it(`start a new block when a state is older than the one before it or over ${BLOCK_SPAN_S} s after the first`, () => {
    const states = [
      s('a', T0, '{}'),
      s('b', T0 + BLOCK_SPAN_S, '{}'),
      s('c', T0 + BLOCK_SPAN_S + 0.001, '{}'),
      s('d', T0 + BLOCK_SPAN_S - 1, '{}'),
      s('e', T0 + BLOCK_SPAN_S - 1, null),
    ];
    expect(splitBlocks(states).map((group) => encodeBlock(group).first)).toEqual([
      T0,
      T0 + BLOCK_SPAN_S + 0.001,
      T0 + BLOCK_SPAN_S - 1,
    ]);
    expect(items(states).map((block) => block.map((item) => item[0]))).toEqual([['a', 'b'], ['c'], ['d', 'e']]);
    // a set is carried in each block that uses it: blocks reference nothing outside themselves
    expect(items(states).map((block) => block.map((item) => item[3]))).toEqual([['{}', '{}'], ['{}'], ['{}', null]]);
    expect(splitBlocks([])).toEqual([]);
  });
});
