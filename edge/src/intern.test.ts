import { describe, expect, it } from 'vitest';
import { intern, internValues } from './intern.ts';

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
});
