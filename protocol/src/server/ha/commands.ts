import { z } from 'zod';
import {
  HaCallService,
  HaEntityRegistryGet,
  HaFireEvent,
  HaGetConfig,
  HaGetPanels,
  HaGetServices,
  HaGetStates,
  HaPing,
  HaSubscribeEntities,
  HaSubscribeEvents,
  HaSupportedFeatures,
  HaUnsubscribeEvents,
  type HaState,
} from '../../ha/index.ts';
import { HaCommandError } from './backend.ts';
import { entitiesEvent, initialEntitiesEvent } from './entities.ts';
import { ALREADY_ANSWERED, command } from './command.ts';
import { clientCommands } from './client-commands.ts';

/** The core commands of HA's websocket_api (homeassistant/components/websocket_api/commands.py). */

export const coreCommands = {
  ...clientCommands,
  ping: command(HaPing, (session, msg) => {
    // HA answers a ping with a pong, not a result
    session.sendPong(msg.id);
    return ALREADY_ANSWERED;
  }),

  supported_features: command(HaSupportedFeatures, (session, msg) => {
    session.setCoalesce(msg.features.coalesce_messages === 1);
    return null;
  }),

  get_states: command(HaGetStates, (session) => session.backend.getStates(session.principal)),
  get_config: command(HaGetConfig, (session) => session.backend.getConfig(session.principal)),
  get_services: command(HaGetServices, (session) => session.backend.getServices(session.principal)),
  'config/entity_registry/list': command(
    z.object({ id: z.number().int(), type: z.literal('config/entity_registry/list') }),
    (session) => session.backend.entityRegistry(session.principal),
  ),
  'config/entity_registry/get': command(HaEntityRegistryGet, async (session, msg) => {
    const entry = (await session.backend.entityRegistry(session.principal)).find((e) => e.entity_id === msg.entity_id);
    if (!entry) throw new HaCommandError('not_found', 'Entity not found');
    return entry;
  }),
  'config/device_registry/list': command(
    z.object({ id: z.number().int(), type: z.literal('config/device_registry/list') }),
    (session) => session.backend.deviceRegistry(session.principal),
  ),
  'config/area_registry/list': command(
    z.object({ id: z.number().int(), type: z.literal('config/area_registry/list') }),
    (session) => session.backend.areaRegistry(session.principal),
  ),
  // the frontend's panels; clients only need the map to exist
  get_panels: command(HaGetPanels, () => ({})),

  call_service: command(HaCallService, (session, msg) => {
    const { id: _id, type: _type, ...call } = msg;
    return session.backend.callService(session.principal, call);
  }),

  fire_event: command(HaFireEvent, async (session, msg) => {
    await session.backend.fireEvent(session.principal, msg.event_type, msg.event_data ?? {});
    return { context: { id: newContextId(), parent_id: null, user_id: null } };
  }),

  subscribe_events: command(HaSubscribeEvents, async (session, msg) => {
    const unsubscribe = await session.backend.subscribeEvents(session.principal, msg.event_type, (event) =>
      session.sendEvent(msg.id, event),
    );
    session.addSubscription(msg.id, unsubscribe);
    return null;
  }),

  unsubscribe_events: command(HaUnsubscribeEvents, (session, msg) => {
    if (!session.removeSubscription(msg.subscription)) throw new HaCommandError('not_found', 'Subscription not found.');
    return null;
  }),

  subscribe_entities: command(HaSubscribeEntities, async (session, msg) => {
    const wanted = msg.entity_ids ? new Set(msg.entity_ids) : null;
    // What this client holds: an entity it has not been sent is added (`a`) whatever the event's
    // old_state says (a backend may report a registry row as the old state), as the client
    // ignores a change (`c`) for an entity it does not know.
    const sentIds = new Set<string>();
    // subscribe first, then read states: a change while reading is already in what is read
    let ready = false;
    const unsubscribe = await session.backend.subscribeEvents(session.principal, 'state_changed', (event) => {
      if (!ready) return;
      const data = event.data as { entity_id: string; old_state: HaState | null; new_state: HaState | null };
      if (wanted && !wanted.has(data.entity_id)) return;
      const known = sentIds.has(data.entity_id);
      if (data.new_state) sentIds.add(data.entity_id);
      else sentIds.delete(data.entity_id);
      const diff = entitiesEvent(data.entity_id, known ? data.old_state : null, data.new_state);
      if (diff) session.sendEvent(msg.id, diff);
    });
    session.addSubscription(msg.id, unsubscribe);
    const states = (await session.backend.getStates(session.principal)).filter(
      (s) => !wanted || wanted.has(s.entity_id),
    );
    for (const state of states) sentIds.add(state.entity_id);
    session.sendResult(msg.id, null);
    session.sendEvent(msg.id, initialEntitiesEvent(states));
    ready = true;
    return ALREADY_ANSWERED;
  }),
};

/** A context id in HA's form (a ULID: 26 Crockford base32 characters, time first). */
export function newContextId(time = Date.now()): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let t = time;
  let head = '';
  for (let i = 0; i < 10; i++) {
    head = alphabet[t % 32] + head;
    t = Math.floor(t / 32);
  }
  let tail = '';
  for (let i = 0; i < 16; i++) tail += alphabet[Math.floor(Math.random() * 32)];
  return head + tail;
}
