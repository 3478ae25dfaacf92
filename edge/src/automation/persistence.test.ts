import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, harness, type Harness } from '../testing/automation.ts';

describe('survives restarts', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  it('a pending delay resumes on a new engine (same db file) and runs the remaining actions when due', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    const a = await h.create({
      alias: 'later',
      trigger: { platform: 'webhook' },
      action: [
        { service: 'x.first', data: { v: '{{ trigger.json.v }}' } },
        { variables: { note: 'kept {{ trigger.json.v }}' } },
        {
          choose: [
            {
              conditions: '{{ true }}',
              sequence: [
                { delay: '00:10:00' },
                { service: 'x.second', data: { v: '{{ trigger.json.v }}', note: '{{ note }}' } },
              ],
            },
          ],
        },
        { service: 'x.third' },
      ],
    });
    h.engine.handleWebhook(a.webhook_id!, { v: 7 }, 'local');
    await clock.advance(60_000);
    expect(h.services.calls.map((c) => c.service)).toEqual(['first']);
    const row = h.sqlite.prepare('SELECT kind, step_path, due_at FROM automation_timers').all();
    expect(row).toEqual([
      { kind: 'delay', step_path: 'action/2/choose/0/sequence/0', due_at: clock.now() + 9 * 60_000 },
    ]);
    expect(h.engine.traces(a.id)[0].state).toBe('running');

    await h.restart();
    await clock.advance(8 * 60_000);
    expect(h.services.calls.map((c) => c.service)).toEqual(['first']);
    await clock.advance(60_000);
    expect(h.services.calls.map((c) => [c.service, c.data])).toEqual([
      ['first', { v: 7 }],
      ['second', { v: 7, note: 'kept 7' }],
      ['third', {}],
    ]);
    const trace = h.engine.traces(a.id)[0];
    expect(trace.state).toBe('finished');
    expect(trace.steps.map((s) => s.path)).toEqual([
      'action/0',
      'action/1',
      'action/2/choose/0/sequence/0',
      'action/2/choose/0/sequence/1',
      'action/2',
      'action/3',
    ]);
    expect(h.sqlite.prepare('SELECT count(*) AS n FROM automation_timers').get()).toEqual({ n: 0 });
  });

  it('an overdue delay runs promptly after the restart', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    const a = await h.create({
      alias: 'overdue',
      trigger: { platform: 'webhook' },
      action: [{ delay: 30 }, { service: 'x.done' }],
    });
    h.engine.handleWebhook(a.webhook_id!, {}, 'local');
    await clock.advance(1000);
    await h.engine.stop();
    clock.set(clock.now() + 3600_000); // down for an hour
    await h.restart();
    await clock.advance(0);
    expect(h.services.calls.map((c) => c.service)).toEqual(['done']);
  });

  it('a wait_for_trigger (with its remaining timeout) resumes in a repeat', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    const a = await h.create({
      alias: 'wait',
      trigger: { platform: 'webhook' },
      action: [
        {
          repeat: {
            count: 2,
            sequence: [
              { wait_for_trigger: { platform: 'event', event_type: 'go' }, timeout: 60 },
              {
                service: 'x.step',
                data: {
                  i: '{{ repeat.index }}',
                  got: "{{ wait.trigger.event.data.n if wait.trigger else 'timeout' }}",
                },
              },
            ],
          },
        },
      ],
    });
    h.engine.handleWebhook(a.webhook_id!, {}, 'local');
    await clock.advance(1000);
    h.events.fire('go', { n: 1 });
    await clock.advance(1000);
    expect(h.services.calls.map((c) => c.data)).toEqual([{ i: 1, got: 1 }]);
    await clock.advance(10_000); // second iteration waiting, 49 s left
    await h.restart();
    h.events.fire('go', { n: 2 });
    await clock.advance(0);
    expect(h.services.calls.map((c) => c.data)).toEqual([
      { i: 1, got: 1 },
      { i: 2, got: 2 },
    ]);
    expect(h.engine.traces(a.id)[0].state).toBe('finished');
  });

  it('a state trigger `for:` timer resumes (and is dropped when the state no longer holds)', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    h.states.set('binary_sensor.door', 'off');
    h.states.set('binary_sensor.window', 'off');
    await h.create({
      alias: 'open',
      mode: 'parallel',
      trigger: [
        {
          platform: 'state',
          entity_id: ['binary_sensor.door', 'binary_sensor.window'],
          to: 'on',
          for: { minutes: 10 },
        },
      ],
      action: [{ service: 'notify.send', data: { e: '{{ trigger.entity_id }}' } }],
    });
    h.states.set('binary_sensor.door', 'on');
    h.states.set('binary_sensor.window', 'on');
    await clock.advance(5 * 60_000);
    expect(h.sqlite.prepare('SELECT count(*) AS n FROM automation_timers WHERE kind = ?').get('for')).toEqual({ n: 2 });
    await h.engine.stop();
    h.states.set('binary_sensor.window', 'off'); // changed while the engine was down
    await h.restart();
    await clock.advance(5 * 60_000);
    expect(h.services.calls.map((c) => c.data.e)).toEqual(['binary_sensor.door']);
    expect(h.sqlite.prepare('SELECT count(*) AS n FROM automation_timers').get()).toEqual({ n: 0 });
  });

  it('queued runs (mode: queued) are persisted and resume in order behind the resumed run', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    const a = await h.create({
      alias: 'q',
      mode: 'queued',
      max: 5,
      trigger: { platform: 'webhook' },
      variables: { n: '{{ trigger.json.n }}' },
      action: [
        { service: 'x.start', data: { n: '{{ n }}' } },
        { delay: 60 },
        { service: 'x.end', data: { n: '{{ trigger.json.n }}' } },
      ],
    });
    h.engine.handleWebhook(a.webhook_id!, { n: 1 }, 'local');
    await clock.advance(0);
    for (const n of [2, 3, 4]) h.engine.handleWebhook(a.webhook_id!, { n }, 'local');
    await clock.advance(10_000);
    const rows = () =>
      h.sqlite
        .prepare('SELECT kind FROM automation_timers ORDER BY rowid')
        .all()
        .map((r) => (r as { kind: string }).kind);
    expect(rows()).toEqual(['delay', 'queued', 'queued', 'queued']);

    await h.restart();
    // one more while the resumed run is still in its delay: it queues behind the restored ones
    h.engine.handleWebhook(a.webhook_id!, { n: 5 }, 'local');
    await clock.advance(0);
    expect(rows()).toEqual(['delay', 'queued', 'queued', 'queued', 'queued']);
    await clock.advance(50_000);
    expect(h.services.calls.map((c) => `${c.service}${c.data.n}`)).toEqual(['start1', 'end1', 'start2']);

    await h.restart(); // again, mid-way through the queue
    await clock.advance(4 * 60_000);
    expect(h.services.calls.map((c) => `${c.service}${c.data.n}`)).toEqual([
      'start1',
      'end1',
      'start2',
      'end2',
      'start3',
      'end3',
      'start4',
      'end4',
      'start5',
      'end5',
    ]);
    expect(rows()).toEqual([]);
    const traces = h.engine.traces(a.id);
    expect(traces.map((t) => [t.state, (t.trigger.json as { n: number }).n])).toEqual(
      [5, 4, 3, 2, 1].map((n) => ['finished', n]),
    );
  });

  it('queued runs start after a restart even when the running run could not be resumed; deleting drops them', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    h.services.handler = (c) => (c.service === 'hang' ? new Promise(() => {}) : null);
    const a = await h.create({
      alias: 'q',
      mode: 'queued',
      trigger: { platform: 'webhook' },
      action: [
        { choose: [{ conditions: '{{ trigger.json.n == 1 }}', sequence: [{ service: 'x.hang' }] }] },
        { service: 'x.ran', data: { n: '{{ trigger.json.n }}' } },
      ],
    });
    for (const n of [1, 2, 3]) h.engine.handleWebhook(a.webhook_id!, { n }, 'local');
    await clock.advance(1000);
    expect(h.services.calls.map((c) => c.service)).toEqual(['hang']);
    await h.restart(); // run 1 was in a service call: nothing to resume; 2 and 3 were queued
    await clock.advance(0);
    expect(h.services.calls.map((c) => `${c.service}${c.data.n ?? ''}`)).toEqual(['hang', 'ran2', 'ran3']);

    const b = await h.create({
      alias: 'gone',
      mode: 'queued',
      trigger: { platform: 'webhook' },
      action: [{ delay: 60 }, { service: 'x.never' }],
    });
    for (let i = 0; i < 3; i++) h.engine.handleWebhook(b.webhook_id!, {}, 'local');
    await clock.advance(0);
    expect(h.sqlite.prepare("SELECT count(*) AS n FROM automation_timers WHERE kind = 'queued'").get()).toEqual({
      n: 2,
    });
    h.engine.remove(b.id);
    expect(h.sqlite.prepare('SELECT count(*) AS n FROM automation_timers').get()).toEqual({ n: 0 });
    await h.restart();
    await clock.advance(300_000);
    expect(h.services.calls.map((c) => c.service)).not.toContain('never');
  });

  it('definitions and webhook ids survive; deleting drops pending waits', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    const a = await h.create({
      alias: 'x',
      trigger: { platform: 'webhook' },
      action: [{ delay: 60 }, { service: 'x.never' }],
    });
    h.engine.handleWebhook(a.webhook_id!, {}, 'local');
    await clock.advance(0);
    await h.restart();
    expect(h.engine.get(a.id)?.webhook_id).toBe(a.webhook_id);
    h.engine.remove(a.id);
    await clock.advance(120_000);
    expect(h.services.calls).toHaveLength(0);
    expect(h.engine.handleWebhook(a.webhook_id!, {}, 'local').status).toBe(404);
  });
});

