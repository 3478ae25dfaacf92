import { parseJsonOrUndefined } from '../templates/template.ts';
import { expandConfig } from './abbreviations.ts';
import type { Cfg } from './components/types.ts';
import { isJsonObject } from '@smarthome/protocol/common';

export interface DiscoveryTopic {
  /** the topic the config was published on */
  topic: string;
  component: string;
  nodeId: string | null;
  objectId: string;
}

/** `<prefix>/<component>/[<node_id>/]<object_id>/config`, else null. */
export function parseDiscoveryTopic(prefix: string, topic: string): DiscoveryTopic | null {
  if (!topic.startsWith(prefix + '/') || !topic.endsWith('/config')) return null;
  const parts = topic.slice(prefix.length + 1).split('/');
  if (parts.length === 3) return { topic, component: parts[0], nodeId: null, objectId: parts[1] };
  if (parts.length === 4) return { topic, component: parts[0], nodeId: parts[1], objectId: parts[2] };
  return null;
}

/** One entity config found in a discovery message (device-based discovery yields several). */
export interface EntityDiscovery {
  /** stable key: the config topic, plus `#<component id>` for device-based discovery */
  key: string;
  component: string;
  objectId: string;
  cfg: Cfg;
}

export type ParsedDiscovery =
  | { kind: 'remove' }
  | { kind: 'configs'; entities: EntityDiscovery[]; removedKeys: string[] }
  | { kind: 'invalid'; reason: string };

/**
 * Parses a discovery payload: empty → remove; a JSON object → expanded configs. Device-based
 * discovery (`<prefix>/device/<id>/config` with `cmps`) yields one config per component, each
 * inheriting the shared options; a component given only as `{"p": …}` is removed.
 */
export function parseDiscoveryPayload(dt: DiscoveryTopic, payload: string): ParsedDiscovery {
  if (payload.length === 0) return { kind: 'remove' };
  const doc = parseJsonOrUndefined(payload);
  if (!isJsonObject(doc)) return { kind: 'invalid', reason: 'payload is not a JSON object' };
  const cfg = expandConfig(doc);
  if (dt.component !== 'device') {
    return {
      kind: 'configs',
      entities: [{ key: dt.topic, component: dt.component, objectId: dt.objectId, cfg }],
      removedKeys: [],
    };
  }
  const components = cfg.components;
  if (!isJsonObject(components)) return { kind: 'invalid', reason: 'device discovery needs components (cmps)' };
  const shared: Cfg = { ...cfg };
  delete shared.components;
  const entities: EntityDiscovery[] = [];
  const removedKeys: string[] = [];
  for (const [id, raw] of Object.entries(components)) {
    if (!isJsonObject(raw)) continue;
    const own = expandConfig(raw);
    const platform = typeof own.platform === 'string' ? own.platform : undefined;
    if (!platform) continue;
    const key = `${dt.topic}#${id}`;
    if (Object.keys(own).length === 1) {
      removedKeys.push(key);
      continue;
    }
    const merged: Cfg = { ...shared, ...own };
    delete merged.platform;
    entities.push({ key, component: platform, objectId: id, cfg: merged });
  }
  return { kind: 'configs', entities, removedKeys };
}

/** " from <origin>" for log lines (HA logs where a config comes from: zigbee2mqtt, ESPHome …), else "". */
export function originOf(cfg: Cfg): string {
  const o = cfg.origin;
  if (!isJsonObject(o) || typeof o.name !== 'string') return '';
  return ` from ${o.name}${typeof o.sw_version === 'string' ? ` ${o.sw_version}` : ''}`;
}

/** HA's migration request: `{"migrate_discovery": true}` keeps the entities while they move to another discovery topic. */
export function isMigration(payload: string): boolean {
  const doc = payload.length ? parseJsonOrUndefined(payload) : undefined;
  return isJsonObject(doc) && (doc.migrate_discovery === true || doc.migr_discvry === true);
}

/** Config keys naming topics the edge publishes commands to (the ACL's owned topics). */
export const isCommandTopicKey = (key: string) => key.endsWith('command_topic') || key === 'set_position_topic';

export function commandTopicsOf(cfg: Cfg): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(cfg)) if (isCommandTopicKey(k) && typeof v === 'string' && v) out.push(v);
  return out;
}

/** For the broker ACL: the command topics a discovery config publish declares. */
export function declaredCommandTopics(prefix: string, topic: string, payload: Buffer): string[] {
  const dt = parseDiscoveryTopic(prefix, topic);
  if (!dt || payload.length === 0) return [];
  const parsed = parseDiscoveryPayload(dt, payload.toString('utf8'));
  return parsed.kind === 'configs' ? parsed.entities.flatMap((e) => commandTopicsOf(e.cfg)) : [];
}

