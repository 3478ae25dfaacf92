import { describe, expect, it } from 'vitest';
import { TextError, fromText, lineOfPath, splitPath, toText } from './text.ts';

const yamlText = `alias: Hall
triggers:
  - trigger: state
    entity_id: binary_sensor.hall
  - platform: teleport
actions:
  action: light.turn_on
  data:
    brightness: 10
`;

describe('automation editor text', () => {
  it('splits the API message into the path and the words', () => {
    expect(splitPath('trigger[1].platform: Invalid discriminator value')).toEqual({
      path: ['trigger', 1, 'platform'],
      text: 'Invalid discriminator value',
    });
    expect(splitPath('action[0].data.x: template does not parse')?.path).toEqual(['action', 0, 'data', 'x']);
    expect(splitPath('body must be a JSON object')).toBeNull();
  });

  it("finds the line of a path in YAML, through HA's spellings and a single item written without a list", async () => {
    expect(await lineOfPath(yamlText, ['trigger', 1, 'platform'])).toBe(5);
    expect(await lineOfPath(yamlText, ['trigger', 0, 'platform'])).toBe(3);
    expect(await lineOfPath(yamlText, ['action', 0, 'data', 'brightness'])).toBe(9);
    expect(await lineOfPath(yamlText, ['action', 0, 'service'])).toBe(7);
    // a path the text lacks: its deepest existing part (here the whole list item)
    expect(await lineOfPath(yamlText, ['trigger', 0, 'to'])).toBe(3);
    expect(await lineOfPath(yamlText, ['mode'])).toBe(1);
  });

  it('finds the line of a path in JSON', async () => {
    const json = await toText(
      { alias: 'x', trigger: [{ platform: 'state' }, { platform: 'bad' }], action: [] },
      'json',
    );
    expect(json.split('\n')[(await lineOfPath(json, ['trigger', 1, 'platform'])) - 1].trim()).toBe('"platform": "bad"');
  });

  it('parses both modes and places syntax errors on their line', async () => {
    expect(await fromText(yamlText, 'yaml')).toMatchObject({ alias: 'Hall' });
    expect(await fromText(await toText({ alias: 'x' }, 'yaml'), 'yaml')).toEqual({ alias: 'x' });
    const bad = (text: string, mode: 'yaml' | 'json') =>
      fromText(text, mode).then(
        () => null,
        (e: unknown) => [(e as TextError).line, e instanceof TextError],
      );
    expect(await bad('alias: x\ntrigger: [\n', 'yaml')).toEqual([3, true]);
    expect(await bad('{\n  "alias": "x",\n  "trigger" []\n}', 'json')).toEqual([3, true]);
    expect(await bad('- 1\n- 2\n', 'yaml')).toEqual([1, true]);
  });
});
