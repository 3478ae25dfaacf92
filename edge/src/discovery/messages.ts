import type { Logger } from '../log.ts';
import type { MqttBroker } from '../mqtt/broker.ts';
import { TemplateError, type TemplateEngine } from '../templates/template.ts';
import type { MqttEntity, Subscription } from './entity.ts';

/** What applying a message to an entity needs. */
export interface MessageDeps {
  templates: TemplateEngine;
  log: Logger;
  /** the entity's state changed: write it to the state machine */
  emit: (entity: MqttEntity, force?: boolean) => void;
}

/**
 * A state, availability or JSON attributes message to every entity part subscribed to its topic.
 * One message may feed several parts of one entity (state + JSON attributes): it is emitted once;
 * the first entity changed needs no map (the usual case: every part is one entity's).
 */
export function dispatchMessage(
  topic: string,
  subs: readonly { entity: MqttEntity; sub: Subscription }[],
  text: string,
  deps: MessageDeps,
): void {
  let first: MqttEntity | null = null;
  let firstForce = false;
  let others: Map<MqttEntity, boolean> | null = null;
  for (const { entity, sub } of subs) {
    if (entity.replaying > 0) entity.heard.add(topic);
    try {
      const force = applyMessage(entity, sub, text, deps);
      if (force === null) continue;
      if (first === null || first === entity) {
        first = entity;
        firstForce ||= force;
      } else (others ??= new Map()).set(entity, (others.get(entity) ?? false) || force);
    } catch (err) {
      deps.log.warn(`mqtt: ${entity.entityId} could not use a message on ${topic}: ${(err as Error).message}`);
    }
  }
  if (first) deps.emit(first, firstForce);
  if (others) for (const [entity, force] of others) deps.emit(entity, force);
}

/** Applies one message to an entity: null when nothing changed, else whether to force an update. */
export function applyMessage(entity: MqttEntity, sub: Subscription, text: string, deps: MessageDeps): boolean | null {
  const tpl = deps.templates;
  try {
    if (sub.kind === 'availability') return entity.setAvailability(sub.index, text, tpl) ? false : null;
    if (sub.kind === 'json_attributes') return entity.setJsonAttributes(text, tpl) ? false : null;
    const update = entity.component.stateHandlers[sub.key](text, entity.ctx(tpl));
    if (!update) return null;
    entity.apply(update);
    if (entity.expires) entity.touch(() => deps.emit(entity));
    return entity.cfg.force_update === true || update.force === true;
  } catch (err) {
    if (!(err instanceof TemplateError)) throw err;
    // a template that fails on this payload: the value it makes is unavailable, the entity stays
    const option = sub.kind === 'state' ? sub.key.replace(/_topic$/, '') : sub.kind;
    deps.log.warn(
      `mqtt: ${entity.entityId}: template failed on a message on ${option}, value unavailable: ${err.message}`,
    );
    return entity.templateFailed(sub, tpl) ? false : null;
  }
}

/**
 * State published (retained) before the config arrived still counts. But a device re-announcing
 * its config (after a restart of the edge, or on the birth message) must not roll a newer state
 * back to its older retained one (a later non-retained publish, or a retained one the crash kept
 * from the disk): a retained state or attribute message on a topic the entity already listened
 * to is applied only when it was received after the stored state was last updated. Availability
 * is always replayed: a new entity does not know it otherwise, and the retained LWT is its latest.
 * deps.current: whether the entity is still the one attached (a newer config may replace it meanwhile).
 */
export async function replayRetained(
  entity: MqttEntity,
  storedAt: string | null,
  knownTopics: Set<string> | null,
  deps: MessageDeps & { broker: MqttBroker; current: (entity: MqttEntity) => boolean },
): Promise<void> {
  entity.replaying++;
  try {
    await replay(entity, storedAt, knownTopics, deps);
  } finally {
    entity.replaying--;
  }
}

async function replay(
  entity: MqttEntity,
  storedAt: string | null,
  knownTopics: Set<string> | null,
  deps: MessageDeps & { broker: MqttBroker; current: (entity: MqttEntity) => boolean },
): Promise<void> {
  const stored = storedAt === null ? null : Date.parse(storedAt);
  for (const [topic, sub] of entity.subscriptions()) {
    const retained = await deps.broker.retained(topic);
    if (retained === undefined || !deps.current(entity)) continue;
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
      const force = applyMessage(entity, sub, retained.payload.toString('utf8'), deps);
      if (force !== null) deps.emit(entity, force);
    } catch {
      /* a bad retained payload is ignored */
    }
  }
}
