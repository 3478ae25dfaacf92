import { AutomationBody } from '@smarthome/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, harness, until, type Harness } from '../testing/automation.ts';

/** Home Assistant features users paste: automation `variables:`, time functions, webhook allowed_methods. */

describe('automation-level variables', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });
  const fire = (webhookId: string, json: Record<string, unknown>) =>
    expect(h.engine.handleWebhook(webhookId, json, 'local').status).toBe(200);

  it('are rendered once per run, in order, with trigger and trigger variables, before conditions; actions see (and may override) them', async () => {
    h = await harness();
    // HA's newer spelling, as pasted
    const a = await h.create({
      alias: 'vars',
      mode: 'parallel',
      triggers: [{ trigger: 'webhook', variables: { who: '{{ trigger.json.name }}' } }],
      variables: {
        level: '{{ trigger.json.level | int }}',
        double: '{{ level * 2 }}',
        greeting: 'hi {{ who }}',
        fixed: { n: 1, list: ['{{ level }}'] },
        plain: 3,
      },
      conditions: ['{{ level > 10 }}'],
      actions: [
        {
          action: 'x.first',
          data: {
            double: '{{ double }}',
            greeting: '{{ greeting }}',
            fixed: '{{ fixed | to_json }}',
            plain: '{{ plain }}',
            id: '{{ trigger.id }}',
          },
        },
        { variables: { double: '{{ double + 1 }}' } },
        { action: 'x.second', data: { double: '{{ double }}' } },
      ],
    });
    expect(h.engine.get(a.id)?.variables).toEqual({
      level: '{{ trigger.json.level | int }}',
      double: '{{ level * 2 }}',
      greeting: 'hi {{ who }}',
      fixed: { n: 1, list: ['{{ level }}'] },
      plain: 3,
    });
    fire(a.webhook_id!, { level: '50', name: 'ann' });
    fire(a.webhook_id!, { level: '5', name: 'bob' }); // condition on a variable: no run
    await until(() => h.services.calls.length === 2 && h.engine.traces(a.id).length === 2);
    expect(h.services.calls.map((c) => [c.service, c.data])).toEqual([
      ['first', { double: 100, greeting: 'hi ann', fixed: { n: 1, list: [50] }, plain: 3, id: 0 }],
      ['second', { double: 101 }],
    ]);
    const [stopped] = h.engine.traces(a.id).filter((t) => t.state === 'stopped');
    expect(stopped.steps).toEqual([expect.objectContaining({ path: 'condition/0', result: { result: false } })]);
  });

  it('are kept with the definition across a restart, and a definition without them has no variables field', async () => {
    h = await harness();
    const a = await h.create({
      alias: 'v',
      trigger: { platform: 'webhook' },
      variables: { n: '{{ trigger.json.n + 1 }}' },
      action: [{ service: 'x.y', data: { n: '{{ n }}' } }],
    });
    const b = await h.create({ alias: 'none', trigger: { platform: 'webhook' }, action: [{ service: 'x.z' }] });
    expect('variables' in b).toBe(false);
    await h.restart();
    expect('variables' in h.engine.get(b.id)!).toBe(false);
    fire(a.webhook_id!, { n: 1 });
    await until(() => h.services.calls.length === 1);
    expect(h.services.calls[0].data).toEqual({ n: 2 });
  });

  it('triggerNow renders them too (conditions skipped)', async () => {
    h = await harness();
    const a = await h.create({
      alias: 'manual',
      trigger: { platform: 'webhook' },
      variables: { src: "{{ trigger.platform | default('manual', true) }}" },
      condition: '{{ false }}',
      action: [{ service: 'x.y', data: { src: '{{ src }}' } }],
    });
    h.engine.triggerNow(a.id);
    await until(() => h.services.calls.length === 1);
    expect(h.services.calls[0].data).toEqual({ src: 'manual' });
  });

  it('a bad template is a 400 naming the variable; a render failure fails the run with a trace', async () => {
    h = await harness();
    await expect(
      h.create({
        alias: 'bad',
        trigger: { platform: 'webhook' },
        variables: { x: '{{ trigger.json.x ' },
        action: [{ service: 'x.y' }],
      }),
    ).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^variables\.x: /) });
    let deep: Record<string, unknown> = { v: '{{ 1 }}' };
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const a = await h.create({
      alias: 'deep',
      trigger: { platform: 'webhook' },
      variables: { deep },
      action: [{ service: 'x.never' }],
    });
    fire(a.webhook_id!, {});
    await until(() => h.engine.traces(a.id).length === 1);
    expect(h.engine.traces(a.id)[0]).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/^variables: .*nested too deeply/),
      steps: [{ path: 'variables' }],
    });
    expect(h.services.calls).toHaveLength(0);
  });
});

