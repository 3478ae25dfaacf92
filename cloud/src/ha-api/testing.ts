import type { EntityState } from '@smarthome/protocol';
import type { TestCloud } from '../testing/harness.ts';

/**
 * Test helper: an edge's state change as the tunnel delivers it: the mirror takes the new state,
 * then the hub emits state_changed (what the HA fan-out listens to). Returns both states.
 */
export async function changeState(
  t: TestCloud,
  edgeId: number,
  entityId: string,
  state: string,
): Promise<{ old: EntityState; changed: EntityState }> {
  const old = (await t.cloud.services.mirror.state([edgeId], entityId))!;
  const now = new Date().toISOString();
  const changed = { ...old, state, last_changed: now, last_updated: now };
  await t.cloud.services.mirror.applyDelta(edgeId, { kind: 'state', state: changed });
  t.cloud.services.tunnel.emit('state_changed', { edgeId, entity_id: entityId, old_state: old, new_state: changed });
  return { old, changed };
}
