import type { EntityState } from '@smarthome/protocol';
import type { EventBus } from '../bus.ts';
import type { EdgeDatabase } from '../db/database.ts';
import type { Registry } from '../registry/registry.ts';
import type { RegistryEntity } from '../registry/records.ts';
import { StateWriter, type StoredState } from './writer.ts';

export interface StateMachineOptions {
  /** longest time a changed state waits before it is written (ms) */
  flushDelayMs?: number;
  /** a batch this large is written at once */
  maxBatch?: number;
  /** told of each failed background write (the rows are kept and retried) */
  onWriteError?: (err: unknown) => void;
}

export interface SetStateOptions {
  /** a state change even when nothing changed (HA force_update): state_changed, new last_changed and last_updated */
  force?: boolean;
}

/**
 * Current state of every entity: an in-memory map backed by SQLite (write-behind via
 * StateWriter), restored on start. Every change emits `state_changed` on the bus.
 * Entities without a published state answer state null with attributes from the registry;
 * disabled entities (registry disabled_by) have no state at all, as in HA.
 */
export class StateMachine {
  private readonly registry: Registry;
  private readonly bus: EventBus;
  private readonly writer: StateWriter;
  private readonly current = new Map<string, StoredState>();

  constructor(database: EdgeDatabase, registry: Registry, bus: EventBus, options: StateMachineOptions = {}) {
    this.registry = registry;
    this.bus = bus;
    this.writer = new StateWriter(
      database,
      options.flushDelayMs ?? 250,
      options.maxBatch ?? 1000,
      options.onWriteError,
    );
  }

  /** Restores the last state of every entity from SQLite. */
  start(): void {
    this.current.clear();
    for (const row of this.writer.loadAll()) this.current.set(row.entity_id, row);
    this.writer.start();
  }

  /** Writes everything pending; after stop() the map still answers reads. */
  stop(): void {
    this.writer.stop();
  }

  flush(): void {
    this.writer.flush();
  }

  get pendingWrites(): number {
    return this.writer.pending;
  }

  /** The full state item for an entity in the registry, or undefined. */
  get(entityId: string): EntityState | undefined {
    const entity = this.registry.getEntity(entityId);
    // as HA: a disabled entity has no state
    if (!entity || entity.disabled_by !== null) return undefined;
    return this.toItem(entityId, entity, this.current.get(entityId));
  }

  /** The raw stored state (state string + attributes) or undefined when none was published. */
  raw(entityId: string): StoredState | undefined {
    return this.current.get(entityId);
  }

  all(): EntityState[] {
    return this.registry
      .entitiesWithConfig()
      .filter((e) => e.disabled_by === null)
      .map((e) => this.toItem(e.entity_id, e, this.current.get(e.entity_id)));
  }

  /**
   * Sets state and attributes (attributes replace the previous ones). Returns the new
   * state item, or undefined when the entity is unknown.
   */
  set(
    entityId: string,
    state: string | null,
    attributes: Record<string, unknown>,
    options: SetStateOptions = {},
  ): EntityState | undefined {
    const entity = this.registry.getEntity(entityId);
    if (!entity || entity.disabled_by !== null) return undefined;
    const stored = this.store(entityId, entity, state, attributes, options);
    // the item state_changed carried, when one was built
    const item = this.emitted;
    this.emitted = undefined;
    return item ?? this.toItem(entityId, entity, stored);
  }

  /**
   * set() for callers that do not read the new item (MQTT ingest, #19): no state item is
   * built unless someone listens to state_changed.
   */
  update(
    entityId: string,
    state: string | null,
    attributes: Record<string, unknown>,
    options: SetStateOptions = {},
  ): void {
    const entity = this.registry.getEntity(entityId);
    if (entity && entity.disabled_by === null) this.store(entityId, entity, state, attributes, options);
    this.emitted = undefined;
  }

  /** the new item store() emitted last */
  private emitted: EntityState | undefined;

