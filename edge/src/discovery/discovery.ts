import type { MqttOwnership } from '@smarthome/protocol/edge-local';
import type { EventBus } from '../bus.ts';
import type { Logger } from '../log.ts';
import type { MqttAcl } from '../mqtt/acl.ts';
import type { MqttBroker } from '../mqtt/broker.ts';
import type { AuthenticatedUser } from '../mqtt/users.ts';
import type { Registry } from '../registry/registry.ts';
import type { StateMachine } from '../states/state-machine.ts';
import type { PlatformServices } from '../services/services.ts';
import { TemplateError, type TemplateEngine } from '../templates/template.ts';
import { ServiceError } from '../errors.ts';
import { COMPONENTS } from './components/index.ts';
import type { Cfg } from './components/types.ts';
import {
  commandTopicsOf,
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
import { MqttEntity, type Subscription } from './entity.ts';

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

/** The discovery config topic an entity came from (device-based discovery keys add `#<component id>`). */
const configTopicOf = (key: string) => key.split('#')[0];

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
  private readonly byKey = new Map<string, MqttEntity>();
  private readonly byEntityId = new Map<string, MqttEntity>();
  private readonly topics = new Map<string, { entity: MqttEntity; sub: Subscription }[]>();
  private configEntryId: number | null = null;
  private unsubscribe: (() => void) | null = null;
  readonly triggers: DeviceTriggers;

  constructor(deps: DiscoveryDeps) {
    this.deps = deps;
    this.prefix = deps.prefix ?? 'homeassistant';
    this.triggers = new DeviceTriggers({ bus: deps.bus, templates: deps.templates, log: deps.log });
  }

  /** Rebuilds entities from the registry and starts listening. Call before the broker accepts clients. */
  start(): void {
    const { registry, states } = this.deps;
    this.configEntryId = registry.ensureConfigEntry('mqtt', 'MQTT').id;
    for (const e of registry.entitiesWithConfig(MQTT_PLATFORM)) {
      const stored = e.config as unknown as StoredConfig;
      const component = COMPONENTS[stored.component];
      if (!component || !stored.cfg) continue;
      const entity = new MqttEntity(e.entity_id, stored.discovery_key, component, stored.cfg, stored.owner);
      entity.disabled = e.disabled_by !== null;
      const raw = states.raw(e.entity_id);
      if (raw) entity.restore(raw.state, raw.attributes);
      this.attach(entity);
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
    const entity = this.byEntityId.get(entityId);
    const record = this.deps.registry.getEntity(entityId);
    if (!entity || !record || entity.disabled === (record.disabled_by !== null)) return;
    this.detach(entity);
    entity.clearExpiry();
    entity.disabled = record.disabled_by !== null;
    this.attach(entity);
    if (entity.disabled) {
      this.deps.states.remove(entityId, { name: record.name, domain: record.domain, platform: record.platform });
      return;
    }
    entity.heard.clear();
    this.emit(entity);
    void this.replayRetained(entity, null, null);
  }

  /** Announces the edge (HA birth message) so devices re-publish their discovery configs. */
  async announce(): Promise<void> {
    await this.deps.broker.publish(`${this.prefix}/status`, 'online', { qos: 1, retain: true });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    for (const e of this.byKey.values()) e.clearExpiry();
  }

  entityCount(): number {
    return this.byEntityId.size;
  }

  // ---- services ----

  supportedServices(domain: string): string[] {
    return Object.keys(COMPONENTS[domain]?.services ?? {});
  }

  async callService(entityId: string, service: string, data: Record<string, unknown>): Promise<void> {
    const entity = this.byEntityId.get(entityId);
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

  // ---- ownership ----

  /** Every discovery config with its owner, by topic. */
  ownership(): MqttOwnership[] {
    const byTopic = new Map<string, MqttEntity[]>();
    for (const e of this.byKey.values()) {
      const topic = configTopicOf(e.key);
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), e]);
    }
    return [...byTopic.keys()].sort().map((topic) => this.describeOwnership(topic, byTopic.get(topic) as MqttEntity[]));
  }

  /**
   * Gives the configs of one device, or one config, to `owner` (null releases them); returns
   * them as they are now, or null when nothing matches. `owner` must be an existing MQTT user.
   */
  setOwner(target: { device_id: number } | { discovery_topic: string }, owner: string | null): MqttOwnership[] | null {
    const { registry } = this.deps;
    const matches = (e: MqttEntity) =>
      'device_id' in target
        ? registry.getEntity(e.entityId)?.device_registry_id === target.device_id
        : configTopicOf(e.key) === target.discovery_topic;
    const topics = new Set([...this.byKey.values()].filter(matches).map((e) => configTopicOf(e.key)));
    if (topics.size === 0) return null;
    this.assignOwner(topics, owner);
    return this.ownership().filter((o) => topics.has(o.discovery_topic));
  }

  private describeOwnership(topic: string, entities: MqttEntity[]): MqttOwnership {
    const records = entities.map((e) => this.deps.registry.getEntity(e.entityId));
    return {
      discovery_topic: topic,
      owner: entities[0].owner,
      device_id: records.find((r) => r?.device_registry_id != null)?.device_registry_id ?? null,
      entity_ids: entities.map((e) => e.entityId).sort(),
      command_topics: [...new Set(entities.flatMap((e) => commandTopicsOf(e.cfg)))],
    };
  }

  /** Releases every discovery config `username` owns (its credentials are gone); returns how many. */
  releaseOwner(username: string): number {
    const topics = new Set(
      [...this.byKey.values()].filter((e) => e.owner === username).map((e) => configTopicOf(e.key)),
    );
    this.assignOwner(topics, null);
    return topics.size;
  }

  /** Gives whole discovery configs to `owner` (null releases them): registry first, then memory and ACL. */
  private assignOwner(configTopics: Set<string>, owner: string | null): void {
    const { registry } = this.deps;
    const entities = [...this.byKey.values()].filter((e) => configTopics.has(configTopicOf(e.key)));
    registry.setEntityConfigs(
      entities.map((e) => ({ entity_id: e.entityId, config: { ...registry.getEntity(e.entityId)?.config, owner } })),
    );
    for (const e of entities) e.owner = owner;
    for (const topic of configTopics) this.refreshOwnership(topic);
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
    const subs = this.topics.get(topic);
    if (!subs) return;
    // one message may feed several parts of one entity (state + JSON attributes): emit once
    let changed: Map<MqttEntity, boolean> | null = null;
    for (const { entity, sub } of subs) {
      entity.heard.add(topic);
      try {
        const force = this.onEntityMessage(entity, sub, text);
        if (force !== null) (changed ??= new Map()).set(entity, (changed.get(entity) ?? false) || force);
      } catch (err) {
        this.deps.log.warn(`mqtt: ${entity.entityId} could not use a message on ${topic}: ${(err as Error).message}`);
      }
    }
    if (changed) for (const [entity, force] of changed) this.emit(entity, force);
  }

  /** Applies one message to an entity: null when nothing changed, else whether to force an update. */
  private onEntityMessage(entity: MqttEntity, sub: Subscription, text: string): boolean | null {
    const tpl = this.deps.templates;
    try {
      if (sub.kind === 'availability') return entity.setAvailability(sub.index, text, tpl) ? false : null;
      if (sub.kind === 'json_attributes') return entity.setJsonAttributes(text, tpl) ? false : null;
      const update = entity.component.stateHandlers[sub.key](text, entity.ctx(tpl));
      if (!update) return null;
      entity.apply(update);
      entity.touch(() => this.emit(entity));
      return entity.cfg.force_update === true || update.force === true;
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
      // a template that fails on this payload: the value it makes is unavailable, the entity stays
      const option = sub.kind === 'state' ? sub.key.replace(/_topic$/, '') : sub.kind;
      this.deps.log.warn(
        `mqtt: ${entity.entityId}: template failed on a message on ${option}, value unavailable: ${err.message}`,
      );
      return entity.templateFailed(sub, tpl) ? false : null;
    }
  }

  private onDiscovery(dt: ReturnType<typeof parseDiscoveryTopic> & object, text: string, owner: string): void {
    const { log } = this.deps;
    const ofTopic = (e: MqttEntity) => e.key === dt.topic || e.key.startsWith(dt.topic + '#');
    if (isMigration(text)) {
      // single ↔ device discovery: the entities stay until their new config takes them over
      for (const e of this.byKey.values()) if (ofTopic(e)) e.migrating = true;
      log.info(`mqtt discovery: ${dt.topic} migrates to another discovery topic`);
      return;
    }
    const parsed = parseDiscoveryPayload(dt, text);
    if (parsed.kind === 'invalid') {
      log.warn(`mqtt discovery: ignored ${dt.topic}: ${parsed.reason}`);
      return;
    }
    if (parsed.kind === 'remove') {
      for (const entity of [...this.byKey.values()])
        if (ofTopic(entity) && !entity.migrating) this.removeEntity(entity);
      this.removeTriggers(dt.topic);
      return;
    }
    for (const key of parsed.removedKeys) {
      const entity = this.byKey.get(key);
      if (entity) this.removeEntity(entity);
      this.removeTriggers(key);
    }
    if (dt.component === 'device') {
      // components no longer listed in a device config are gone
      const listed = new Set(parsed.entities.map((e) => e.key));
      for (const entity of [...this.byKey.values()])
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
    for (const [k, v] of Object.entries(d.cfg))
      if (k.endsWith('template') && typeof v === 'string') templates.validate(v);

    const uniqueId = typeof d.cfg.unique_id === 'string' && d.cfg.unique_id ? d.cfg.unique_id : d.key;
    const previous = this.byKey.get(d.key);
    if (previous && registry.getEntity(previous.entityId)?.unique_id !== uniqueId) this.removeEntity(previous);
    const other = registry.getEntityByUniqueId(MQTT_PLATFORM, uniqueId);
    const attached = other ? this.byEntityId.get(other.entity_id) : undefined;
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
    });
    const disabled = record.disabled_by !== null;

    const old = this.byEntityId.get(record.entity_id);
    if (old) {
      this.detach(old);
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
    this.attach(entity);
    this.emit(entity);
    if (!old) log.info(`mqtt discovery: added ${record.entity_id} (${d.key})${originOf(d.cfg)}`);
    void this.replayRetained(
      entity,
      raw?.last_updated ?? null,
      old ? new Set(old.subscriptions().map(([topic]) => topic)) : null,
    );
  }

  /**
   * State published (retained) before the config arrived still counts. But a device re-announcing
   * its config (after a restart of the edge, or on the birth message) must not roll a newer state
   * back to its older retained one (a later non-retained publish, or a retained one the crash kept
   * from the disk): a retained state or attribute message on a topic the entity already listened
   * to is applied only when it was received after the stored state was last updated. Availability
   * is always replayed: a new entity does not know it otherwise, and the retained LWT is its latest.
   */
  private async replayRetained(
    entity: MqttEntity,
    storedAt: string | null,
    knownTopics: Set<string> | null,
  ): Promise<void> {
    const stored = storedAt === null ? null : Date.parse(storedAt);
    for (const [topic, sub] of entity.subscriptions()) {
      const retained = await this.deps.broker.retained(topic);
      if (retained === undefined || this.byEntityId.get(entity.entityId) !== entity) continue;
      // a message that arrived while we were reading is newer than the retained one
      if (entity.heard.has(topic)) continue;
      if (
        sub.kind !== 'availability' &&
        stored !== null &&
        !Number.isNaN(stored) &&
        (knownTopics === null || knownTopics.has(topic))
      ) {
        // equal times: the retained message is the one that produced the stored state (or older within the same ms)
        if (retained.receivedAt === null || retained.receivedAt <= stored) continue;
      }
      try {
        const force = this.onEntityMessage(entity, sub, retained.payload.toString('utf8'));
        if (force !== null) this.emit(entity, force);
      } catch {
        /* a bad retained payload is ignored */
      }
    }
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

  private attach(entity: MqttEntity): void {
    this.byKey.set(entity.key, entity);
    this.byEntityId.set(entity.entityId, entity);
    for (const [topic, sub] of entity.subscriptions()) {
      let list = this.topics.get(topic);
      if (!list) this.topics.set(topic, (list = []));
      list.push({ entity, sub });
    }
    this.refreshOwnership(configTopicOf(entity.key));
  }

  /** ACL: the owner of a config topic owns the command topics of every entity it declares. */
  private refreshOwnership(configTopic: string): void {
    const entities = [...this.byKey.values()].filter((e) => configTopicOf(e.key) === configTopic);
    this.deps.acl.setDiscoveryOwner(
      configTopic,
      entities.length ? entities[0].owner : null,
      entities.flatMap((e) => commandTopicsOf(e.cfg)),
    );
  }

  private detach(entity: MqttEntity): void {
    if (this.byKey.get(entity.key) === entity) this.byKey.delete(entity.key);
    if (this.byEntityId.get(entity.entityId) === entity) this.byEntityId.delete(entity.entityId);
    for (const [topic] of entity.subscriptions()) {
      const list = this.topics.get(topic);
      if (!list) continue;
      const rest = list.filter((s) => s.entity !== entity);
      if (rest.length) this.topics.set(topic, rest);
      else this.topics.delete(topic);
    }
    this.refreshOwnership(configTopicOf(entity.key));
  }

  private removeEntity(entity: MqttEntity): void {
    const { registry, states, log } = this.deps;
    this.detach(entity);
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
    this.deps.states.set(entity.entityId, entity.currentState(), entity.attributes(), { force });
  }
}
