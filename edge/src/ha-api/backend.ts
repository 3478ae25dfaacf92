import type {
  HaAreaRegistryEntry,
  HaEntityRegistryChanges,
  HaDeviceRegistryEntry,
  HaEntityRegistryEntry,
  HaCallService,
  HaCallServiceResult,
  HaConfig,
  HaEvent,
  HaLogbookEntry,
  HaServices,
  HaState,
  HaTemplateUpdate,
  HaTriggerEvent,
} from '@smarthome/protocol/ha/index';
import { Condition } from '@smarthome/protocol';
import { describeZodError } from '@smarthome/protocol/server';
import {
  HaCommandError,
  newContextId,
  toHaAreaEntry,
  toHaDeviceEntry,
  toHaEntityEntry,
  type HaBackend,
  type HaHistoryQuery,
  type HaLogbookQuery,
  type HaTemplateRequest,
  type Unsubscribe,
} from '@smarthome/protocol/server/ha/index';
import type { Recorder } from '../recorder/recorder.ts';
import { history, logbook, subscribeLogbook } from './history.ts';
import { subscribeTemplate } from './template-subscription.ts';
import { parseActions, parseTriggers, type HaScripts } from './scripts.ts';
import type { TemplateRenderer } from './template-subscription.ts';
import type { LocalTokenStore } from '../auth/tokens.ts';
import type { EdgeEventMap, EventBus } from '../bus.ts';
import type { Registry, RegistryEntity } from '../registry/registry.ts';
import { ServiceCallError, UnknownEntityError, type ServiceRegistry } from '../services/services.ts';
import type { StateMachine } from '../states/state-machine.ts';
import { toHaState } from './states.ts';
import { edgeHaConfig } from './config.ts';

/** Who is on the other end: a local API token (checked again before every command). */
export interface EdgeHaPrincipal {
  tokenId: number;
  token: string;
}

export interface EdgeHaBackendDeps {
  tokens: LocalTokenStore;
  registry: Registry;
  states: StateMachine;
  services: ServiceRegistry;
  bus: EventBus;
  /** render_template, POST /api/template */
  templates: TemplateRenderer;
  /** subscribe_trigger, execute_script */
  scripts: HaScripts;
  /** history and logbook; null when the recorder is off (those commands then answer unknown_command) */
  recorder: Recorder | null;
  /** what get_config reports as the location name */
  locationName?: string;
}

/** Entities created through POST /api/states belong to this platform (DELETE forgets them entirely). */
export const API_PLATFORM = 'api';
const ENTITY_ID = /^(?!.+__)(?!_)[\da-z_]+(?<!_)\.(?!_)[\da-z_]+(?<!_)$/;

const toList = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The edge's Home Assistant API: its states, services, registries and events, for one local token. */
export class EdgeHaBackend implements HaBackend<EdgeHaPrincipal> {
  private readonly deps: EdgeHaBackendDeps;
  private readonly since = new Date().toISOString();

  constructor(deps: EdgeHaBackendDeps) {
    this.deps = deps;
    if (!deps.recorder) {
      // HA without its recorder has no history or logbook commands
      this.history = undefined;
      this.logbook = undefined;
      this.subscribeLogbook = undefined;
    }
  }

  async authenticate(auth: { access_token: string }): Promise<EdgeHaPrincipal | null> {
    const tokenId = this.deps.tokens.verify(auth.access_token);
    return tokenId === null ? null : { tokenId, token: auth.access_token };
  }

  stillValid(principal: EdgeHaPrincipal): boolean {
    return this.deps.tokens.verify(principal.token) === principal.tokenId;
  }

  async getStates() {
    return this.deps.states.all().map((s) => toHaState(s, this.since));
  }

  async getConfig(): Promise<HaConfig> {
    const { registry } = this.deps;
    return edgeHaConfig(
      [...registry.listEntities().map((e) => e.domain), ...registry.listConfigEntries().map((c) => c.domain)],
      this.deps.locationName,
    );
  }

