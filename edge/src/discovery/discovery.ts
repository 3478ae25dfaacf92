import type { MqttOwnership } from '@smarthome/protocol/edge-local';
import type { EventBus } from '../bus.ts';
import type { Logger } from '../log.ts';
import type { MqttAcl } from '../mqtt/acl.ts';
import type { MqttBroker } from '../mqtt/broker.ts';
import type { AuthenticatedUser } from '../mqtt/users.ts';
import type { Registry } from '../registry/registry.ts';
import type { StateMachine } from '../states/state-machine.ts';
import type { PlatformServices } from '../services/services.ts';
import type { TemplateEngine } from '../templates/template.ts';
import { ServiceError } from '../errors.ts';
import { intern, internValues } from '../intern.ts';
import { COMPONENTS } from './components/index.ts';
import type { Cfg } from './components/types.ts';
import {
  deviceInfo,
  entityName,
  isMigration,
  originOf,
  parseDiscoveryPayload,
  parseDiscoveryTopic,
  suggestedObjectId,
  type EntityDiscovery,
} from './config.ts';
import { DeviceTriggers, triggerConfig, validateDeviceTrigger } from './device-triggers.ts';
import { configTopicOf, EntityIndex } from './entity-index.ts';
import { MqttEntity } from './entity.ts';
import { dispatchMessage, replayRetained, type MessageDeps } from './messages.ts';
import { DiscoveryOwnership } from './ownership.ts';

export const MQTT_PLATFORM = 'mqtt';
/** owner recorded for configs the edge (or a will without a client) published itself */
export const EDGE_OWNER = '$edge';

export interface DiscoveryDeps {
  broker: MqttBroker;
  registry: Registry;
  states: StateMachine;
  acl: MqttAcl;
  templates: TemplateEngine;
  log: Logger;
  prefix?: string;
  /** where device triggers fire (absent: they are tracked but fire nothing) */
  bus?: EventBus;
}

/** What the entity registry keeps per MQTT entity, so it works again right after a restart. */
interface StoredConfig {
  discovery_key: string;
  /** null: released (see MqttEntity.owner) */
  owner: string | null;
  component: string;
  cfg: Cfg;
}

/**
 * Home Assistant MQTT discovery: configs on `<prefix>/…/config` create, update and (empty
 * payload) remove entities and devices; state, availability and JSON-attribute topics drive
 * the state machine; service calls become command-topic publishes. Entities and their configs
 * live in the registry, so they keep working after a restart before devices re-announce
 * (devices re-announce on the `<prefix>/status` "online" birth message published at start).
 */
export class MqttDiscovery implements PlatformServices {
  readonly platform = MQTT_PLATFORM;
  private readonly deps: DiscoveryDeps;
  readonly prefix: string;
  private readonly index: EntityIndex;
  private readonly owners: DiscoveryOwnership;
  private readonly messages: MessageDeps;
  private configEntryId: number | null = null;
  private unsubscribe: (() => void) | null = null;
  readonly triggers: DeviceTriggers;

  constructor(deps: DiscoveryDeps) {
    this.deps = deps;
    this.prefix = deps.prefix ?? 'homeassistant';
    this.triggers = new DeviceTriggers({ bus: deps.bus, templates: deps.templates, log: deps.log });
    this.index = new EntityIndex(deps.acl);
    this.owners = new DiscoveryOwnership(this.index, deps.registry);
    this.messages = { templates: deps.templates, log: deps.log, emit: (entity, force) => this.emit(entity, force) };
  }

  /** Rebuilds entities from the registry and starts listening. Call before the broker accepts clients. */
  start(): void {
    const { registry, states } = this.deps;
    this.configEntryId = registry.ensureConfigEntry('mqtt', 'MQTT').id;
    for (const e of registry.entitiesWithConfig(MQTT_PLATFORM)) {
      const stored = e.config as unknown as StoredConfig;
      const component = COMPONENTS[stored.component];
      if (!component || !stored.cfg) continue;
      // parsed per row: one copy of the owner, the component and common config values for all
      stored.component = intern(stored.component);
      if (stored.owner !== null) stored.owner = intern(stored.owner);
      internValues(stored.cfg);
      const entity = new MqttEntity(e.entity_id, stored.discovery_key, component, stored.cfg, stored.owner);
      entity.disabled = e.disabled_by !== null;
      const raw = states.raw(e.entity_id);
      if (raw) entity.restore(raw.state, raw.attributes);
      this.index.attach(entity);
    }
    const offMessages = this.deps.broker.onMessage((topic, payload, user) => this.onMessage(topic, payload, user));
    const offRegistry = this.deps.bus?.on('entity_upsert', (e) => this.onRegistryChange(e.entity.entity_id));
    this.unsubscribe = () => {
      offMessages();
      offRegistry?.();
    };
  }