  /** Stores a change (and emits state_changed); returns the entity's stored state after it. */
  private store(
    entityId: string,
    entity: RegistryEntity,
    state: string | null,
    attributes: Record<string, unknown>,
    options: SetStateOptions,
  ): StoredState | undefined {
    const previous = this.current.get(entityId);
    const stateChanged = !previous || previous.state !== state;
    // the attributes are compared only when the state alone does not make it a change
    if (previous && !stateChanged && !options.force && sameJson(previous.attributes, attributes)) return previous;
    const ts = isoNow();
    const next: StoredState = {
      entity_id: entityId,
      state,
      attributes,
      // HA's force_update counts as a change of state: last_changed moves too (core.py async_set_internal)
      last_changed: stateChanged || options.force || !previous ? ts : previous.last_changed,
      last_updated: ts,
    };
    this.current.set(entityId, next);
    this.writer.put(next);
    if (this.bus.listenerCount('state_changed') > 0) {
      const oldItem = previous ? this.toItem(entityId, entity, previous) : null;
      const newItem = this.toItem(entityId, entity, next);
      this.bus.emit('state_changed', { entity_id: entityId, old_state: oldItem, new_state: newItem });
      this.emitted = newItem;
    }
    return next;
  }

  /**
   * Publishes an entity's state again after its registry settings (user name, icon) changed, as
   * HA writes the state on a registry update: state_changed from `before` when the attributes
   * differ, last_changed kept.
   */
  republish(entityId: string, before: EntityState | undefined): EntityState | undefined {
    const entity = this.registry.getEntity(entityId);
    if (!entity || entity.disabled_by !== null || !before) return undefined;
    const stored = this.current.get(entityId);
    const after = this.toItem(entityId, entity, stored);
    if (sameJson(before.attributes, after.attributes)) return after;
    let item = after;
    if (stored) {
      const next = { ...stored, last_updated: new Date().toISOString() };
      this.current.set(entityId, next);
      this.writer.put(next);
      item = this.toItem(entityId, entity, next);
    }
    this.bus.emit('state_changed', { entity_id: entityId, old_state: before, new_state: item });
    return item;
  }

  /**
   * Moves a renamed entity's state to its new id (the registry already renamed it), as HA: a
   * state_changed removing the old id, then one adding the new id.
   */
  rename(oldId: string, newId: string): void {
    const entity = this.registry.getEntity(newId);
    const stored = this.current.get(oldId);
    if (!entity || !stored) return;
    this.current.delete(oldId);
    this.writer.delete(oldId);
    const moved = { ...stored, entity_id: newId };
    this.current.set(newId, moved);
    this.writer.put(moved);
    if (entity.disabled_by !== null) return;
    const oldItem = this.toItem(oldId, entity, stored);
    this.bus.emit('state_changed', { entity_id: oldId, old_state: oldItem, new_state: null });
    this.bus.emit('state_changed', { entity_id: newId, old_state: null, new_state: this.toItem(newId, entity, moved) });
  }

  /** Forgets an entity's state (entity removed): emits state_changed with new_state null. */
  remove(entityId: string, meta?: { name: string; domain: string; platform: string }): void {
    const previous = this.current.get(entityId);
    this.current.delete(entityId);
    this.writer.delete(entityId);
    if (previous && meta) {
      this.bus.emit('state_changed', {
        entity_id: entityId,
        old_state: this.toItem(entityId, meta, previous),
        new_state: null,
      });
    }
  }

  /**
   * HA's state: the user's registry name replaces the whole friendly_name (no device-name prefix)
   * and the user's icon the integration's, over whatever the integration published.
   */
  private toItem(entityId: string, meta: ItemMeta, stored: StoredState | undefined): EntityState {
    const { name, domain, platform } = meta;
    const user: Record<string, unknown> = {};
    if (meta.name_by_user) user.friendly_name = meta.name_by_user;
    if (meta.icon) user.icon = meta.icon;
    if (!stored) {
      return {
        entity_id: entityId,
        name,
        domain,
        platform,
        state: null,
        attributes: { friendly_name: name, ...user },
        last_changed: null,
        last_updated: null,
      };
    }
    return {
      entity_id: entityId,
      name,
      domain,
      platform,
      state: stored.state,
      attributes: { friendly_name: name, ...stored.attributes, ...user },
      last_changed: stored.last_changed,
      last_updated: stored.last_updated,
    };
  }
}

type ItemMeta = Pick<RegistryEntity, 'name' | 'domain' | 'platform'> &
  Partial<Pick<RegistryEntity, 'name_by_user' | 'icon'>>;

/** new Date().toISOString(), formatted once per millisecond (ingest sets many states in one) */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}
let isoMs = NaN;
let isoText = '';

function sameJson(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    const va = a[k];
    const vb = b[k];
    if (va === vb) continue;
    if (typeof va !== 'object' || typeof vb !== 'object' || va === null || vb === null) return false;
    if (JSON.stringify(va) !== JSON.stringify(vb)) return false;
  }
  return true;
}