  async getServices(): Promise<HaServices> {
    const out: HaServices = {};
    for (const [domain, names] of Object.entries(this.deps.services.list())) {
      out[domain] = Object.fromEntries(
        names.map((name) => [
          name,
          {
            name: name.replace(/_/g, ' '),
            description: '',
            fields: {},
            target: { entity: [{ domain: [domain] }] },
          },
        ]),
      );
    }
    return out;
  }

  async callService(
    _principal: EdgeHaPrincipal,
    call: Omit<HaCallService, 'id' | 'type'>,
  ): Promise<HaCallServiceResult> {
    const { domain, service, target = {}, return_response: returnResponse } = call;
    const { entity_id: dataTarget, ...data } = call.service_data ?? {};
    if (!this.deps.services.list()[domain]?.includes(service))
      throw new HaCommandError('not_found', `Service ${domain}.${service} not found.`);
    // edge services return no response data (HA refuses return_response for those)
    if (returnResponse)
      throw new HaCommandError(
        'service_validation_error',
        `An action which does not return responses can't be called with return_response=True`,
      );
    const entityIds = new Set([...toList(target.entity_id), ...toList(dataTarget as string | string[] | undefined)]);
    for (const deviceId of toList(target.device_id)) {
      for (const e of this.deps.registry.entitiesOfDevice(Number(deviceId)))
        if (e.domain === domain) entityIds.add(e.entity_id);
    }
    if (toList(target.area_id).length) throw new HaCommandError('not_found', 'Areas are not supported on this edge.');
    try {
      await this.deps.services.call({ domain, service, entity_ids: [...entityIds], data });
    } catch (err) {
      if (err instanceof UnknownEntityError || err instanceof ServiceCallError)
        throw new HaCommandError('home_assistant_error', err.message);
      throw err;
    }
    return { context: { id: newContextId(), parent_id: null, user_id: null } };
  }

  subscribeEvents(
    _principal: EdgeHaPrincipal,
    eventType: string | undefined,
    listener: (event: HaEvent) => void,
  ): Unsubscribe {
    const offs: (() => void)[] = [];
    const want = (type: string) => eventType === undefined || eventType === type;
    const emit = (event_type: string, data: Record<string, unknown>, contextId = newContextId()) =>
      listener({
        event_type,
        data,
        origin: 'LOCAL',
        time_fired: new Date().toISOString(),
        context: { id: contextId, parent_id: null, user_id: null },
      });
    const on = <K extends keyof EdgeEventMap>(type: K, fn: (e: EdgeEventMap[K]) => void) =>
      offs.push(this.deps.bus.on(type, fn));
    if (want('state_changed')) {
      on('state_changed', (e) => {
        const oldState = e.old_state && toHaState(e.old_state, this.since);
        const newState = e.new_state && toHaState(e.new_state, this.since);
        emit(
          'state_changed',
          { entity_id: e.entity_id, old_state: oldState, new_state: newState },
          newState?.context.id,
        );
      });
    }
    if (want('call_service'))
      on('call_service', (e) =>
        emit('call_service', {
          domain: e.domain,
          service: e.service,
          service_data: { ...e.data, entity_id: e.entity_ids },
        }),
      );
    if (want('entity_registry_updated')) {
      on('entity_upsert', (e) => emit('entity_registry_updated', { action: 'update', entity_id: e.entity.entity_id }));
      on('entity_remove', (e) => emit('entity_registry_updated', { action: 'remove', entity_id: e.entity_id }));
    }
    if (want('device_registry_updated')) {
      on('device_upsert', (e) => emit('device_registry_updated', { action: 'update', device_id: String(e.device.id) }));
      on('device_remove', (e) => emit('device_registry_updated', { action: 'remove', device_id: String(e.id) }));
    }
    // named events of the edge's bus: fired through this API or the cloud's, by automations
    // (automation_triggered, `event` actions) and by MQTT device triggers (mqtt_device_trigger)
    on('event', ({ event }) => {
      if (want(event.event_type)) listener({ ...event, origin: event.origin === 'REMOTE' ? 'REMOTE' : 'LOCAL' });
    });
    return () => {
      for (const off of offs) off();
    };
  }

