import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Edge } from './edge.ts';
import { startEdge, tempDir } from './testing/edge.ts';

/** Event triggers and event actions on a whole edge: its own event bus, demo entities, the local API. */
describe('automation events on the edge bus', () => {
  const LAMP = 'light.demo_living_room_lamp';
  let dir: { dir: string; cleanup: () => void };
  let edge: Edge;
  let token: string;

  const api = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`http://127.0.0.1:${edge.ports.http}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const create = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/v1/automations', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; webhook_id: string | null };
  };
  const traces = async (id: string) =>
    (await api('GET', `/v1/automations/${id}/traces`)).body as {
      state: string;
      error: string | null;
      trigger: any;
      steps: any[];
    }[];
  const finished = (id: string) =>
    until(async () => {
      const t = await traces(id);
      return t.some((x) => x.state === 'finished') ? t : null;
    });

  beforeEach(async () => {
    dir = tempDir();
    edge = await startEdge(dir.dir);
    token = edge.tokens.create('events-test').token;
    // update_interval 3600: the demo script does not move the lamp during a test
    const flow = await edge.features.configFlows.flows.startFlow('demo');
    await edge.features.configFlows.flows.advance(flow.flowId, { update_interval: 3600 });
  });
  afterEach(async () => {
    await edge.stop();
    dir.cleanup();
  });

  it('accepts event triggers; an event action fires a custom event another automation sees', async () => {
    const source = await create({
      alias: 'Doorbell',
      trigger: [{ platform: 'webhook' }],
      action: [{ event: 'doorbell', event_data: { button: '{{ trigger.json.button }}' } }],
    });
    const front = await create({
      alias: 'Front',
      trigger: [{ platform: 'event', event_type: 'doorbell', event_data: { button: 'front' } }],
      action: [{ service: 'light.turn_off', target: { entity_id: LAMP } }],
    });
    const back = await create({
      alias: 'Back',
      trigger: [{ platform: 'event', event_type: 'doorbell', event_data: { button: 'back' } }],
      action: [{ service: 'light.turn_on', target: { entity_id: LAMP } }],
    });
    const seen: string[] = [];
    edge.bus.on('event', (e) => seen.push(`${e.event.event_type}:${JSON.stringify(e.event.data)}`));

    expect((await api('POST', `/v1/automations/webhook/${source.webhook_id}`, { button: 'front' })).status).toBe(200);
    const runs = await finished(front.id);
    expect(runs[0].trigger.event).toMatchObject({ event_type: 'doorbell', data: { button: 'front' }, origin: 'LOCAL' });
    expect(edge.states.get(LAMP)?.state).toBe('off');
    expect(await traces(back.id)).toEqual([]);
    expect((await traces(source.id))[0]).toMatchObject({
      state: 'finished',
      steps: [{ path: 'action/0', result: { event: 'doorbell', data: { button: 'front' } } }],
    });
    expect(seen).toContain('doorbell:{"button":"front"}');
    expect(seen).toContain(
      `automation_triggered:${JSON.stringify({ name: 'Front', entity_id: `automation.${front.id}`, source: "event 'doorbell'" })}`,
    );
    // an event action may not fake the edge's own events
    expect(
      (
        await api('POST', '/v1/automations', {
          alias: 'x',
          trigger: [{ platform: 'webhook' }],
          action: [{ event: 'state_changed' }],
        })
      ).status,
    ).toBe(400);
  });

  it('state_changed and call_service trigger event automations, shaped as Home Assistant shapes them', async () => {
    const onState = await create({
      alias: 'On state',
      trigger: [{ platform: 'event', event_type: 'state_changed', event_data: { entity_id: LAMP } }],
      action: [
        {
          event: 'lamp_seen',
          event_data: {
            to: '{{ trigger.event.data.new_state.state }}',
            from: '{{ trigger.event.data.old_state.state }}',
          },
        },
      ],
    });
    const onCall = await create({
      alias: 'On call',
      trigger: [
        { platform: 'event', event_type: 'call_service', event_data: { domain: 'light', service: 'turn_off' } },
      ],
      action: [{ event: 'call_seen', event_data: { target: '{{ trigger.event.data.service_data.entity_id }}' } }],
    });
    expect((await api('POST', '/v1/services/light/turn_off', { entity_id: LAMP })).status).toBe(200);
    const stateRuns = await finished(onState.id);
    expect(stateRuns[0].steps[0].result).toEqual({ event: 'lamp_seen', data: { to: 'off', from: 'on' } });
    const callRuns = await finished(onCall.id);
    expect(callRuns[0].trigger.event).toMatchObject({
      event_type: 'call_service',
      data: { domain: 'light', service: 'turn_off', service_data: { entity_id: LAMP } },
    });
    expect(callRuns[0].steps[0].result).toEqual({ event: 'call_seen', data: { target: LAMP } });
  });

  it('a service call loop through call_service events is cut after 20 runs', async () => {
    const loop = await create({
      alias: 'Flip',
      trigger: [
        { platform: 'webhook' },
        { platform: 'event', event_type: 'call_service', event_data: { service: 'toggle' } },
      ],
      action: [{ service: 'light.toggle', target: { entity_id: LAMP } }],
    });
    let toggles = 0;
    edge.bus.on('call_service', (e) => {
      if (e.service === 'toggle') toggles++;
    });
    expect((await api('POST', `/v1/automations/webhook/${loop.webhook_id}`, {})).status).toBe(200);
    const all = await until(async () => {
      const t = await traces(loop.id);
      return t.some((x) => x.state === 'aborted') ? t : null;
    });
    expect(all.filter((x) => x.state === 'aborted').map((x) => x.error)).toEqual([
      'dropped: 20 automation runs in a row fired events that triggered each other (a loop?)',
    ]);
    await new Promise((r) => setTimeout(r, 100));
    expect(toggles).toBe(20);
  });
});

async function until<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
