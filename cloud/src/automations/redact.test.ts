import { describe, expect, it } from 'vitest';
import { REDACTED, looksSecret, redactAutomationSecrets, redactTraceSecrets } from './redact.ts';

const R = REDACTED;

describe('redactAutomationSecrets', () => {
  it('hides call_url header values and URL passwords, wherever the action sits, and nothing else', () => {
    const automation = {
      id: 'a1',
      alias: 'Notify',
      trigger: [{ platform: 'state', entity_id: 'light.x' }],
      action: [
        {
          call_url: {
            method: 'POST',
            url: 'https://bot:s3cret@hooks.example.com/x?y=1',
            headers: { Authorization: 'Bearer abc', 'X-Key': 'k' },
            body: { a: 1 },
          },
        },
        {
          choose: [
            {
              conditions: [],
              sequence: [{ call_url: { url: 'https://{{ host }}/p', headers: { Authorization: 'Bearer def' } } }],
            },
          ],
        },
        { service: 'light.turn_on', data: { headers: 'not a call_url' } },
      ],
    };
    const out = redactAutomationSecrets(automation);
    expect(out.action[0]).toEqual({
      call_url: {
        method: 'POST',
        url: `https://bot:${R}@hooks.example.com/x?y=1`,
        headers: { Authorization: R, 'X-Key': R },
        body: { a: 1 },
      },
    });
    expect((out.action[1] as any).choose[0].sequence[0].call_url).toEqual({
      url: 'https://{{ host }}/p',
      headers: { Authorization: R },
    });
    expect(out.action[2]).toEqual(automation.action[2]);
    expect(automation.action[0]).toMatchObject({ call_url: { headers: { Authorization: 'Bearer abc' } } });
    expect(JSON.stringify(out)).not.toMatch(/abc|def|s3cret/);
  });

  it('hides URL query parameters whose name looks secret, keeping the others and any template around them', () => {
    const url =
      'https://api.example.com/send?chat=42&token=abc123&apiKey=k1&X-Signature=s1&sig=s2&TOKEN=t2&api%5Fkey=k2' +
      "&access_token={{ states('input_text.t') }}&monkey=banana&author=ann&flag#frag";
    const out = redactAutomationSecrets({ action: [{ call_url: { url } }] });
    expect(out.action[0].call_url.url).toBe(
      `https://api.example.com/send?chat=42&token=${R}&apiKey=${R}&X-Signature=${R}&sig=${R}&TOKEN=${R}&api%5Fkey=${R}` +
        `&access_token=${R}&monkey=banana&author=ann&flag#frag`,
    );
    // a user:password@ and a secret query parameter in one URL
    expect(redactAutomationSecrets({ call_url: { url: 'https://u:pw@h.example/p?password=x&q=1' } }).call_url.url).toBe(
      `https://u:${R}@h.example/p?password=${R}&q=1`,
    );
  });

  it('hides body fields whose name looks secret: nested JSON bodies, JSON text bodies, form-encoded bodies', () => {
    const body = {
      user: 'bob',
      password: 'p1',
      count: 3,
      author: 'Ann',
      keyword: 'kept',
      nested: { client_secret: 'cs', list: [{ api_key: 'k', name: 'n' }], sessionId: 's' },
      auth: { user: 'x', pass: 'y' },
      pin: 1234,
      enabled: true,
      refresh_token: null,
    };
    const out = redactAutomationSecrets({ call_url: { url: 'https://h.example/', body } });
    expect(out.call_url.body).toEqual({
      user: 'bob',
      password: R,
      count: 3,
      author: 'Ann',
      keyword: 'kept',
      nested: { client_secret: R, list: [{ api_key: R, name: 'n' }], sessionId: R },
      auth: R,
      pin: R,
      enabled: true,
      refresh_token: null,
    });

    const json = redactAutomationSecrets({
      call_url: { url: 'https://h.example/', body: '{"token":"t1","msg":"hi {{ x }}","deep":{"Secret":"s"}}' },
    });
    expect(JSON.parse(json.call_url.body)).toEqual({ token: R, msg: 'hi {{ x }}', deep: { Secret: R } });

    // not JSON because of a template outside a string: the "name": value pairs are still found
    const templated = redactAutomationSecrets({
      call_url: {
        url: 'https://h.example/',
        body: '{"pin": {{ states("input_number.pin") }}, "password": "p w", "msg": "hi"}',
      },
    });
    expect(templated.call_url.body).toBe(`{"pin": "${R}", "password": "${R}", "msg": "hi"}`);

    const form = redactAutomationSecrets({
      call_url: { url: 'https://h.example/', body: 'user=bob&password=p%40ss&client_secret={{ s }}&note=x' },
    });
    expect(form.call_url.body).toBe(`user=bob&password=${R}&client_secret=${R}&note=x`);

    // plain text is left alone
    expect(
      redactAutomationSecrets({ call_url: { url: 'https://h.example/', body: 'hello token' } }).call_url.body,
    ).toBe('hello token');
  });

  it('hides every value the owner marked secret, wherever it appears in the definition, and the list itself', () => {
    const automation = {
      alias: 'Door code',
      description: 'uses 8841-alpha',
      secrets: ['8841-alpha', 'rooftop-cam-key'],
      trigger: [{ platform: 'mqtt', topic: 'door/8841-alpha/open' }],
      condition: [{ condition: 'template', value_template: "{{ trigger.payload == '8841-alpha' }}" }],
      action: [
        { service: 'lock.unlock', target: { entity_id: 'lock.front' }, data: { code: '8841-alpha' } },
        { call_url: { url: 'https://cam.example/rooftop-cam-key/snap', body: 'k=rooftop-cam-key' } },
        { event: 'door', event_data: { note: 'opened with 8841-alpha' } },
      ],
    };
    const out = redactAutomationSecrets(automation);
    expect(out.secrets).toEqual([R, R]);
    expect(out.description).toBe(`uses ${R}`);
    expect(out.trigger[0].topic).toBe(`door/${R}/open`);
    expect(out.action[0]).toEqual({ service: 'lock.unlock', target: { entity_id: 'lock.front' }, data: { code: R } });
    expect(out.action[1]).toEqual({ call_url: { url: `https://cam.example/${R}/snap`, body: `k=${R}` } });
    expect(JSON.stringify(out)).not.toMatch(/8841|rooftop/);
    // the owner's copy is untouched
    expect(automation.secrets).toEqual(['8841-alpha', 'rooftop-cam-key']);
  });
});

