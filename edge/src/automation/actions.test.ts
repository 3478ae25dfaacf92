import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, harness, settle, until, type Harness } from '../testing/automation.ts';

describe('actions', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });
  const fire = (id: string, json: Record<string, unknown> = {}) => {
    const a = h.engine.get(id)!;
    expect(h.engine.handleWebhook(a.webhook_id!, json, 'local').status).toBe(200);
  };
  const hook = { platform: 'webhook' };

  it('service call with templated target and data; variables; event', async () => {
    h = await harness();
    const a = await h.create({
      alias: 'a',
      trigger: hook,
      action: [
        { variables: { level: '{{ trigger.json.level | int }}', double: '{{ level * 2 }}' } },
        {
          service: 'light.turn_on',
          target: { entity_id: '{{ trigger.json.light }}' },
          data: { brightness: '{{ double }}', fixed: 1 },
        },
        { event: 'done', event_data: { who: '{{ trigger.json.light }}' } },
      ],
    });
    fire(a.id, { level: '50', light: 'light.desk' });
    await until(() => h.events.fired.length === 2);
    expect(h.services.calls[0]).toMatchObject({
      domain: 'light',
      service: 'turn_on',
      data: { entity_id: 'light.desk', brightness: 100, fixed: 1 },
    });
    expect(h.events.fired).toEqual([
      { type: 'automation_triggered', data: { name: 'a', entity_id: `automation.${a.id}`, source: 'webhook' } },
      { type: 'done', data: { who: 'light.desk' } },
    ]);
  });

  it('condition action stops the run; stop ends it (error: true fails it)', async () => {
    h = await harness();
    h.states.set('input_boolean.guest', 'on');
    const a = await h.create({
      alias: 'c',
      trigger: hook,
      action: [
        { service: 'x.one' },
        { condition: 'state', entity_id: 'input_boolean.guest', state: 'off' },
        { service: 'x.two' },
      ],
    });
    fire(a.id);
    await until(() => h.engine.traces(a.id)[0]?.state === 'stopped');
    expect(h.services.calls.map((c) => c.service)).toEqual(['one']);
    const b = await h.create({ alias: 's', trigger: hook, action: [{ stop: 'enough' }, { service: 'x.never' }] });
    const c = await h.create({ alias: 'f', trigger: hook, action: [{ stop: 'broken', error: true }] });
    fire(b.id);
    fire(c.id);
    await until(() => h.engine.traces(c.id)[0]?.state === 'failed');
    expect(h.engine.traces(b.id)[0]).toMatchObject({ state: 'stopped', error: null });
    expect(h.engine.traces(c.id)[0]).toMatchObject({ state: 'failed', error: 'broken' });
    expect(h.services.calls.map((x) => x.service)).toEqual(['one']);
  });

  it('delay: duration and template', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    const a = await h.create({
      alias: 'd',
      trigger: hook,
      action: [
        { delay: '00:00:10' },
        { service: 'x.a' },
        { delay: '{{ trigger.json.s }}' },
        { service: 'x.b' },
        { delay: { minutes: 1 } },
        { service: 'x.c' },
      ],
    });
    fire(a.id, { s: 5 });
    await clock.advance(9_000);
    expect(h.services.calls).toHaveLength(0);
    await clock.advance(1_000);
    expect(h.services.calls.map((c) => c.service)).toEqual(['a']);
    await clock.advance(5_000);
    expect(h.services.calls.map((c) => c.service)).toEqual(['a', 'b']);
    await clock.advance(60_000);
    expect(h.services.calls.map((c) => c.service)).toEqual(['a', 'b', 'c']);
  });

  it('wait_for_trigger: triggered, timeout with continue, timeout with stop', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    const a = await h.create({
      alias: 'w',
      mode: 'parallel',
      trigger: hook,
      action: [
        { wait_for_trigger: { platform: 'state', entity_id: 'binary_sensor.door', to: 'on' }, timeout: 60 },
        { service: 'x.after', data: { got: "{{ wait.trigger.to_state.state if wait.trigger else 'timeout' }}" } },
      ],
    });
    fire(a.id);
    await clock.advance(5_000);
    h.states.set('binary_sensor.door', 'on');
    await clock.advance(0);
    expect(h.services.calls.map((c) => c.data.got)).toEqual(['on']);
    fire(a.id);
    await clock.advance(61_000);
    expect(h.services.calls.map((c) => c.data.got)).toEqual(['on', 'timeout']);
    const b = await h.create({
      alias: 'w2',
      trigger: hook,
      action: [
        {
          wait_for_trigger: [{ platform: 'event', event_type: 'go' }],
          timeout: '00:00:05',
          continue_on_timeout: false,
        },
        { service: 'x.never' },
      ],
    });
    fire(b.id);
    await clock.advance(6_000);
    expect(h.engine.traces(b.id)[0]).toMatchObject({ state: 'stopped' });
    expect(h.services.calls.map((c) => c.service)).not.toContain('never');
  });

  it('choose with conditions and default; if/then/else (HA)', async () => {
    h = await harness();
    const a = await h.create({
      alias: 'ch',
      mode: 'queued',
      trigger: hook,
      action: [
        {
          choose: [
            {
              conditions: [{ condition: 'template', value_template: '{{ trigger.json.n > 10 }}' }],
              sequence: [{ service: 'x.big' }],
            },
            { conditions: '{{ trigger.json.n > 5 }}', sequence: [{ service: 'x.mid' }] },
          ],
          default: [{ service: 'x.small' }],
        },
        {
          if: [{ condition: 'template', value_template: '{{ trigger.json.n == 1 }}' }],
          then: [{ action: 'x.one' }],
          else: [{ action: 'x.notone' }],
        },
      ],
    });
    for (const n of [20, 7, 1]) fire(a.id, { n });
    await until(() => h.services.calls.length === 6);
    expect(h.services.calls.map((c) => c.service)).toEqual(['big', 'notone', 'mid', 'notone', 'small', 'one']);
  });

  it('repeat: count, while, until, and the iteration cap', async () => {
    h = await harness({ deps: { maxRepeat: 50 } });
    h.states.set('counter.c', '0');
    const a = await h.create({
      alias: 'r',
      trigger: hook,
      action: [
        {
          repeat: {
            count: '{{ trigger.json.n }}',
            sequence: [
              {
                service: 'x.count',
                data: { i: '{{ repeat.index }}', first: '{{ repeat.first }}', last: '{{ repeat.last }}' },
              },
            ],
          },
        },
        { variables: { k: 0 } },
        {
          repeat: {
            while: [{ condition: 'template', value_template: '{{ k < 2 }}' }],
            sequence: [{ variables: { k: '{{ k + 1 }}' } }, { service: 'x.while' }],
          },
        },
        { repeat: { until: '{{ k >= 4 }}', sequence: [{ variables: { k: '{{ k + 1 }}' } }, { service: 'x.until' }] } },
      ],
    });
    fire(a.id, { n: 3 });
    await until(() => h.engine.traces(a.id)[0]?.state === 'finished');
    expect(h.services.calls.filter((c) => c.service === 'count').map((c) => c.data)).toEqual([
      { i: 1, first: true, last: false },
      { i: 2, first: false, last: false },
      { i: 3, first: false, last: true },
    ]);
    expect(h.services.calls.filter((c) => c.service === 'while')).toHaveLength(2);
    expect(h.services.calls.filter((c) => c.service === 'until')).toHaveLength(2);
    const forever = await h.create({
      alias: 'forever',
      trigger: hook,
      action: [{ repeat: { while: '{{ true }}', sequence: [{ variables: { x: 1 } }] } }],
    });
    fire(forever.id);
    await until(() => h.engine.traces(forever.id)[0]?.state === 'failed');
    expect(h.engine.traces(forever.id)[0].error).toBe('repeat stopped after 50 iterations (limit)');
  });

  it('a failing service fails the run (continue_on_error continues) without crashing', async () => {
    h = await harness();
    h.services.handler = (c) => {
      if (c.service === 'bad') throw new Error('device unreachable');
      return null;
    };
    const a = await h.create({
      alias: 'e',
      trigger: hook,
      action: [
        { service: 'x.bad', continue_on_error: true },
        { service: 'x.ok' },
        { service: 'x.bad' },
        { service: 'x.never' },
      ],
    });
    fire(a.id);
    await until(() => h.engine.traces(a.id)[0]?.state === 'failed');
    const t = h.engine.traces(a.id)[0];
    expect(t.error).toBe('device unreachable');
    expect(t.steps.map((s) => [s.path, s.error ?? null])).toEqual([
      ['action/0', 'device unreachable'],
      ['action/1', null],
      ['action/2', 'device unreachable'],
    ]);
    expect(h.services.calls.map((c) => c.service)).toEqual(['bad', 'ok', 'bad']);
  });
});

