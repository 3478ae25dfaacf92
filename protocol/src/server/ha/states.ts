import { createHash } from 'node:crypto';
import type { EntityState } from '../../devices.ts';
import type { HaState } from '../../ha/index.ts';

/**
 * An entity state item (edge state machine, cloud mirror) in Home Assistant's shape. Neither
 * keeps contexts: the context id is derived from entity and update time (stable across reads,
 * new on every update, the same on edge and cloud), and an entity that never reported is
 * "unknown" since `since`.
 */
export function toHaState(item: EntityState, since: string): HaState {
  const lastChanged = item.last_changed ?? since;
  const lastUpdated = item.last_updated ?? lastChanged;
  return {
    entity_id: item.entity_id,
    state: item.state ?? 'unknown',
    attributes: item.attributes,
    last_changed: lastChanged,
    last_updated: lastUpdated,
    last_reported: lastUpdated,
    context: { id: contextIdFor(item.entity_id, lastUpdated), parent_id: null, user_id: null },
  };
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** 26 Crockford base32 characters like HA's ULID context ids, derived from what identifies the update. */
export function contextIdFor(entityId: string, lastUpdated: string): string {
  const digest = createHash('sha256').update(`${entityId}\n${lastUpdated}`).digest();
  let out = '';
  for (let i = 0; i < 26; i++) out += CROCKFORD[digest[i] % 32];
  return out;
}