  async entityRegistry(): Promise<HaEntityRegistryEntry[]> {
    return this.deps.registry.entitiesWithConfig().map((e) => toHaEntityEntry(e));
  }

  /** HA's config/entity_registry/update: enabling/disabling, and the user's name, icon, area and hidden_by. */
  async updateEntityRegistry(
    _principal: EdgeHaPrincipal,
    entityId: string,
    changes: HaEntityRegistryChanges,
  ): Promise<HaEntityRegistryEntry> {
    const { registry } = this.deps;
    if (!registry.getEntity(entityId)) throw new HaCommandError('not_found', 'Entity not found');
    if (changes.area_id && !registry.areas.get(changes.area_id))
      throw new HaCommandError('not_found', `Area not found: ${changes.area_id}`);
    if (changes.new_entity_id !== undefined && changes.new_entity_id !== entityId) {
      const refused = registry.renameEntity(entityId, changes.new_entity_id);
      if (refused) throw new HaCommandError('invalid_format', refused);
      // as HA: history follows (recorder metadata), the state moves; automations are not rewritten
      this.deps.recorder?.renameEntity(entityId, changes.new_entity_id);
      this.deps.states.rename(entityId, changes.new_entity_id);
      entityId = changes.new_entity_id;
    }
    const before = this.deps.states.get(entityId);
    registry.setEntitySettings(entityId, {
      name_by_user: changes.name,
      icon: changes.icon,
      area_id: changes.area_id,
      hidden_by: changes.hidden_by,
    });
    // a new user name or icon reaches the state at once (HA writes the state on a registry update)
    this.deps.states.republish(entityId, before);
    if (changes.disabled_by !== undefined) registry.setDisabledBy(entityId, changes.disabled_by);
    return toHaEntityEntry(registry.getEntity(entityId) as RegistryEntity);
  }

  async deviceRegistry(): Promise<HaDeviceRegistryEntry[]> {
    const { registry } = this.deps;
    return registry.listDevices().map((d) => {
      const links = registry.deviceLinks(d.id);
      return toHaDeviceEntry(
        { ...d, ...links },
        { identifierDomain: registry.getConfigEntry(d.config_entry_id ?? -1)?.domain },
      );
    });
  }

  /** areas come from MQTT devices' suggested_area (no area editing yet) */
  async areaRegistry(): Promise<HaAreaRegistryEntry[]> {
    return this.deps.registry.areas.list().map((a) => toHaAreaEntry(a));
  }

  async fireEvent(_principal: EdgeHaPrincipal, eventType: string, data: Record<string, unknown>): Promise<void> {
    // on the edge's bus, as HA's fire_event: automations (event triggers), every subscriber and the cloud see it
    this.deps.bus.emit('event', {
      event: {
        event_type: eventType,
        data,
        origin: 'REMOTE',
        time_fired: new Date().toISOString(),
        context: { id: newContextId(), parent_id: null, user_id: null },
      } satisfies HaEvent,
      chain: 0,
    });
  }

  async subscribeTemplate(
    _principal: EdgeHaPrincipal,
    request: HaTemplateRequest,
    listener: (update: HaTemplateUpdate) => void,
  ): Promise<Unsubscribe> {
    return subscribeTemplate({ templates: this.deps.templates, bus: this.deps.bus }, request, listener);
  }

  async renderTemplate(
    _principal: EdgeHaPrincipal,
    template: string,
    variables: Record<string, unknown> = {},
  ): Promise<string> {
    try {
      return this.deps.templates.renderWithInfo(template, variables).result;
    } catch (err) {
      // whatever a template does wrong is the template's error (HA: TemplateError), never a 500
      throw new HaCommandError('template_error', err instanceof Error ? err.message : String(err));
    }
  }

  history?(_principal: EdgeHaPrincipal, query: HaHistoryQuery) {
    return Promise.resolve(history(this.deps.recorder as Recorder, query));
  }

  logbook?(_principal: EdgeHaPrincipal, query: HaLogbookQuery): Promise<HaLogbookEntry[]> {
    return Promise.resolve(logbook(this.deps.recorder as Recorder, query));
  }