export interface DeviceInfo {
  identifiers: string[];
  /** null: the config does not name the device (an existing device keeps its name) */
  name: string | null;
  manufacturer: string | null;
  model: string | null;
  sw_version: string | null;
  /** identifier of the device this one connects through (a zigbee2mqtt bridge, a Tasmota/ESPHome hub) */
  via_device: string | null;
  suggested_area: string | null;
}

/** The `device` block as registry input, or null when it identifies nothing. */
export function deviceInfo(cfg: Cfg): DeviceInfo | null {
  const dev = cfg.device;
  if (!isJsonObject(dev)) return null;
  const ids: string[] = [];
  if (typeof dev.identifiers === 'string') ids.push(dev.identifiers);
  else if (Array.isArray(dev.identifiers)) ids.push(...dev.identifiers.map(String));
  if (Array.isArray(dev.connections)) {
    for (const c of dev.connections) if (Array.isArray(c) && c.length === 2) ids.push(`${c[0]}:${c[1]}`);
  }
  if (ids.length === 0) return null;
  const s = (v: unknown) => (typeof v === 'string' && v ? v : null);
  return {
    identifiers: ids,
    name: s(dev.name),
    manufacturer: s(dev.manufacturer),
    model: s(dev.model),
    sw_version: s(dev.sw_version),
    via_device: s(dev.via_device),
    suggested_area: s(dev.suggested_area),
  };
}

/** Components HA names after their device class when the config has no `name` (Entity._default_to_device_class_name). */
const NAMED_BY_DEVICE_CLASS = new Set(['sensor', 'binary_sensor', 'button', 'number', 'event', 'update']);
/** HA's English device-class names where they are not just the class capitalised. */
const DEVICE_CLASS_NAMES: Record<string, string> = {
  pm25: 'PM2.5',
  pm10: 'PM10',
  pm1: 'PM1',
  co2: 'Carbon dioxide',
  co: 'Carbon monoxide',
  carbon_monoxide: 'Carbon monoxide',
  carbon_dioxide: 'Carbon dioxide',
  volatile_organic_compounds: 'Volatile organic compounds',
  aqi: 'Air quality index',
  battery_charging: 'Charging',
  tamper: 'Tampering',
  garage_door: 'Garage door',
  signal_strength: 'Signal strength',
  power_factor: 'Power factor',
  apparent_power: 'Apparent power',
  reactive_power: 'Reactive power',
  ph: 'pH',
  nitrogen_dioxide: 'Nitrogen dioxide',
  sulphur_dioxide: 'Sulphur dioxide',
  atmospheric_pressure: 'Atmospheric pressure',
};
export const deviceClassName = (dc: string): string =>
  DEVICE_CLASS_NAMES[dc] ?? dc.charAt(0).toUpperCase() + dc.slice(1).replace(/_/g, ' ');

/** HA's default entity name when the config has none (each platform's DEFAULT_NAME). */
const DEFAULT_NAMES: Record<string, string> = {
  binary_sensor: 'MQTT Binary sensor',
  climate: 'MQTT HVAC',
  light: 'MQTT Light',
  scene: 'MQTT Scene',
  update: 'MQTT Update',
};
const defaultName = (domain: string, cfg: Cfg) =>
  domain === 'light' && cfg.schema === 'json'
    ? 'MQTT JSON Light'
    : (DEFAULT_NAMES[domain] ?? `MQTT ${domain.charAt(0).toUpperCase()}${domain.slice(1)}`);

/**
 * The entity's own name as HA derives it (mqtt/entity.py _set_entity_name): the configured name;
 * `name: null` → none (the entity is named after its device); no `name` key → its device class
 * name where the platform does that (sensor.bedroom_temperature), else the platform default.
 */
export function ownName(cfg: Cfg, domain: string): string | null {
  if ('name' in cfg) return typeof cfg.name === 'string' && cfg.name.trim() ? cfg.name.trim() : null;
  if (
    NAMED_BY_DEVICE_CLASS.has(domain) &&
    typeof cfg.device_class === 'string' &&
    cfg.device_class &&
    cfg.device_class !== 'enum'
  ) {
    return deviceClassName(cfg.device_class);
  }
  return defaultName(domain, cfg);
}

/**
 * HA naming (has_entity_name): entities of a device are named "<device> <entity>", an entity
 * without a name takes the device's; a name starting with the device name is not prefixed twice.
 */
export function entityName(cfg: Cfg, domain: string, deviceName: string | null, objectId: string): string {
  const own = ownName(cfg, domain);
  if (!deviceName) return own ?? objectId;
  if (!own) return deviceName;
  return own.toLowerCase().startsWith(deviceName.toLowerCase()) ? own : `${deviceName} ${own}`;
}

/** The object id an entity_id is derived from: default_entity_id / object_id, else the name. */
export function suggestedObjectId(cfg: Cfg, name: string): string {
  if (typeof cfg.default_entity_id === 'string' && cfg.default_entity_id.includes('.'))
    return cfg.default_entity_id.split('.')[1];
  if (typeof cfg.object_id === 'string' && cfg.object_id) return cfg.object_id;
  return name;
}
