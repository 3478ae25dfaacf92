import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.ts';
import { harness, settle, until, type Harness } from '../testing/automation.ts';

/** Event triggers and event actions on the engine's event bus port (in-memory bus). */
describe('events', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });
  const custom = () => h.events.events.filter((e) => e.event.event_type !== 'automation_triggered');

  it('an event trigger fires on a matching event_data and context, not on a mismatch', async () => {
    h = await harness();
    await h.create({
      alias: 'bell',
      mode: 'queued',
      trigger: { platform: 'event', event_type: ['doorbell', 'knock'], event_data: { button: 'front' } },
      action: [
        {
          service: 'x.ring',
          data: { type: '{{ trigger.event.event_type }}', extra: '{{ trigger.event.data.extra }}' },
        },
      ],
    });
    await h.create({
      alias: 'ctx',
      trigger: { platform: 'event', event_type: 'doorbell', context: { user_id: ['u1'] } },
      action: [{ service: 'x.ctx' }],
    });
    h.events.fire('doorbell', { button: 'back' });
    h.events.fire('doorbell', { button: 'front', extra: 7 });
    h.events.fire('knock', { button: 'front', extra: 8 });
    h.events.fire('other', { button: 'front' });
    await until(() => h.services.calls.length === 2);
    await settle();
    expect(h.services.calls.map((c) => [c.service, c.data])).toEqual([
      ['ring', { type: 'doorbell', extra: 7 }],
      ['ring', { type: 'knock', extra: 8 }],
    ]);
  });

  it("an event action fires an event that another automation's event trigger sees, with HA's trigger.event", async () => {
    h = await harness();
    const a = await h.create({
      alias: 'A',
      trigger: { platform: 'webhook' },
      action: [
        {
          event: 'arrived',
          event_data: { who: '{{ trigger.json.who }}', fixed: 1 },
          event_data_template: { room: '{{ trigger.json.room }}' },
        },
      ],
    });
    const b = await h.create({
      alias: 'B',
      trigger: { platform: 'event', event_type: 'arrived', event_data: { fixed: 1 } },
      action: [
        {
          service: 'x.greet',
          data: {
            who: '{{ trigger.event.data.who }}',
            room: '{{ trigger.event.data.room }}',
            origin: '{{ trigger.event.origin }}',
          },
        },
      ],
    });
    expect(h.engine.handleWebhook(a.webhook_id!, { who: 'ann', room: 'hall' }, 'local')).toEqual({ status: 200 });
    await until(() => h.services.calls.length === 1);
    expect(h.services.calls[0].data).toEqual({ who: 'ann', room: 'hall', origin: 'LOCAL' });
    await until(() => h.engine.traces(b.id)[0]?.state === 'finished');
    const runA = h.engine.traces(a.id)[0];
    const trigger = h.engine.traces(b.id)[0].trigger as { platform: string; event: Record<string, any> };
    expect(trigger.platform).toBe('event');
    expect(trigger.event).toEqual({
      event_type: 'arrived',
      data: { who: 'ann', fixed: 1, room: 'hall' },
      origin: 'LOCAL',
      time_fired: expect.any(String),
      // the event's context is a child of A's run
      context: { id: expect.any(String), parent_id: runA.run_id, user_id: null },
    });
    // and B's run announced itself: automation_triggered with name, entity_id and source
    expect(h.events.fired).toContainEqual({
      type: 'automation_triggered',
      data: { name: 'B', entity_id: `automation.${b.id}`, source: "event 'arrived'" },
    });
  });

  it('automation_triggered of one automation can trigger another', async () => {
    h = await harness();
    const a = await h.create({ alias: 'A', trigger: { platform: 'webhook' }, action: [{ service: 'x.a' }] });
    await h.create({
      alias: 'watch',
      trigger: {
        platform: 'event',
        event_type: 'automation_triggered',
        event_data: { entity_id: `automation.${a.id}` },
      },
      action: [
        {
          service: 'x.watch',
          data: { name: '{{ trigger.event.data.name }}', source: '{{ trigger.event.data.source }}' },
        },
      ],
    });
    h.engine.handleWebhook(a.webhook_id!, {}, 'local');
    await until(() => h.services.calls.some((c) => c.service === 'watch'));
    expect(h.services.calls.find((c) => c.service === 'watch')!.data).toEqual({ name: 'A', source: 'webhook' });
  });

  it('an automation whose action fires its own trigger event neither recurses nor runs away', async () => {
    const warnings: string[] = [];
    h = await harness({
      deps: {
        traceRetention: 50,
        log: {
          debug() {},
          info() {},
          warn: (m: string) => {
            warnings.push(m);
          },
          error() {},
        },
      },
    });
    const loop = await h.create({
      alias: 'loop',
      mode: 'parallel',
      max: 5,
      trigger: { platform: 'event', event_type: 'ping' },
      action: [{ service: 'x.pong' }, { event: 'ping', event_data: { n: '{{ trigger.event.data.n + 1 }}' } }],
    });
    h.events.fire('ping', { n: 0 });
    // delivery is deferred: nothing ran inside fire()
    expect(h.services.calls).toHaveLength(0);
    await until(() => warnings.some((w) => w.includes('a loop?')));
    await settle(20);
    // 20 runs in a row, then the 21st is dropped and recorded; nothing more
    expect(h.services.calls).toHaveLength(20);
    const traces = h.engine.traces(loop.id);
    expect(traces.filter((t) => t.state === 'finished')).toHaveLength(20);
    expect(traces.filter((t) => t.state === 'aborted').map((t) => t.error)).toEqual([
      'dropped: 20 automation runs in a row fired events that triggered each other (a loop?)',
    ]);
    expect(custom().map((e) => e.event.data.n)).toEqual([0, ...Array.from({ length: 20 }, (_, i) => i + 1)]);
    await new Promise((r) => setTimeout(r, 50));
    expect(h.services.calls).toHaveLength(20);
  });

  it('an automation triggered by its own automation_triggered stops too', async () => {
    h = await harness();
    const self = await h.create({
      alias: 'self',
      trigger: [{ platform: 'webhook' }, { platform: 'event', event_type: 'automation_triggered' }],
      condition: [],
      action: [{ service: 'x.self' }],
    });
    h.engine.handleWebhook(self.webhook_id!, {}, 'local');
    await until(() =>
      h.engine.traces(self.id).some((t) => t.state === 'aborted' && t.error?.includes('a loop?') === true),
    );
    await settle(20);
    expect(h.services.calls).toHaveLength(20);
  });

  it('logs through the structured logger: lines about a run carry automation_id and run_id', async () => {
    const lines: { msg: string; fields?: Record<string, unknown> }[] = [];
    h = await harness({
      deps: {
        log: {
          ...silentLogger,
          warn: (msg, fields) => {
            lines.push({ msg, fields });
          },
        },
      },
    });
    const a = await h.create({
      alias: 'slow',
      mode: 'single',
      trigger: { platform: 'webhook' },
      action: [{ delay: 5 }],
    });
    h.engine.handleWebhook(a.webhook_id!, {}, 'local');
    h.engine.handleWebhook(a.webhook_id!, {}, 'local');
    await until(() => h.engine.traces(a.id).some((t) => t.state === 'aborted'));
    const dropped = h.engine.traces(a.id).find((t) => t.state === 'aborted')!;
    expect(lines).toEqual([
      {
        msg: 'trigger dropped, already running (mode single)',
        fields: { automation_id: a.id, alias: 'slow', run_id: dropped.run_id },
      },
    ]);
  });
});
