import { EventEmitter } from 'node:events';
import type { Area, ConfigEntry, Device, EntityRecord, EntityState, ws } from '@smarthome/protocol';

/** `state_changed`: old_state is null for a new entity, new_state is null when it was removed. */
export interface StateChangedEvent {
  entity_id: string;
  old_state: EntityState | null;
  new_state: EntityState | null;
}

/**
 * What caused an event: the context of the automation run (or call) that fired it, and `chain`,
 * how many automation runs led to it one after another (the engine's loop guard). Never leaves the edge.
 */
export interface EventCause {
  context: ws.EventContext;
  chain: number;
}

/** Everything the edge announces; the automation engine and the cloud tunnel subscribe here. */
export interface EdgeEventMap {
  state_changed: StateChangedEvent;
  device_upsert: { device: Device };
  device_remove: { id: number };
  entity_upsert: { entity: EntityRecord };
  entity_remove: { entity_id: string };
  area_upsert: { area: Area };
  config_entry_upsert: { entry: ConfigEntry };
  config_entry_remove: { id: number };
  /** a service was called (after its commands were published); `cause` when an automation run called it */
  call_service: {
    domain: string;
    service: string;
    entity_ids: string[];
    data: Record<string, unknown>;
    cause?: EventCause;
  };
  /** an event fired by name (Home Assistant's bus): automation `event` actions, automation_triggered */
  event: { event: ws.BusEvent; chain: number };
}
export type EdgeEventType = keyof EdgeEventMap;

/** A typed, synchronous event bus. A throwing listener never breaks the emitter. */
export class EventBus {
  private readonly emitter = new EventEmitter();
  private readonly onError: (err: unknown) => void;
  constructor(onError: (err: unknown) => void = () => {}) {
    this.onError = onError;
    this.emitter.setMaxListeners(0);
  }

  on<K extends EdgeEventType>(type: K, listener: (event: EdgeEventMap[K]) => void): () => void {
    const wrapped = (event: EdgeEventMap[K]) => {
      try {
        listener(event);
      } catch (err) {
        this.onError(err);
      }
    };
    this.emitter.on(type, wrapped);
    return () => {
      this.emitter.off(type, wrapped);
    };
  }

  /** Every event, tagged with its type: what a tunnel forwards as deltas. */
  onAny(listener: <K extends EdgeEventType>(type: K, event: EdgeEventMap[K]) => void): () => void {
    const offs = (
      [
        'state_changed',
        'device_upsert',
        'device_remove',
        'entity_upsert',
        'entity_remove',
        'area_upsert',
        'config_entry_upsert',
        'config_entry_remove',
        'call_service',
        'event',
      ] as const
    ).map((type) => this.on(type, (e) => listener(type, e)));
    return () => {
      for (const off of offs) off();
    };
  }

  emit<K extends EdgeEventType>(type: K, event: EdgeEventMap[K]): void {
    if (this.emitter.listenerCount(type) > 0) this.emitter.emit(type, event);
  }

  listenerCount(type: EdgeEventType): number {
    return this.emitter.listenerCount(type);
  }
}
