import { describe, expect, it } from 'vitest';
import type { HaEvent, HaState } from '../../ha/index.ts';
import { bareHaBackend, haTestSession } from '../../testing/ha-session.ts';

/**
 * subscribe_entities tells a client about an entity it does not hold with `a`, never `c`:
 * home-assistant-js-websocket drops a change for an unknown entity, so an entity that appears
 * later (discovered after the subscription) would never show. The cloud reports a new entity's
 * registry row as its old state, which is what this guards.
 */

const at = '2026-11-24T04:00:00.000Z';
const state = (entity_id: string, value: string): HaState => ({
  entity_id,
  state: value,
  attributes: { friendly_name: entity_id },
  last_changed: at,
  last_updated: at,
  last_reported: at,
  context: { id: 'C', parent_id: null, user_id: null },
});

describe('subscribe_entities', () => {
  it('adds (a) an entity the client does not hold, changes (c) one it does, and adds it again after a removal', async () => {
    let emit: (event: HaEvent) => void = () => {};
    const c = await haTestSession({
      ...bareHaBackend,
      getStates: async () => [state('light.known', 'off')],
      subscribeEvents: (_p, _type, listener) => {
        emit = listener;
        return () => {};
      },
    });
    const changed = (entity_id: string, old_state: HaState | null, new_state: HaState | null) =>
      emit({
        event_type: 'state_changed',
        data: { entity_id, old_state, new_state },
        origin: 'LOCAL',
        time_fired: at,
        context: { id: 'C', parent_id: null, user_id: null },
      });
    const answers = await c.ask({ id: 1, type: 'subscribe_entities' });
    expect(answers[0]).toMatchObject({ type: 'result', success: true });
    expect(Object.keys(answers[1].event.a)).toEqual(['light.known']);
    const events = () =>
      c.sent
        .filter((m) => m.id === 1 && m.type === 'event')
        .slice(1)
        .map((m) => m.event);

    // a new entity whose "old state" is a registry row the client never received
    changed('sensor.new', state('sensor.new', 'unknown'), state('sensor.new', '42'));
    changed('light.known', state('light.known', 'off'), state('light.known', 'on'));
    changed('sensor.new', state('sensor.new', '42'), state('sensor.new', '43'));
    changed('sensor.new', state('sensor.new', '43'), null);
    changed('sensor.new', state('sensor.new', 'unknown'), state('sensor.new', '44'));
    await new Promise((r) => setImmediate(r));

    const shapes = events().map((e) => Object.keys(e)[0] + ':' + Object.keys(Object.values(e)[0] as object).join());
    expect(shapes).toEqual(['a:sensor.new', 'c:light.known', 'c:sensor.new', 'r:0', 'a:sensor.new']);
    expect(events()[0].a['sensor.new'].s).toBe('42');
    expect(events()[2].c['sensor.new']['+'].s).toBe('43');
    expect(events()[3]).toEqual({ r: ['sensor.new'] });
    expect(events()[4].a['sensor.new'].s).toBe('44');
  });
});