  /**
   * An entity enabled or disabled in the registry (config/entity_registry/update): a disabled one
   * stops listening and loses its state; an enabled one listens at once (HA needs a reload) and
   * takes its topics' retained messages, else the next message.
   */
  private onRegistryChange(entityId: string): void {
    const record = this.deps.registry.getEntity(entityId);
    const renamed = this.renamed(entityId);
    const entity = renamed ?? this.index.byEntityId.get(entityId);
    if (!entity || !record || entity.disabled === (record.disabled_by !== null)) return;
    this.index.detach(entity);
    entity.clearExpiry();
    entity.disabled = record.disabled_by !== null;
    this.index.attach(entity);
    if (entity.disabled) {
      this.deps.states.remove(entityId, { name: record.name, domain: record.domain, platform: record.platform });
      return;
    }
    entity.heard.clear();
    this.emit(entity);
    void this.replayRetained(entity, null, null);
  }

  /** The entity the user just renamed to entityId (new_entity_id), now listed under it. */
  private renamed(entityId: string): MqttEntity | undefined {
    const record = this.deps.registry.getEntity(entityId);
    if (!record || record.platform !== MQTT_PLATFORM || this.index.byEntityId.has(entityId)) return undefined;
    const key = (record.config as unknown as StoredConfig).discovery_key;
    const entity = this.index.byKey.get(key);
    if (!entity || entity.entityId === entityId) return undefined;
    this.index.byEntityId.delete(entity.entityId);
    entity.entityId = entityId;
    this.index.byEntityId.set(entityId, entity);
    return entity;
  }

  /** Announces the edge (HA birth message) so devices re-publish their discovery configs. */
  async announce(): Promise<void> {
    await this.deps.broker.publish(`${this.prefix}/status`, 'online', { qos: 1, retain: true });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    for (const e of this.index.byKey.values()) e.clearExpiry();
  }

  entityCount(): number {
    return this.index.byEntityId.size;
  }

  // ---- services ----

  supportedServices(domain: string): string[] {
    return Object.keys(COMPONENTS[domain]?.services ?? {});
  }

  async callService(entityId: string, service: string, data: Record<string, unknown>): Promise<void> {
    const entity = this.index.byEntityId.get(entityId);
    if (!entity) throw new ServiceError(`${entityId} is not an MQTT entity`);
    const handler = entity.component.services[service];
    if (!handler) throw new ServiceError(`${entity.component.domain}.${service} is not supported by ${entityId}`);
    if (entity.disabled) throw new ServiceError(`${entityId} is disabled`);
    const result = handler(entity.ctx(this.deps.templates), data);
    const qos = entity.cfg.qos === 1 || entity.cfg.qos === 2 ? entity.cfg.qos : 0;
    const retain = entity.cfg.retain === true;
    for (const cmd of result.commands) await this.deps.broker.publish(cmd.topic, cmd.payload, { qos, retain });
    if (result.optimistic) {
      entity.apply(result.optimistic);
      this.emit(entity, entity.component.domain === 'button');
    }
  }

  // ---- ownership (ownership.ts) ----

  /** Every discovery config with its owner, by topic. */
  ownership(): MqttOwnership[] {
    return this.owners.list();
  }

  /** Gives the configs of one device, or one config, to `owner` (null releases them); null when nothing matches. */
  setOwner(target: { device_id: number } | { discovery_topic: string }, owner: string | null): MqttOwnership[] | null {
    return this.owners.set(target, owner);
  }

  /** Releases every discovery config `username` owns (its credentials are gone); returns how many. */
  releaseOwner(username: string): number {
    return this.owners.release(username);
  }

  // ---- messages ----

