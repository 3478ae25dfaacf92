import type { HaCompressedDiff, HaCompressedState, HaEntitiesEvent, HaState } from '../../ha/index.ts';

/** subscribe_entities' compressed format, as HA's homeassistant/core.py (State.as_compressed_state / compressed_state_diff). */

const seconds = (iso: string) => new Date(iso).getTime() / 1000;

export function compressState(state: HaState): HaCompressedState {
  const out: HaCompressedState = {
    s: state.state,
    a: state.attributes,
    c: state.context.id,
    lc: seconds(state.last_changed),
  };
  if (state.last_updated !== state.last_changed) out.lu = seconds(state.last_updated);
  return out;
}

/** The diff from old to new, or null when nothing a client sees changed. */
export function compressDiff(oldState: HaState, newState: HaState): HaCompressedDiff | null {
  const plus: Partial<HaCompressedState> = {};
  if (oldState.state !== newState.state) plus.s = newState.state;
  if (oldState.context.id !== newState.context.id) plus.c = newState.context.id;
  if (oldState.last_changed !== newState.last_changed) plus.lc = seconds(newState.last_changed);
  else if (oldState.last_updated !== newState.last_updated) plus.lu = seconds(newState.last_updated);
  const added: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(newState.attributes)) {
    if (!(k in oldState.attributes) || JSON.stringify(oldState.attributes[k]) !== JSON.stringify(v)) added[k] = v;
  }
  if (Object.keys(added).length) plus.a = added;
  const removed = Object.keys(oldState.attributes).filter((k) => !(k in newState.attributes));
  const diff: HaCompressedDiff = {};
  if (Object.keys(plus).length) diff['+'] = plus;
  if (removed.length) diff['-'] = { a: removed };
  return diff['+'] || diff['-'] ? diff : null;
}

/** One state_changed as a subscribe_entities event (null when it changes nothing visible). */
export function entitiesEvent(
  entityId: string,
  oldState: HaState | null,
  newState: HaState | null,
): HaEntitiesEvent | null {
  if (!newState) return { r: [entityId] };
  if (!oldState) return { a: { [entityId]: compressState(newState) } };
  const diff = compressDiff(oldState, newState);
  return diff ? { c: { [entityId]: diff } } : null;
}

export function initialEntitiesEvent(states: HaState[]): HaEntitiesEvent {
  return { a: Object.fromEntries(states.map((s) => [s.entity_id, compressState(s)])) };
}
