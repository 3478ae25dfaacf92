import { randomUUID } from 'node:crypto';
import { EDGE_FIRED_EVENTS, type ws } from '@smarthome/protocol';
import type { EdgeEventMap, EventBus, EventCause } from './bus.ts';

/**
 * Home Assistant's event bus over the edge's EventBus: what the automation engine (event
 * triggers, `event` actions, automation_triggered) and the cloud tunnel see.
 * - named events (fired by automations) travel on the bus's `event` channel;
 * - `state_changed` and `call_service` are the bus's own, shaped as HA shapes them
 *   (state_changed: entity_id, old_state, new_state; call_service: domain, service, service_data).
 */

export interface HaEventBus {
  fire(eventType: string, data: Record<string, unknown>, cause?: EventCause): void;
  /** `'*'` for every event; `chain` is how many automation runs led to it (0: none) */
  on(eventType: string, listener: (event: ws.BusEvent, chain: number) => void): () => void;
}

const context = (parent: string | null = null): ws.EventContext => ({
  id: randomUUID(),
  parent_id: parent,
  user_id: null,
});

export function stateChangedEvent(e: EdgeEventMap['state_changed']): ws.BusEvent {
  return {
    event_type: 'state_changed',
    data: { entity_id: e.entity_id, old_state: e.old_state, new_state: e.new_state },
    origin: 'LOCAL',
    time_fired: e.new_state?.last_updated ?? new Date().toISOString(),
    context: context(),
  };
}

export function callServiceEvent(e: EdgeEventMap['call_service']): ws.BusEvent {
  const target =
    e.entity_ids.length === 0 ? {} : { entity_id: e.entity_ids.length === 1 ? e.entity_ids[0] : e.entity_ids };
  return {
    event_type: 'call_service',
    data: { domain: e.domain, service: e.service, service_data: { ...e.data, ...target } },
    origin: 'LOCAL',
    time_fired: new Date().toISOString(),
    context: context(e.cause?.context.id ?? null),
  };
}

export function haEventBus(bus: EventBus): HaEventBus {
  return {
    fire(eventType, data, cause) {
      if (EDGE_FIRED_EVENTS.includes(eventType)) throw new Error(`${eventType} is fired by the edge itself`);
      const event: ws.BusEvent = {
        event_type: eventType,
        data,
        origin: 'LOCAL',
        time_fired: new Date().toISOString(),
        context: context(cause?.context.id ?? null),
      };
      bus.emit('event', { event, chain: cause?.chain ?? 0 });
    },
    on(eventType, listener) {
      const all = eventType === '*';
      const offs: (() => void)[] = [];
      if (all || eventType === 'state_changed')
        offs.push(bus.on('state_changed', (e) => listener(stateChangedEvent(e), 0)));
      if (all || eventType === 'call_service')
        offs.push(bus.on('call_service', (e) => listener(callServiceEvent(e), e.cause?.chain ?? 0)));
      if (all || !EDGE_FIRED_EVENTS.includes(eventType)) {
        offs.push(
          bus.on('event', (e) => {
            if (all || e.event.event_type === eventType) listener(e.event, e.chain);
          }),
        );
      }
      return () => {
        for (const off of offs) off();
      };
    },
  };
}
