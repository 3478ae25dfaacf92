import { randomUUID } from 'node:crypto';
import type { EventBus } from '../bus.ts';
import type { Logger } from '../log.ts';
import type { TemplateEngine } from '../templates/template.ts';
import type { Cfg } from './components/types.ts';
import type { DiscoveryTopic, EntityDiscovery } from './config.ts';

/** The bus event a matched MQTT device trigger fires: what `platform: device` automations and the realtime APIs see. */
export const DEVICE_TRIGGER_EVENT = 'mqtt_device_trigger';

export interface DeviceTriggerConfig {
  key: string;
  /** HA's discovery_id: "<node_id> <object_id>" (or the object id alone) */
  discoveryId: string;
  deviceId: number;
  topic: string;
  type: string;
  subtype: string;
  payload: string | undefined;
  valueTemplate: string | undefined;
}

/** What a device_automation config must carry (HA's mqtt/device_trigger.py schema). */
export function validateDeviceTrigger(cfg: Cfg): string | null {
  if (cfg.automation_type !== 'trigger') return 'automation_type must be "trigger"';
  for (const k of ['topic', 'type', 'subtype']) if (typeof cfg[k] !== 'string' || !cfg[k]) return `${k} is required`;
  if (typeof cfg.device !== 'object' || cfg.device === null) return 'device is required';
  return null;
}

/** A validated device_automation config as a trigger; HA's discovery_id is "<node_id> <object_id>" (device discovery: "<device id> <component id>"). */
export function triggerConfig(d: EntityDiscovery, dt: DiscoveryTopic | null, deviceId: number): DeviceTriggerConfig {
  const discoveryId =
    dt?.component === 'device'
      ? `${dt.objectId} ${d.objectId}`
      : dt?.nodeId
        ? `${dt.nodeId} ${d.objectId}`
        : d.objectId;
  return {
    key: d.key,
    discoveryId,
    deviceId,
    topic: d.cfg.topic as string,
    type: d.cfg.type as string,
    subtype: d.cfg.subtype as string,
    payload: typeof d.cfg.payload === 'string' ? d.cfg.payload : undefined,
    valueTemplate: typeof d.cfg.value_template === 'string' ? d.cfg.value_template : undefined,
  };
}

/**
 * MQTT device triggers (discovery component `device_automation`): remote and button presses.
 * They are not entities; a message on the trigger topic whose payload (after value_template)
 * equals `payload` (any payload when none is set) fires `mqtt_device_trigger` on the bus.
 */
export class DeviceTriggers {
  private readonly byKey = new Map<string, DeviceTriggerConfig>();
  private readonly bus: EventBus | undefined;
  private readonly templates: TemplateEngine;
  private readonly log: Logger;

  constructor(deps: { bus?: EventBus; templates: TemplateEngine; log: Logger }) {
    this.bus = deps.bus;
    this.templates = deps.templates;
    this.log = deps.log;
  }

  upsert(t: DeviceTriggerConfig): void {
    this.byKey.set(t.key, t);
  }

  /** Removes the trigger under `key` and (device discovery) its `key#…` components; returns the device ids they had. */
  remove(key: string): number[] {
    const out: number[] = [];
    for (const [k, t] of this.byKey)
      if (k === key || k.startsWith(key + '#')) {
        this.byKey.delete(k);
        out.push(t.deviceId);
      }
    return out;
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  /** Devices that still have triggers (they keep a device alive without entities). */
  deviceIds(): Set<number> {
    return new Set([...this.byKey.values()].map((t) => t.deviceId));
  }

  list(): DeviceTriggerConfig[] {
    return [...this.byKey.values()];
  }

  onMessage(topic: string, payload: string): void {
    if (this.byKey.size === 0) return; // every message comes here: no iterator when there is no trigger
    for (const t of this.byKey.values()) {
      if (t.topic !== topic) continue;
      let v = payload;
      if (t.valueTemplate) {
        try {
          v = this.templates.renderValue(t.valueTemplate, payload);
        } catch (err) {
          this.log.warn(`mqtt device trigger ${t.discoveryId}: value_template failed: ${(err as Error).message}`);
          continue;
        }
      }
      if (t.payload !== undefined && v !== t.payload) continue;
      this.bus?.emit('event', {
        event: {
          event_type: DEVICE_TRIGGER_EVENT,
          data: {
            domain: 'mqtt',
            device_id: String(t.deviceId),
            discovery_id: t.discoveryId,
            type: t.type,
            subtype: t.subtype,
            topic,
            payload,
          },
          origin: 'LOCAL',
          time_fired: new Date().toISOString(),
          context: { id: randomUUID(), parent_id: null, user_id: null },
        },
        chain: 0,
      });
    }
  }
}