describe('traces', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });
  it('keeps the last 20 runs plus the last 20 failed runs, newest first, with steps and errors', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    h.services.handler = (c) => {
      if (c.data.fail) throw new Error(`boom ${c.data.n}`);
      return null;
    };
    const a = await h.create({
      alias: 't',
      mode: 'queued',
      max: 100,
      trigger: { platform: 'webhook' },
      action: [{ service: 'x.y', data: { n: '{{ trigger.json.n }}', fail: '{{ trigger.json.fail }}' } }],
    });
    for (let n = 0; n < 30; n++) {
      h.engine.handleWebhook(a.webhook_id!, { n, fail: n < 25 }, 'local');
      await clock.advance(1000);
    }
    // runs 0-24 failed, 25-29 succeeded
    for (let n = 30; n < 50; n++) {
      h.engine.handleWebhook(a.webhook_id!, { n, fail: false }, 'local');
      await clock.advance(1000);
    }
    const traces = h.engine.traces(a.id);
    expect(traces).toHaveLength(40);
    expect(traces.slice(0, 20).map((t) => t.trigger.json)).toEqual(
      Array.from({ length: 20 }, (_, i) => ({ n: 49 - i, fail: false })),
    );
    const failed = traces.filter((t) => t.state === 'failed');
    expect(failed.map((t) => (t.trigger.json as { n: number }).n)).toEqual(
      Array.from({ length: 20 }, (_, i) => 24 - i),
    );
    expect(failed[0]).toMatchObject({ error: 'boom 24', steps: [{ path: 'action/0', error: 'boom 24' }] });
    expect(traces[0]).toMatchObject({
      state: 'finished',
      error: null,
      trigger: { platform: 'webhook', origin: 'local' },
      steps: [{ path: 'action/0', result: { service: 'x.y', data: { n: 49, fail: false } } }],
    });
    expect(typeof traces[0].steps[0].duration_ms).toBe('number');
    expect(traces[0].finished_at).not.toBeNull();
  });
});
