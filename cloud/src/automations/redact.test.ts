import { describe, expect, it } from 'vitest';
import { REDACTED, redactAutomationSecrets } from './redact.ts';

describe('redactAutomationSecrets', () => {
  it('hides call_url header values and URL passwords, wherever the action sits, and nothing else', () => {
    const automation = {
      id: 'a1', alias: 'Notify', trigger: [{ platform: 'state', entity_id: 'light.x' }],
      action: [
        { call_url: { method: 'POST', url: 'https://bot:s3cret@hooks.example.com/x?y=1', headers: { Authorization: 'Bearer abc', 'X-Key': 'k' }, body: { a: 1 } } },
        { choose: [{ conditions: [], sequence: [{ call_url: { url: 'https://{{ host }}/p', headers: { Authorization: 'Bearer def' } } }] }] },
        { service: 'light.turn_on', data: { headers: 'not a call_url' } },
      ],
    };
    const out = redactAutomationSecrets(automation);
    expect(out.action[0]).toEqual({ call_url: { method: 'POST', url: `https://bot:${REDACTED}@hooks.example.com/x?y=1`, headers: { Authorization: REDACTED, 'X-Key': REDACTED }, body: { a: 1 } } });
    expect((out.action[1] as any).choose[0].sequence[0].call_url).toEqual({ url: 'https://{{ host }}/p', headers: { Authorization: REDACTED } });
    expect(out.action[2]).toEqual(automation.action[2]);
    expect(automation.action[0]).toMatchObject({ call_url: { headers: { Authorization: 'Bearer abc' } } });
    expect(JSON.stringify(out)).not.toMatch(/abc|def|s3cret/);
  });
});