describe('conditions', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });
  it('state, numeric_state, time, template, and/or/not gate the run', async () => {
    const clock = new FakeClock(new Date(2026, 0, 5, 23, 0, 0).getTime()); // Monday 23:00
    h = await harness({ clock });
    h.states.set('sun.sun', 'below_horizon');
    h.states.set('sensor.lux', '12');
    const mk = (alias: string, condition: unknown) =>
      h.create({
        alias,
        mode: 'parallel',
        trigger: { platform: 'event', event_type: 'go' },
        condition,
        action: [{ service: `c.${alias}` }],
      });
    await mk('state_ok', { condition: 'state', entity_id: 'sun.sun', state: ['below_horizon', 'x'] });
    await mk('state_no', { condition: 'state', entity_id: 'sun.sun', state: 'above_horizon' });
    await mk('num_ok', { condition: 'numeric_state', entity_id: 'sensor.lux', below: 20, above: '10' });
    await mk('num_no', { condition: 'numeric_state', entity_id: 'sensor.lux', above: 20 });
    await mk('time_ok', { condition: 'time', after: '22:00', before: '06:00', weekday: 'mon' });
    await mk('time_no', { condition: 'time', after: '06:00', before: '22:00' });
    await mk('tpl_ok', { condition: 'template', value_template: "{{ is_state('sun.sun', 'below_horizon') }}" });
    await mk('tpl_no', "{{ states('sensor.lux') | float > 100 }}");
    await mk('and_ok', {
      condition: 'and',
      conditions: [
        { condition: 'state', entity_id: 'sun.sun', state: 'below_horizon' },
        { condition: 'numeric_state', entity_id: 'sensor.lux', below: 50 },
      ],
    });
    await mk('or_ok', {
      condition: 'or',
      conditions: [
        { condition: 'state', entity_id: 'sun.sun', state: 'nope' },
        { condition: 'numeric_state', entity_id: 'sensor.lux', below: 50 },
      ],
    });
    await mk('not_ok', {
      condition: 'not',
      conditions: [{ condition: 'state', entity_id: 'sun.sun', state: 'above_horizon' }],
    });
    await mk('not_no', {
      condition: 'not',
      conditions: { condition: 'state', entity_id: 'sun.sun', state: 'below_horizon' },
    });
    h.events.fire('go', {});
    await settle();
    expect(h.services.calls.map((c) => c.service).sort()).toEqual([
      'and_ok',
      'not_ok',
      'num_ok',
      'or_ok',
      'state_ok',
      'time_ok',
      'tpl_ok',
    ]);
    const failed = h.engine.list().find((a) => a.alias === 'state_no')!;
    expect(h.engine.traces(failed.id)[0]).toMatchObject({
      state: 'stopped',
      steps: [{ path: 'condition/0', result: { result: false } }],
    });
  });
});