describe('redactTraceSecrets', () => {
  it('hides secrets in the URLs a run called and the values marked secret', () => {
    const traces = [
      {
        run_id: 'r1',
        trigger: { platform: 'webhook', json: { note: 'with 8841-alpha' } },
        steps: [
          { path: 'action/0', result: { method: 'GET', url: 'https://u:pw@h.example/p?token=abc&q=1', status: 200 } },
          {
            path: 'action/1',
            result: { service: 'lock.unlock', data: { code: '8841-alpha', entity_id: 'lock.front' } },
          },
        ],
      },
    ];
    const out = redactTraceSecrets(traces, ['8841-alpha']);
    expect(out[0].steps[0].result).toEqual({
      method: 'GET',
      url: `https://u:${R}@h.example/p?token=${R}&q=1`,
      status: 200,
    });
    expect(out[0].steps[1].result).toEqual({ service: 'lock.unlock', data: { code: R, entity_id: 'lock.front' } });
    expect(out[0].trigger).toEqual({ platform: 'webhook', json: { note: `with ${R}` } });
  });
});

describe('looksSecret', () => {
  it('matches secret-looking names by substring or by word, case-insensitively', () => {
    for (const name of [
      'token',
      'access_token',
      'X-Auth-Token',
      'apiKey',
      'API_KEY',
      'apikey',
      'x-api-key',
      'key',
      'secret',
      'clientSecret',
      'password',
      'passwd',
      'pwd',
      'pass',
      'auth',
      'authorization',
      'signature',
      'sig',
      'X-Hub-Signature-256',
      'private_key',
      'sessionid',
      'pin',
      'credentials',
    ]) {
      expect(looksSecret(name), name).toBe(true);
    }
    for (const name of [
      'monkey',
      'keyword',
      'author',
      'signal',
      'design',
      'chat',
      'q',
      'user',
      'compass',
      'spinner',
      'passenger',
    ]) {
      expect(looksSecret(name), name).toBe(false);
    }
  });
});