  private onMessage(topic: string, payload: Buffer, user: AuthenticatedUser | null): void {
    if (topic.startsWith(this.prefix) && topic.endsWith('/config')) {
      const dt = parseDiscoveryTopic(this.prefix, topic);
      if (dt) {
        this.onDiscovery(dt, payload.toString('utf8'), user?.username ?? EDGE_OWNER);
        return;
      }
    }
    const text = payload.toString('utf8');
    this.triggers.onMessage(topic, text);
    const subs = this.index.topics.get(topic);
    if (subs) dispatchMessage(topic, subs, text, this.messages);
  }

  private onDiscovery(dt: ReturnType<typeof parseDiscoveryTopic> & object, text: string, owner: string): void {
    const { log } = this.deps;
    const ofTopic = (e: MqttEntity) => e.key === dt.topic || e.key.startsWith(dt.topic + '#');
    if (isMigration(text)) {
      // single ↔ device discovery: the entities stay until their new config takes them over
      for (const e of this.index.byKey.values()) if (ofTopic(e)) e.migrating = true;
      log.info(`mqtt discovery: ${dt.topic} migrates to another discovery topic`);
      return;
    }
    const parsed = parseDiscoveryPayload(dt, text);
    if (parsed.kind === 'invalid') {
      log.warn(`mqtt discovery: ignored ${dt.topic}: ${parsed.reason}`);
      return;
    }
    if (parsed.kind === 'remove') {
      for (const entity of [...this.index.byKey.values()])
        if (ofTopic(entity) && !entity.migrating) this.removeEntity(entity);
      this.removeTriggers(dt.topic);
      return;
    }
    for (const key of parsed.removedKeys) {
      const entity = this.index.byKey.get(key);
      if (entity) this.removeEntity(entity);
      this.removeTriggers(key);
    }
    if (dt.component === 'device') {
      // components no longer listed in a device config are gone
      const listed = new Set(parsed.entities.map((e) => e.key));
      for (const entity of [...this.index.byKey.values()])
        if (entity.key.startsWith(dt.topic + '#') && !listed.has(entity.key)) this.removeEntity(entity);
      for (const key of this.triggers.keys())
        if (key.startsWith(dt.topic + '#') && !listed.has(key)) this.removeTriggers(key);
    }
    for (const d of parsed.entities) {
      try {
        this.upsert(d, owner);
      } catch (err) {
        log.warn(`mqtt discovery: ignored ${d.key}: ${(err as Error).message}`);
      }
    }
  }

  private upsert(d: EntityDiscovery, owner: string): void {
    const { registry, states, templates, log } = this.deps;
    if (d.component === 'device_automation') {
      this.upsertTrigger(d);
      return;
    }
    const component = COMPONENTS[d.component];
    if (!component) {
      log.warn(`mqtt discovery: component ${d.component} is not supported (${d.key})`);
      return;
    }
    const invalid = component.validate(d.cfg);
    if (invalid) throw new Error(invalid);
    internValues(d.cfg);
    for (const [k, v] of Object.entries(d.cfg))
      if (k.endsWith('template') && typeof v === 'string') templates.validate(v);

    const uniqueId = typeof d.cfg.unique_id === 'string' && d.cfg.unique_id ? d.cfg.unique_id : d.key;
    const previous = this.index.byKey.get(d.key);
    if (previous && registry.getEntity(previous.entityId)?.unique_id !== uniqueId) this.removeEntity(previous);
    const other = registry.getEntityByUniqueId(MQTT_PLATFORM, uniqueId);
    const attached = other ? this.index.byEntityId.get(other.entity_id) : undefined;
    if (other && (other.config as unknown as StoredConfig).discovery_key !== d.key && attached && !attached.migrating) {
      throw new Error(`unique_id ${uniqueId} is already used by ${other.entity_id}`);
    }

    const device = this.upsertDeviceOf(d.cfg, d.objectId);
    const name = entityName(d.cfg, component.domain, device?.name ?? null, d.objectId);
    const stored: StoredConfig = { discovery_key: d.key, owner, component: d.component, cfg: d.cfg };
    const record = registry.upsertEntity({
      platform: MQTT_PLATFORM,
      unique_id: uniqueId,
      domain: component.domain,
      name,
      suggested_object_id: suggestedObjectId(d.cfg, name),
      config_entry_id: this.configEntryId,
      device_registry_id: device?.id ?? null,
      config: stored as unknown as Record<string, unknown>,
      // HA: enabled_by_default only counts when the entity is first registered
      disabled_by: d.cfg.enabled_by_default === false ? 'integration' : null,
      // a registry field in HA, not a state attribute
      entity_category:
        d.cfg.entity_category === 'config' || d.cfg.entity_category === 'diagnostic' ? d.cfg.entity_category : null,
    });
    const disabled = record.disabled_by !== null;

    const old = this.index.byEntityId.get(record.entity_id);
    if (old) {
      this.index.detach(old);
      old.clearExpiry();
    }
    const entity = new MqttEntity(record.entity_id, d.key, component, d.cfg, owner);
    entity.disabled = disabled;
    const raw = states.raw(record.entity_id);
    if (old) {
      entity.realState = old.realState;
      entity.attrs = old.attrs;
      entity.jsonAttrs = old.jsonAttrs;
    } else if (raw) entity.restore(raw.state, raw.attributes);
    this.index.attach(entity);
    this.emit(entity);
    if (!old) log.info(`mqtt discovery: added ${record.entity_id} (${d.key})${originOf(d.cfg)}`);
    void this.replayRetained(
      entity,
      raw?.last_updated ?? null,
      old ? new Set(old.subscriptions().map(([topic]) => topic)) : null,
    );
  }