  subscribeLogbook?(
    _principal: EdgeHaPrincipal,
    query: Omit<HaLogbookQuery, 'format'>,
    listener: Parameters<typeof subscribeLogbook>[2],
  ): Promise<Unsubscribe> {
    return Promise.resolve(
      subscribeLogbook({ recorder: this.deps.recorder as Recorder, bus: this.deps.bus }, query, listener),
    );
  }

  async subscribeTrigger(
    _principal: EdgeHaPrincipal,
    trigger: unknown,
    variables: Record<string, unknown>,
    listener: (event: HaTriggerEvent) => void,
  ): Promise<Unsubscribe> {
    return this.deps.scripts.subscribeTrigger(trigger, variables, listener);
  }

  executeScript(_principal: EdgeHaPrincipal, sequence: unknown, variables: Record<string, unknown>) {
    return this.deps.scripts.executeScript(sequence, variables);
  }

  async validateConfig(
    _principal: EdgeHaPrincipal,
    kind: 'trigger' | 'condition' | 'action',
    config: unknown,
  ): Promise<string | null> {
    try {
      if (kind === 'trigger') parseTriggers(config);
      else if (kind === 'action') parseActions(config);
      else {
        // HA accepts one item or a list of them
        for (const item of Array.isArray(config) ? config : [config]) {
          const parsed = Condition.safeParse(item);
          if (!parsed.success) return describeZodError(parsed.error);
        }
      }
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  async eventListeners(): Promise<{ event: string; listener_count: number }[]> {
    const { bus } = this.deps;
    const counts = new Map<string, number>([
      ['state_changed', bus.listenerCount('state_changed')],
      ['call_service', bus.listenerCount('call_service')],
      ['entity_registry_updated', bus.listenerCount('entity_upsert')],
      ['device_registry_updated', bus.listenerCount('device_upsert')],
    ]);
    // named events: every listener of the bus's event channel (API subscribers, automations, the tunnel)
    const named = bus.listenerCount('event');
    if (named > 0) counts.set('*', named);
    return [...counts].filter(([, n]) => n > 0).map(([event, listener_count]) => ({ event, listener_count }));
  }

  /** POST /api/states: an existing entity's state is replaced; a new entity id is created on the 'api' platform. */
  async setState(
    _principal: EdgeHaPrincipal,
    entityId: string,
    state: string,
    attributes: Record<string, unknown>,
    forceUpdate: boolean,
  ): Promise<{ state: HaState; created: boolean }> {
    if (!ENTITY_ID.test(entityId)) throw new HaCommandError('invalid_format', 'Invalid entity ID specified.');
    const { registry, states } = this.deps;
    // HA answers 201 when there was no state before, whether or not the entity existed
    const created = !states.raw(entityId);
    if (!registry.getEntity(entityId)) {
      const [domain, objectId] = entityId.split('.');
      const name = typeof attributes.friendly_name === 'string' ? attributes.friendly_name : objectId;
      const entity = registry.upsertEntity({
        platform: API_PLATFORM,
        unique_id: entityId,
        domain,
        name,
        suggested_object_id: objectId,
      });
      if (entity.entity_id !== entityId) throw new HaCommandError('invalid_format', 'Invalid entity ID specified.');
    }
    const item = states.set(entityId, state, attributes, { force: forceUpdate });
    if (!item) throw new HaCommandError('not_found', 'Entity not found.');
    return { state: toHaState(item, this.since), created };
  }

  /** DELETE /api/states: forgets the state (and an 'api' entity altogether); false when there was none. */
  async removeState(_principal: EdgeHaPrincipal, entityId: string): Promise<boolean> {
    const { registry, states } = this.deps;
    const entity = registry.getEntity(entityId);
    if (!entity || !states.raw(entityId)) return false;
    states.remove(entityId, { name: entity.name, domain: entity.domain, platform: entity.platform });
    if (entity.platform === API_PLATFORM) registry.removeEntity(entityId);
    return true;
  }
}