describe('time functions in automations use the engine clock', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  it('now(), utcnow(), as_timestamp and today_at in variables, conditions and actions (and after a delay)', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 12, 0, 0)); // a Monday, 12:00 UTC
    h = await harness({ clock });
    const start = clock.now();
    const local = new Date(start);
    const a = await h.create({
      alias: 'clock',
      trigger: { platform: 'webhook' },
      variables: { started: '{{ as_timestamp(now()) }}', hour: '{{ now().hour }}' },
      condition: ["{{ now() > today_at('00:00') }}", '{{ utcnow().weekday() == 0 }}'],
      action: [
        {
          service: 'x.a',
          data: {
            started: '{{ started }}',
            hour: '{{ hour }}',
            utc: '{{ utcnow().hour }}',
            day: '{{ now().weekday() }}',
            midnight: "{{ as_timestamp(today_at('00:00')) }}",
          },
        },
        { delay: 90 },
        { service: 'x.b', data: { elapsed: '{{ (now() | as_timestamp) - started }}' } },
      ],
    });
    h.engine.handleWebhook(a.webhook_id!, {}, 'local');
    await clock.advance(0);
    expect(h.services.calls[0].data).toEqual({
      started: start / 1000,
      hour: local.getHours(),
      utc: 12,
      day: (local.getDay() + 6) % 7,
      midnight: new Date(local.getFullYear(), local.getMonth(), local.getDate()).getTime() / 1000,
    });
    await clock.advance(90_000);
    expect(h.services.calls[1].data).toEqual({ elapsed: 90 });
  });
});

describe('webhook allowed_methods', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  it("accepts HA's lists that include POST (the receiver is POST-only) and names the field otherwise", async () => {
    const parse = (allowed: unknown) =>
      AutomationBody.safeParse({
        alias: 'w',
        trigger: [{ platform: 'webhook', allowed_methods: allowed }],
        action: [],
      });
    expect(parse(['POST', 'PUT']).success).toBe(true);
    expect(parse(['POST']).success).toBe(true);
    for (const bad of [['PUT'], ['GET', 'HEAD'], []]) {
      const r = parse(bad);
      expect(r.success).toBe(false);
      expect(r.error!.issues[0].path).toEqual(['trigger', 0, 'allowed_methods']);
    }
    expect(parse(['PATCH']).success).toBe(false);
    expect(parse(['PUT']).error!.issues[0].message).toMatch(/must include POST/);

    h = await harness();
    const a = await h.create({
      alias: 'ha',
      triggers: [{ trigger: 'webhook', allowed_methods: ['POST', 'PUT'], local_only: false }],
      actions: [{ action: 'x.y', data: { v: '{{ trigger.json.v }}' } }],
    });
    expect(h.engine.get(a.id)?.trigger[0]).toMatchObject({
      platform: 'webhook',
      allowed_methods: ['POST', 'PUT'],
      webhook_id: a.webhook_id,
    });
    expect(h.engine.handleWebhook(a.webhook_id!, { v: 1 }, 'cloud').status).toBe(200);
    await until(() => h.services.calls.length === 1);
    expect(h.engine.traces(a.id)[0].trigger).toMatchObject({ method: 'POST', origin: 'cloud' });
  });
});