  /** Replays the retained messages of the entity's topics (messages.ts says which count). */
  private replayRetained(entity: MqttEntity, storedAt: string | null, knownTopics: Set<string> | null): Promise<void> {
    return replayRetained(entity, storedAt, knownTopics, {
      ...this.messages,
      broker: this.deps.broker,
      current: (e) => this.index.byEntityId.get(e.entityId) === e,
    });
  }

  /**
   * Registers the config's device. A config that names no device (only identifiers) never
   * renames an existing one; a new unnamed device is named after the config's object id.
   */
  private upsertDeviceOf(cfg: Cfg, objectId: string) {
    const { registry } = this.deps;
    const info = deviceInfo(cfg);
    if (!info) return null;
    const name = info.name ?? (registry.findDevice(info.identifiers)?.name || objectId);
    return registry.upsertDevice({ ...info, name, config_entry_id: this.configEntryId });
  }

  /** A device trigger: registers its device (HA requires one) and starts matching its topic. */
  private upsertTrigger(d: EntityDiscovery): void {
    const invalid = validateDeviceTrigger(d.cfg);
    if (invalid) throw new Error(invalid);
    if (typeof d.cfg.value_template === 'string') this.deps.templates.validate(d.cfg.value_template);
    const device = this.upsertDeviceOf(d.cfg, d.objectId);
    if (!device) throw new Error('device needs identifiers or connections');
    const t = triggerConfig(d, parseDiscoveryTopic(this.prefix, configTopicOf(d.key)), device.id);
    if (!this.triggers.has(d.key))
      this.deps.log.info(
        `mqtt discovery: added device trigger ${t.discoveryId} (${t.type} ${t.subtype})${originOf(d.cfg)}`,
      );
    this.triggers.upsert(t);
  }

  private removeTriggers(key: string): void {
    const { registry } = this.deps;
    for (const deviceId of this.triggers.remove(key)) {
      if (registry.entitiesOfDevice(deviceId).length === 0 && !this.triggers.deviceIds().has(deviceId))
        registry.removeDevice(deviceId);
    }
  }

  private removeEntity(entity: MqttEntity): void {
    const { registry, states, log } = this.deps;
    this.index.detach(entity);
    entity.clearExpiry();
    const record = registry.getEntity(entity.entityId);
    if (!record) return;
    registry.removeEntity(entity.entityId);
    states.remove(entity.entityId, { name: record.name, domain: record.domain, platform: record.platform });
    if (
      record.device_registry_id !== null &&
      registry.entitiesOfDevice(record.device_registry_id).length === 0 &&
      !this.triggers.deviceIds().has(record.device_registry_id)
    ) {
      registry.removeDevice(record.device_registry_id);
    }
    log.info(`mqtt discovery: removed ${entity.entityId}`);
  }

  private emit(entity: MqttEntity, force = false): void {
    if (entity.disabled) return;
    this.deps.states.update(entity.entityId, entity.currentState(), entity.attributes(), { force });
  }
}
