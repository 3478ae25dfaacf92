import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, harness, settle, type Harness } from '../testing/automation.ts';
import { compilePattern, nextPatternMatch, timeConditionMatches } from './time.ts';
import { topicMatches } from './triggers.ts';

const turnOn = [
  { service: 'light.turn_on', target: { entity_id: 'light.x' }, data: { who: '{{ trigger.platform }}' } },
];

describe('triggers', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  it('state: from/to', async () => {
    h = await harness();
    h.states.set('binary_sensor.door', 'off');
    await h.create({
      alias: 'door',
      trigger: { platform: 'state', entity_id: 'binary_sensor.door', from: 'off', to: 'on' },
      action: [
        {
          service: 'light.turn_on',
          data: {
            e: '{{ trigger.entity_id }}',
            s: '{{ trigger.to_state.state }}',
            f: '{{ trigger.from_state.state }}',
          },
        },
      ],
    });
    h.states.set('binary_sensor.door', 'on');
    h.states.set('binary_sensor.door', 'on', { battery: 3 }); // attribute-only: no trigger
    h.states.set('binary_sensor.door', 'unavailable');
    h.states.set('binary_sensor.door', 'on'); // from unavailable: no trigger
    await settle();
    expect(h.services.calls.map((c) => c.data)).toEqual([{ e: 'binary_sensor.door', s: 'on', f: 'off' }]);
  });

  it('state: no from/to fires on any change, to: null only on state changes', async () => {
    h = await harness();
    await h.create({
      alias: 'any',
      mode: 'parallel',
      trigger: { platform: 'state', entity_id: 'sensor.a' },
      action: [{ service: 'x.any' }],
    });
    await h.create({
      alias: 'st',
      mode: 'parallel',
      trigger: { platform: 'state', entity_id: 'sensor.a', to: null },
      action: [{ service: 'x.state' }],
    });
    h.states.set('sensor.a', '1');
    h.states.set('sensor.a', '1', { u: 1 });
    h.states.set('sensor.a', '2', { u: 1 });
    await settle();
    expect(h.services.calls.filter((c) => c.service === 'any')).toHaveLength(3);
    expect(h.services.calls.filter((c) => c.service === 'state')).toHaveLength(2);
  });

  it('state: for holds the duration and is cancelled by a change', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    h.states.set('binary_sensor.m', 'off');
    await h.create({
      alias: 'm',
      trigger: { platform: 'state', entity_id: 'binary_sensor.m', to: 'on', for: '00:05:00' },
      action: turnOn,
    });
    h.states.set('binary_sensor.m', 'on');
    await clock.advance(4 * 60_000);
    h.states.set('binary_sensor.m', 'off');
    await clock.advance(10 * 60_000);
    expect(h.services.calls).toHaveLength(0);
    h.states.set('binary_sensor.m', 'on');
    await clock.advance(2 * 60_000);
    h.states.set('binary_sensor.m', 'on', { lux: 4 }); // still "on": keeps the timer
    await clock.advance(3 * 60_000);
    expect(h.services.calls).toHaveLength(1);
  });

  it('numeric_state: fires when it starts matching (crossing), with for', async () => {
    const clock = new FakeClock();
    h = await harness({ clock });
    h.states.set('sensor.t', '10');
    await h.create({
      alias: 'hot',
      mode: 'queued',
      trigger: { platform: 'numeric_state', entity_id: 'sensor.t', above: 20, below: 30 },
      action: [{ service: 'fan.on', data: { v: '{{ trigger.to_state.state | float }}' } }],
    });
    await h.create({
      alias: 'hot-for',
      trigger: { platform: 'numeric_state', entity_id: 'sensor.t', above: 20, for: { seconds: 30 } },
      action: [{ service: 'fan.for' }],
    });
    h.states.set('sensor.t', '21');
    h.states.set('sensor.t', '25'); // still above: no new trigger
    h.states.set('sensor.t', '35'); // leaves the range (below 30)
    h.states.set('sensor.t', '22.5'); // enters again
    h.states.set('sensor.t', 'garbage');
    await clock.advance(1000);
    expect(h.services.calls.filter((c) => c.service === 'on').map((c) => c.data.v)).toEqual([21, 22.5]);
    expect(h.services.calls.filter((c) => c.service === 'for')).toHaveLength(0); // 'garbage' cancelled it
    h.states.set('sensor.t', '40');
    await clock.advance(31_000);
    expect(h.services.calls.filter((c) => c.service === 'for')).toHaveLength(1);
  });

  it('time: at HH:MM local time, every day', async () => {
    const clock = new FakeClock(new Date(2026, 0, 5, 6, 59, 0).getTime());
    h = await harness({ clock });
    await h.create({
      alias: 'wake',
      trigger: { platform: 'time', at: ['07:00', '07:30:15'] },
      action: [{ service: 'light.turn_on', data: { at: '{{ trigger.at }}' } }],
    });
    await clock.advance(60_000);
    expect(h.services.calls.map((c) => c.data.at)).toEqual(['07:00']);
    await clock.advance(30 * 60_000 + 15_000);
    expect(h.services.calls.map((c) => c.data.at)).toEqual(['07:00', '07:30:15']);
    await clock.advance(24 * 3600_000);
    expect(h.services.calls).toHaveLength(4);
  });

  it('time_pattern: /N and defaults like HA', async () => {
    const clock = new FakeClock(new Date(2026, 0, 5, 10, 0, 30).getTime());
    h = await harness({ clock });
    await h.create({
      alias: 'p',
      trigger: { platform: 'time_pattern', minutes: '/15' },
      action: [{ service: 'x.tick' }],
    });
    await clock.advance(3600_000);
    expect(h.services.calls).toHaveLength(4);
    const start = new Date(2026, 0, 5, 10, 7, 0).getTime();
    expect(new Date(nextPatternMatch(start, compilePattern({ hours: '/2' }))).getHours()).toBe(12);
    expect(new Date(nextPatternMatch(start, compilePattern({ seconds: '/10' }))).getSeconds()).toBe(10);
    expect(nextPatternMatch(start, compilePattern({ minutes: 5 }))).toBe(new Date(2026, 0, 5, 11, 5, 0).getTime());
  });

  it('mqtt: wildcards and payload match', async () => {
    h = await harness();
    await h.create({
      alias: 'm',
      trigger: { platform: 'mqtt', topic: 'home/+/button', payload: 'press' },
      action: [{ service: 'x.m', data: { t: '{{ trigger.topic }}' } }],
    });
    await h.create({
      alias: 'j',
      trigger: { platform: 'mqtt', topic: 'zigbee/#' },
      action: [{ service: 'x.j', data: { v: '{{ trigger.payload_json.action }}' } }],
    });
    await h.create({
      alias: 'tpl',
      trigger: { platform: 'mqtt', topic: 'raw', payload: 'on', value_template: '{{ value_json.state }}' },
      action: [{ service: 'x.t' }],
    });
    h.mqtt.publish('home/hall/button', 'press');
    h.mqtt.publish('home/hall/button', 'hold');
    h.mqtt.publish('home/hall/other', 'press');
    h.mqtt.publish('zigbee/a/b', '{"action":"single"}');
    h.mqtt.publish('raw', '{"state":"on"}');
    h.mqtt.publish('raw', '{"state":"off"}');
    await settle();
    expect(h.services.calls.map((c) => [c.service, c.data.t ?? c.data.v ?? null])).toEqual([
      ['m', 'home/hall/button'],
      ['j', 'single'],
      ['t', null],
    ]);
    expect(topicMatches('a/#', 'a')).toBe(true);
    expect(topicMatches('a/+', 'a/b/c')).toBe(false);
  });

  it('event: type and event_data subset', async () => {
    h = await harness();
    await h.create({
      alias: 'e',
      trigger: { platform: 'event', event_type: 'doorbell', event_data: { button: 'front' } },
      action: [{ service: 'x.e', data: { d: '{{ trigger.event.data.extra }}' } }],
    });
    h.events.fire('doorbell', { button: 'back' });
    h.events.fire('doorbell', { button: 'front', extra: 7 });
    h.events.fire('other', { button: 'front' });
    await settle();
    expect(h.services.calls.map((c) => c.data)).toEqual([{ d: 7 }]);
  });

  it('webhook: handleWebhook with origin, local_only, disabled and revoked', async () => {
    h = await harness();
    const a = await h.create({
      alias: 'w',
      trigger: { platform: 'webhook', webhook_id: 'client-chosen' },
      action: [{ service: 'x.w', data: { x: '{{ trigger.json.x }}', o: '{{ trigger.origin }}' } }],
    });
    expect(a.webhook_id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.webhook_id).not.toBe('client-chosen');
    expect((a.trigger[0] as { webhook_id?: string }).webhook_id).toBe(a.webhook_id);
    expect(h.engine.handleWebhook(a.webhook_id!, { x: 1 }, 'cloud')).toEqual({ status: 200 });
    expect(h.engine.handleWebhook(a.webhook_id!, [1], 'local')).toMatchObject({ status: 400 });
    expect(h.engine.handleWebhook('nope', {}, 'local')).toMatchObject({ status: 404 });
    await settle();
    expect(h.services.calls.map((c) => c.data)).toEqual([{ x: 1, o: 'cloud' }]);
    const lo = await h.create({
      alias: 'lo',
      trigger: { platform: 'webhook', local_only: true },
      action: [{ service: 'x.lo' }],
    });
    expect(h.engine.handleWebhook(lo.webhook_id!, {}, 'cloud')).toMatchObject({ status: 404 });
    expect(h.engine.handleWebhook(lo.webhook_id!, {}, 'local')).toEqual({ status: 200 });
    const body = {
      alias: 'w',
      trigger: [{ platform: 'webhook' as const }],
      action: [{ service: 'x.w' }],
      enabled: false,
      mode: 'single' as const,
      condition: [],
    };
    const updated = h.engine.update(a.id, body);
    expect(updated.webhook_id).toBe(a.webhook_id); // PUT keeps it
    expect(h.engine.handleWebhook(a.webhook_id!, {}, 'local')).toMatchObject({ status: 404 }); // disabled
    h.engine.update(a.id, { ...body, enabled: true });
    expect(h.engine.handleWebhook(a.webhook_id!, {}, 'local')).toEqual({ status: 200 });
    h.engine.remove(a.id);
    expect(h.engine.handleWebhook(a.webhook_id!, {}, 'local')).toMatchObject({ status: 404 }); // revoked
  });

  it('webhook flood → 429 with retry-after', async () => {
    const clock = new FakeClock();
    h = await harness({ clock, deps: { webhookRate: { perSecond: 2, burst: 3 } } });
    const a = await h.create({ alias: 'w', trigger: { platform: 'webhook' }, action: [{ service: 'x.w' }] });
    const results = Array.from({ length: 5 }, () => h.engine.handleWebhook(a.webhook_id!, {}, 'local').status);
    expect(results).toEqual([200, 200, 200, 429, 429]);
    expect(h.engine.handleWebhook(a.webhook_id!, {}, 'local')).toEqual({
      status: 429,
      error: 'rate_limited',
      retryAfter: 1,
    });
    await clock.advance(1000);
    expect(h.engine.handleWebhook(a.webhook_id!, {}, 'local').status).toBe(200);
  });
});

describe('time helpers', () => {
  it('time condition across midnight and weekdays', () => {
    const at = (h: number, m = 0) => new Date(2026, 0, 5, h, m).getTime(); // a Monday
    expect(timeConditionMatches(at(23), { after: '22:00', before: '06:00' })).toBe(true);
    expect(timeConditionMatches(at(3), { after: '22:00', before: '06:00' })).toBe(true);
    expect(timeConditionMatches(at(12), { after: '22:00', before: '06:00' })).toBe(false);
    expect(timeConditionMatches(at(12), { weekday: ['mon', 'tue'] })).toBe(true);
    expect(timeConditionMatches(at(12), { weekday: 'sun' })).toBe(false);
  });
});