describe('modes', () => {
  let h: Harness;
  let clock: FakeClock;
  afterEach(async () => {
    await h?.close();
  });
  const body = (mode: string, extra: Record<string, unknown> = {}) => ({
    alias: mode,
    mode,
    ...extra,
    trigger: { platform: 'event', event_type: 'go' },
    action: [
      { service: 'x.start', data: { n: '{{ trigger.event.data.n }}' } },
      { delay: 10 },
      { service: 'x.end', data: { n: '{{ trigger.event.data.n }}' } },
    ],
  });
  const go = (n: number) => h.events.fire('go', { n });
  const ends = () => h.services.calls.filter((c) => c.service === 'end').map((c) => c.data.n);

  it('single drops a trigger while running (and records it)', async () => {
    clock = new FakeClock();
    h = await harness({ clock });
    const a = await h.create(body('single'));
    go(1);
    await clock.advance(1000);
    go(2);
    await clock.advance(20_000);
    expect(ends()).toEqual([1]);
    expect(
      h.engine
        .traces(a.id)
        .map((t) => t.state)
        .sort(),
    ).toEqual(['aborted', 'finished']);
    expect(h.engine.traces(a.id).find((t) => t.state === 'aborted')!.error).toContain('already running');
  });

  it('restart cancels the running run', async () => {
    clock = new FakeClock();
    h = await harness({ clock });
    const a = await h.create(body('restart'));
    go(1);
    await clock.advance(5000);
    go(2);
    await clock.advance(20_000);
    expect(ends()).toEqual([2]);
    expect(h.engine.traces(a.id).map((t) => t.state)).toEqual(['finished', 'aborted']);
  });

  it('queued runs one after another up to max', async () => {
    clock = new FakeClock();
    h = await harness({ clock });
    await h.create(body('queued', { max: 2 }));
    go(1);
    await clock.advance(0);
    go(2);
    go(3);
    await clock.advance(10_000);
    expect(ends()).toEqual([1]);
    await clock.advance(10_000);
    expect(ends()).toEqual([1, 2]);
    await clock.advance(30_000);
    expect(ends()).toEqual([1, 2]); // 3 was dropped: 1 running + 1 queued = max 2
  });

  it('parallel runs concurrently up to max', async () => {
    clock = new FakeClock();
    h = await harness({ clock });
    await h.create(body('parallel', { max: 2 }));
    go(1);
    go(2);
    go(3);
    await clock.advance(10_000);
    expect(ends().sort()).toEqual([1, 2]);
  });
});

describe('trigger variables', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });
  it('are rendered per trigger and visible to conditions and actions', async () => {
    h = await harness();
    await h.create({
      alias: 'tv',
      mode: 'queued',
      trigger: [
        {
          platform: 'event',
          event_type: 'a',
          variables: { room: 'kitchen', level: '{{ trigger.event.data.l * 10 }}' },
        },
        { platform: 'event', event_type: 'b', variables: { room: 'hall', level: 0 } },
      ],
      condition: '{{ level < 100 }}',
      action: [{ service: 'x.set', data: { room: '{{ room }}', level: '{{ level }}' } }],
    });
    h.events.fire('a', { l: 5 });
    h.events.fire('a', { l: 50 });
    h.events.fire('b', {});
    await until(() => h.services.calls.length === 2);
    expect(h.services.calls.map((c) => c.data)).toEqual([
      { room: 'kitchen', level: 50 },
      { room: 'hall', level: 0 },
    ]);
  });
});
