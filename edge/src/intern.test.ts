import { describe, expect, it } from 'vitest';
import { POOL_LIMIT, intern, internValues, pooledCount } from './intern.ts';

describe('intern', () => {
  it('returns an equal string', () => {
    const a = ['tempe', 'rature'].join('');
    expect(intern(a)).toBe('temperature');
    expect(intern(['temp', 'erature'].join(''))).toBe('temperature');
  });

  it('keeps every config value as it was, strings pooled or not', () => {
    const cfg = {
      name: 'Temperature',
      unique_id: 'probe_1_temperature',
      state_topic: 'probe_1/temperature',
      device_class: 'temperature',
      unit_of_measurement: '°C',
      value_template: '{{ value_json.temperature }}',
      expire_after: 60,
      device: { identifiers: ['probe_1'], name: 'Probe 1' },
    };
    const copy = structuredClone(cfg);
    internValues(cfg);
    expect(cfg).toEqual(copy);
  });

  it('stops pooling new strings at its limit, and still answers equal strings', () => {
    for (let i = 0; pooledCount() < POOL_LIMIT; i++) intern(`filler ${i}`);
    const late = ['never', ' pooled'].join('');
    expect(intern(late)).toBe('never pooled');
    expect(pooledCount()).toBe(POOL_LIMIT);
    expect(intern('temperature')).toBe('temperature');
  });
});
