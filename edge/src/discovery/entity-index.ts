import type { MqttAcl } from '../mqtt/acl.ts';
import { commandTopicsOf } from './config.ts';
import type { MqttEntity, Subscription } from './entity.ts';

/** The discovery config topic an entity came from (device-based discovery keys add `#<component id>`). */
export const configTopicOf = (key: string) => key.split('#')[0];

/**
 * The attached MQTT entities, by discovery key, entity id, config topic and subscribed topic;
 * keeps the ACL's discovery ownership (config topic → owner, command topics) in step.
 */
export class EntityIndex {
  private readonly acl: MqttAcl;
  readonly byKey = new Map<string, MqttEntity>();
  /**
   * byKey's entities by discovery config topic: ownership refreshes stay O(1) per entity (1,000 at
   * start). Arrays, not Sets: nearly every topic has one entity, and a one-element array is a third
   * of an empty Set's memory (10,000 entities: ~1 MB).
   */
  private readonly byConfigTopic = new Map<string, MqttEntity[]>();
  readonly byEntityId = new Map<string, MqttEntity>();
  readonly topics = new Map<string, { entity: MqttEntity; sub: Subscription }[]>();

  constructor(acl: MqttAcl) {
    this.acl = acl;
  }

  attach(entity: MqttEntity): void {
    const replaced = this.byKey.get(entity.key);
    if (replaced && replaced !== entity) this.unindex(replaced);
    this.byKey.set(entity.key, entity);
    const topic = configTopicOf(entity.key);
    const same = this.byConfigTopic.get(topic);
    if (!same) this.byConfigTopic.set(topic, [entity]);
    else if (!same.includes(entity)) same.push(entity);
    this.byEntityId.set(entity.entityId, entity);
    for (const [topic, sub] of entity.subscriptions()) {
      let list = this.topics.get(topic);
      if (!list) this.topics.set(topic, (list = []));
      list.push({ entity, sub });
    }
    this.refreshOwnership(configTopicOf(entity.key));
  }

  detach(entity: MqttEntity): void {
    if (this.byKey.get(entity.key) === entity) {
      this.byKey.delete(entity.key);
      this.unindex(entity);
    }
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

  /** ACL: the owner of a config topic owns the command topics of every entity it declares. */
  refreshOwnership(configTopic: string): void {
    const entities = this.byConfigTopic.get(configTopic) ?? [];
    this.acl.setDiscoveryOwner(
      configTopic,
      entities.length ? entities[0].owner : null,
      entities.flatMap((e) => commandTopicsOf(e.cfg)),
    );
  }

  private unindex(entity: MqttEntity): void {
    const topic = configTopicOf(entity.key);
    const rest = this.byConfigTopic.get(topic)?.filter((e) => e !== entity) ?? [];
    if (rest.length) this.byConfigTopic.set(topic, rest);
    else this.byConfigTopic.delete(topic);
  }
}
