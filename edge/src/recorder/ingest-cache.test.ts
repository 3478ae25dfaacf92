import { describe, expect, it } from 'vitest';
import { AttributeJson, IsoSeconds } from './ingest-cache.ts';

describe('recorder ingest caches', () => {
  it('reuses an entity’s JSON only while keys, order and values are the same', () => {
    const json = new AttributeJson();
    const first = json.of('sensor.a', { unit: 'W', n: 1, on: true, x: null });
    expect(first).toBe('{"unit":"W","n":1,"on":true,"x":null}');
    // a new object with the same content: the same text object
    expect(json.of('sensor.a', { unit: 'W', n: 1, on: true, x: null })).toBe(first);
    expect(json.of('sensor.a', { unit: 'W', n: 2, on: true, x: null })).toBe('{"unit":"W","n":2,"on":true,"x":null}');
    expect(json.of('sensor.a', { n: 2, unit: 'W', on: true, x: null })).toBe('{"n":2,"unit":"W","on":true,"x":null}');
    expect(json.of('sensor.a', { n: 2, unit: 'W', on: true })).toBe('{"n":2,"unit":"W","on":true}');
    expect(json.of('sensor.a', { n: 2, unit: 'W', on: true, y: 1 })).toBe('{"n":2,"unit":"W","on":true,"y":1}');
    // entities apart
    expect(json.of('sensor.b', { n: 2, unit: 'W', on: true })).toBe('{"n":2,"unit":"W","on":true}');
  });

  it('never reuses a text for nested values or an object changed after it was written', () => {
    const json = new AttributeJson();
    const list = [1, 2];
    expect(json.of('sensor.a', { list })).toBe('{"list":[1,2]}');
    list.push(3);
    expect(json.of('sensor.a', { list })).toBe('{"list":[1,2,3]}');
    const attrs: Record<string, unknown> = { n: 1 };
    expect(json.of('sensor.c', attrs)).toBe('{"n":1}');
    attrs.n = 2;
    expect(json.of('sensor.c', attrs)).toBe('{"n":2}');
    expect(json.of('sensor.c', { n: 1 })).toBe('{"n":1}');
    expect(json.of('sensor.c', { n: Number.NaN })).toBe('{"n":null}');
    expect(json.of('sensor.c', { n: undefined })).toBe('{}');
    expect(json.of('sensor.c', {})).toBe('{}');
  });

  it('parses an ISO time once while it repeats', () => {
    const seconds = new IsoSeconds();
    expect(seconds.of('2026-01-02T03:04:05.678Z')).toBe(Date.parse('2026-01-02T03:04:05.678Z') / 1000);
    expect(seconds.of('2026-01-02T03:04:05.678Z')).toBe(Date.parse('2026-01-02T03:04:05.678Z') / 1000);
    expect(seconds.of('2026-01-02T03:04:05.679Z')).toBe(Date.parse('2026-01-02T03:04:05.679Z') / 1000);
  });
});
