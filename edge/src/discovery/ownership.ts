import type { MqttOwnership } from '@smarthome/protocol/edge-local';
import type { Registry } from '../registry/registry.ts';
import { commandTopicsOf } from './config.ts';
import { configTopicOf, type EntityIndex } from './entity-index.ts';
import type { MqttEntity } from './entity.ts';

/** Who owns which discovery config (and so its command topics): listed, given, released. */
export class DiscoveryOwnership {
  private readonly index: EntityIndex;
  private readonly registry: Registry;

  constructor(index: EntityIndex, registry: Registry) {
    this.index = index;
    this.registry = registry;
  }

  /** Every discovery config with its owner, by topic. */
  list(): MqttOwnership[] {
    const byTopic = new Map<string, MqttEntity[]>();
    for (const e of this.index.byKey.values()) {
      const topic = configTopicOf(e.key);
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), e]);
    }
    return [...byTopic.keys()].sort().map((topic) => this.describe(topic, byTopic.get(topic) as MqttEntity[]));
  }

  /**
   * Gives the configs of one device, or one config, to `owner` (null releases them); returns
   * them as they are now, or null when nothing matches. `owner` must be an existing MQTT user.
   */
  set(target: { device_id: number } | { discovery_topic: string }, owner: string | null): MqttOwnership[] | null {
    const { registry } = this;
    const matches = (e: MqttEntity) =>
      'device_id' in target
        ? registry.getEntity(e.entityId)?.device_registry_id === target.device_id
        : configTopicOf(e.key) === target.discovery_topic;
    const topics = new Set([...this.index.byKey.values()].filter(matches).map((e) => configTopicOf(e.key)));
    if (topics.size === 0) return null;
    this.assign(topics, owner);
    return this.list().filter((o) => topics.has(o.discovery_topic));
  }

  /** Releases every discovery config `username` owns (its credentials are gone); returns how many. */
  release(username: string): number {
    const topics = new Set(
      [...this.index.byKey.values()].filter((e) => e.owner === username).map((e) => configTopicOf(e.key)),
    );
    this.assign(topics, null);
    return topics.size;
  }

  private describe(topic: string, entities: MqttEntity[]): MqttOwnership {
    const records = entities.map((e) => this.registry.getEntity(e.entityId));
    return {
      discovery_topic: topic,
      owner: entities[0].owner,
      device_id: records.find((r) => r?.device_registry_id != null)?.device_registry_id ?? null,
      entity_ids: entities.map((e) => e.entityId).sort(),
      command_topics: [...new Set(entities.flatMap((e) => commandTopicsOf(e.cfg)))],
    };
  }

  /** Gives whole discovery configs to `owner` (null releases them): registry first, then memory and ACL. */
  private assign(configTopics: Set<string>, owner: string | null): void {
    const { registry } = this;
    const entities = [...this.index.byKey.values()].filter((e) => configTopics.has(configTopicOf(e.key)));
    registry.setEntityConfigs(
      entities.map((e) => ({ entity_id: e.entityId, config: { ...registry.getEntity(e.entityId)?.config, owner } })),
    );
    for (const e of entities) e.owner = owner;
    for (const topic of configTopics) this.index.refreshOwnership(topic);
  }
}
