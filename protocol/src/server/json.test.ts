import { describe, expect, it } from 'vitest';
import { HttpError } from './errors.ts';
import { JsonTooDeepError, MAX_JSON_DEPTH, jsonDeeperThan, parseJson, parseJsonBody } from './json.ts';

const nest = (levels: number, open = '[', close = ']') => open.repeat(levels) + close.repeat(levels);

describe('bounded JSON', () => {
  it('counts nesting of objects and arrays, not brackets inside strings', () => {
    expect(jsonDeeperThan(nest(3), 3)).toBe(false);
    expect(jsonDeeperThan(nest(4), 3)).toBe(true);
    expect(jsonDeeperThan('{"a":{"b":[1,{"c":2}]}}', 4)).toBe(false);
    expect(jsonDeeperThan('{"a":{"b":[1,{"c":2}]}}', 3)).toBe(true);
    expect(jsonDeeperThan(JSON.stringify({ s: '[[[[[[{{{{' }), 1)).toBe(false);
    expect(jsonDeeperThan(JSON.stringify({ s: 'quote \\" then [[[[ and \\\\' }), 1)).toBe(false);
    expect(jsonDeeperThan('[[],[],[[]]]', 2)).toBe(true);
    expect(jsonDeeperThan('[[],[],[]]', 2)).toBe(false);
  });
  it('parses up to the bound and refuses beyond it', () => {
    expect(parseJson(nest(MAX_JSON_DEPTH))).toHaveLength(1);
    expect(() => parseJson(nest(MAX_JSON_DEPTH + 1))).toThrow(JsonTooDeepError);
    expect(() => parseJson(nest(100_000))).toThrow('JSON nested deeper than 64 levels');
  });
  it('answers a request body with 400 {message}: too deep, malformed, or not UTF-8', () => {
    const fail = (bytes: Uint8Array) => {
      try {
        parseJsonBody(bytes);
      } catch (err) {
        return err instanceof HttpError ? [err.status, err.body()] : err;
      }
      return 'parsed';
    };
    const utf8 = (s: string) => new TextEncoder().encode(s);
    expect(fail(utf8(`{"a":${nest(5000, '{"b":', '}').replace(/\{"b":\}/g, '{"b":1}')}}`))).toEqual([
      400,
      { message: 'JSON body nested deeper than 64 levels' },
    ]);
    expect(fail(utf8('{"a":'))).toEqual([400, { message: 'malformed JSON body' }]);
    expect(fail(new Uint8Array([0x7b, 0xff, 0x7d]))).toEqual([400, { message: 'malformed JSON body' }]);
    expect(parseJsonBody(utf8('{"a":[1,{"b":"]]]]"}]}'))).toEqual({ a: [1, { b: ']]]]' }] });
    // NUL, in a value or a key, at any depth; an escaped backslash before "u0000" is not NUL
    const nul = [400, { message: 'JSON body strings may not contain NUL (U+0000)' }];
    expect(fail(utf8('{"a":"x\\u0000"}'))).toEqual(nul);
    expect(fail(utf8('{"a":[{"b\\u0000":1}]}'))).toEqual(nul);
    expect(parseJsonBody(utf8('{"a":"\\\\u0000"}'))).toEqual({ a: '\\u0000' });
  });
});
