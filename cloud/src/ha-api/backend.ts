import type { EntityRecord, EntityState } from '@smarthome/protocol';
import {
  HA_VERSION,
  type HaAreaRegistryEntry,
  type HaCallService,
  type HaContext,
  type HaTemplateUpdate,
  type HaCallServiceResult,
  type HaConfig,
  type HaCurrentUser,
  type HaDeviceRegistryEntry,
  type HaEntityRegistryEntry,
  type HaEvent,
  type HaServices,
  type HaState,
} from '@smarthome/protocol/ha/index';
import { EventTypeParam } from '@smarthome/protocol/edge-local';
import {
  HaAuthRefused,
  HaCommandError,
  newContextId,
  toHaState,
  type HaBackend,
  type HaHistoryQuery,
  type HaLogbookQuery,
  type HaTemplateRequest,
  type Unsubscribe,
} from '@smarthome/protocol/server/ha/index';
import type { AuthService, Principal } from '../auth/service.ts';
import type { CloudDatabase } from '../db/database.ts';
import type { EntityAccess } from '../devices/access.ts';
import type { MirrorStore } from '../mirror/store.ts';
import { MFA_ENROLLMENT_MESSAGE, memberAccess } from '../orgs/mfa-policy.ts';
import type { EdgeEvent, StateChanged } from '../tunnel/hub.ts';
import { assertShallow, checkEdgeAnswer, toHaError } from './errors.ts';
import { HaRelay, streamLogbook, type Scope } from './relay.ts';
import { servicesFor } from './services.ts';
import { CloudTemplates } from './templates.ts';

/** A cloud caller of the Home Assistant API: a user, the credential it authenticated with, and its organization scope. */
export interface CloudHaPrincipal {
  userId: string;
  /** X-Organization-Id / the auth message's organization_id: only that organization's edges and shares */
  orgId: string | null;
  token: string;
  credential: Principal['credential'];
  expiresAt: number | null;
}

export interface CloudHaBackendDeps {
  auth: AuthService;
  access: EntityAccess;
  database: CloudDatabase;
  mirror: MirrorStore;
}

type Listener = { principal: CloudHaPrincipal; eventType: string | undefined; fn: (event: HaEvent) => void };

const toList = (v: unknown): string[] =>
  v === undefined || v === null ? [] : Array.isArray(v) ? v.map(String) : [String(v)];
const key = (edgeId: number, entityId: string) => `${edgeId}:${entityId}`;
/** registry ids are per edge on the cloud: "<edge>_<id>" keeps them unique across the caller's edges */
const globalId = (edgeId: number, id: number | null | undefined) =>
  id === null || id === undefined ? null : `${edgeId}_${id}`;

/**
 * Home Assistant's API for a cloud caller, across the edges in its scope: states from the
 * mirror, live events from the tunnel hub (and the other replicas, through fanOut*), service
 * calls relayed through the tunnel. Authorization is the one of /v1 (EntityAccess): whole
 * edges for their owner and organization, shared entities with the share's flags. The same
 * entity_id on several edges is shown once, from the lowest edge id (as /v1 resolves it).
 */
export class CloudHaBackend implements HaBackend<CloudHaPrincipal> {
  private readonly s: CloudHaBackendDeps;
  private readonly listeners = new Set<Listener>();
  private readonly since = new Date().toISOString();
  private readonly relay: HaRelay<CloudHaPrincipal>;
  private readonly templates: CloudTemplates<CloudHaPrincipal>;

  constructor(services: CloudHaBackendDeps) {
    this.s = services;
    this.relay = new HaRelay({
      relay: (...args) => services.access.relay(...args),
      scope: (p) => this.scope(p),
      visibleStates: (p, scope) => this.entityStates(p, scope),
      controllable: (p, scope, entityId) => this.controllable(p, scope, entityId),
    });
    this.templates = new CloudTemplates({
      visibleStates: (p) => this.entityStates(p),
      subscribeStates: (p, fn) => this.subscribeEvents(p, 'state_changed', fn),
    });
  }

  async authenticate(auth: { access_token: string; organization_id?: string }): Promise<CloudHaPrincipal | null> {
    const principal = await this.s.auth.authenticate(auth.access_token);
    if (!principal) return null;
    const orgId = auth.organization_id?.trim() || null;
    // like X-Organization-Id: only a member may take an organization's scope
    if (orgId) await this.checkOrg(orgId, principal.userId);
    return {
      userId: principal.userId,
      orgId,
      token: auth.access_token,
      credential: principal.credential,
      expiresAt: principal.expiresAt,
    };
  }

  /** The SessionRegistry ends sessions on revocation and expiry; this also covers a notice not yet arrived from another replica. */
  async stillValid(p: CloudHaPrincipal): Promise<boolean> {
    const now = await this.s.auth.authenticate(p.token);
    if (now?.userId !== p.userId) return false;
    if (p.orgId) await this.checkOrg(p.orgId, p.userId);
    return true;
  }

  /** Membership, and MFA when the organization requires it (per command, so the requirement applies to open sessions at once). */
  private async checkOrg(orgId: string, userId: string): Promise<void> {
    const access = await memberAccess(this.s.database.db, orgId, userId);
    if (!access) throw new HaAuthRefused('Invalid access token or password');
    if (access.mfaMissing) throw new HaAuthRefused(MFA_ENROLLMENT_MESSAGE);
  }

  private async scope(p: CloudHaPrincipal): Promise<Scope> {
    const [edges, grants] = await Promise.all([
      this.s.access.edgeGrants(p.userId, p.orgId),
      this.s.access.entityGrants(p.userId, p.orgId),
    ]);
    const whole = new Set(edges.map((e) => e.edgeId));
    return { edges, shared: grants.filter((g) => g.canView && !whole.has(g.edgeId)) };
  }

  /** Mirror states in scope (one per entity_id), each with its edge. */
  private async entityStates(p: CloudHaPrincipal, scope?: Scope): Promise<EntityState[]> {
    const { edges, shared } = scope ?? (await this.scope(p));
    const all = await this.s.mirror.states(edges.map((e) => e.edgeId));
    for (const g of shared) {
      const st = await this.s.mirror.state([g.edgeId], g.entityId);
      if (st) all.push(st);
    }
    all.sort((a, b) => (a.edge_id ?? 0) - (b.edge_id ?? 0));
    const seen = new Map<string, EntityState>();
    for (const st of all) if (!seen.has(st.entity_id)) seen.set(st.entity_id, st);
    return [...seen.values()].sort((a, b) => a.entity_id.localeCompare(b.entity_id));
  }

  async getStates(p: CloudHaPrincipal): Promise<HaState[]> {
    return (await this.entityStates(p)).map((s) => toHaState(s, this.since));
  }

  async getConfig(p: CloudHaPrincipal): Promise<HaConfig> {
    const components = new Set(['api', 'websocket_api', 'homeassistant']);
    for (const s of await this.entityStates(p)) components.add(s.domain);
    return {
      latitude: 0,
      longitude: 0,
      elevation: 0,
      radius: 100,
      unit_system: {
        length: 'km',
        accumulated_precipitation: 'mm',
        mass: 'g',
        pressure: 'Pa',
        temperature: '°C',
        volume: 'L',
        wind_speed: 'm/s',
      },
      location_name: 'Home',
      time_zone: 'UTC',
      components: [...components].sort(),
      config_dir: '/config',
      allowlist_external_dirs: [],
      allowlist_external_urls: [],
      version: HA_VERSION,
      config_source: 'storage',
      recovery_mode: false,
      safe_mode: false,
      state: 'RUNNING',
      external_url: null,
      internal_url: null,
      currency: 'EUR',
      country: null,
      language: 'en',
      debug: false,
    };
  }

  /** The services of the domains the caller's entities belong to (see services.ts). */
  async getServices(p: CloudHaPrincipal): Promise<HaServices> {
    return servicesFor((await this.entityStates(p)).map((s) => s.domain));
  }

  async callService(p: CloudHaPrincipal, call: Omit<HaCallService, 'id' | 'type'>): Promise<HaCallServiceResult> {
    const { domain, service, target = {}, return_response: returnResponse } = call;
    const { entity_id: dataTarget, device_id: dataDevice, area_id: dataArea, ...data } = call.service_data ?? {};
    // edge services return no response data (HA refuses return_response for those)
    if (returnResponse)
      throw new HaCommandError(
        'service_validation_error',
        `An action which does not return responses can't be called with return_response=True`,
      );
    assertShallow(data);
    if (toList(target.area_id).length || toList(dataArea).length)
      throw new HaCommandError('not_found', 'Areas are not supported.');
    const scope = await this.scope(p);
    const byEdge = new Map<number, Set<string>>();
    const add = (edgeId: number, entityId: string) =>
      byEdge.set(edgeId, (byEdge.get(edgeId) ?? new Set()).add(entityId));
    for (const entityId of new Set([...toList(target.entity_id), ...toList(dataTarget)])) {
      const edgeId = await this.controllable(p, scope, entityId);
      add(edgeId, entityId);
    }
    for (const deviceId of new Set([...toList(target.device_id), ...toList(dataDevice)])) {
      const m = /^(\d+)_(\d+)$/.exec(deviceId);
      const edge = m ? scope.edges.find((e) => e.edgeId === Number(m[1])) : undefined;
      const found = edge && (await this.s.mirror.device(edge.edgeId, Number(m![2])));
      if (!found) throw new HaCommandError('not_found', 'Device not found.');
      for (const e of found.entities) if (e.domain === domain) add(edge.edgeId, e.entity_id);
    }
    for (const [edgeId, ids] of byEdge) {
      const entityIds = [...ids];
      try {
        await this.s.access
          .relay(
            edgeId,
            'POST',
            `/v1/services/${encodeURIComponent(domain)}/${encodeURIComponent(service)}`,
            { ...data, entity_id: entityIds.length === 1 ? entityIds[0] : entityIds },
            { userId: p.userId, remoteAddr: null },
          )
          .then(checkEdgeAnswer);
      } catch (err) {
        throw toHaError(err, edgeId);
      }
    }
    return { context: { id: newContextId(), parent_id: null, user_id: p.userId } };
  }

  /** The edge holding an entity the caller may control: not_found when invisible, unauthorized when view-only. */
  private async controllable(p: CloudHaPrincipal, scope: Scope, entityId: string): Promise<number> {
    const own = await this.s.mirror.state(
      scope.edges.map((e) => e.edgeId),
      entityId,
    );
    if (own?.edge_id !== undefined && own.edge_id !== null) return own.edge_id;
    const grant = scope.shared.filter((g) => g.entityId === entityId).sort((a, b) => a.edgeId - b.edgeId)[0];
    if (grant) {
      if (!grant.canControl)
        throw new HaCommandError('unauthorized', 'Not allowed to control this entity (view-only).');
      return grant.edgeId;
    }
    throw new HaCommandError('not_found', 'Entity not found.');
  }

  subscribeEvents(
    principal: CloudHaPrincipal,
    eventType: string | undefined,
    fn: (event: HaEvent) => void,
  ): Unsubscribe {
    const listener: Listener = { principal, eventType, fn };
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** A state change of an edge (this replica's tunnels, and the others' through Redis): to whoever may view it. */
  async fanOut(e: StateChanged): Promise<void> {
    const wanted = [...this.listeners].filter((l) => l.eventType === undefined || l.eventType === 'state_changed');
    if (!wanted.length) return;
    const oldState = e.old_state && toHaState(e.old_state, this.since);
    const newState = e.new_state && toHaState(e.new_state, this.since);
    const event: HaEvent = {
      event_type: 'state_changed',
      data: { entity_id: e.entity_id, old_state: oldState, new_state: newState },
      origin: 'LOCAL',
      time_fired: new Date().toISOString(),
      context: newState?.context ?? { id: newContextId(), parent_id: null, user_id: null },
    };
    for (const l of wanted) {
      if (!this.listeners.has(l)) continue;
      const { edges, shared } = await this.scope(l.principal);
      const whole = edges.some((g) => g.edgeId === e.edgeId);
      if (whole || shared.some((g) => key(g.edgeId, g.entityId) === key(e.edgeId, e.entity_id))) l.fn(event);
    }
  }

  /** An edge's other bus events: to subscribers of the type (or of all) who see the whole edge, as the app socket does. */
  async fanOutEvent(e: EdgeEvent): Promise<void> {
    const wanted = [...this.listeners].filter((l) => l.eventType === undefined || l.eventType === e.event.event_type);
    for (const l of wanted) {
      if (!this.listeners.has(l)) continue;
      if (!(await this.scope(l.principal)).edges.some((g) => g.edgeId === e.edgeId)) continue;
      l.fn({
        ...e.event,
        data: e.event.data ?? {},
        origin: e.event.origin === 'REMOTE' ? 'REMOTE' : 'LOCAL',
      } as HaEvent);
    }
  }

  /**
   * Fires the event on every edge in scope the caller administers (HA lets only admins fire
   * events), through the tunnel; it comes back as that edge's event to every subscriber.
   */
  async fireEvent(p: CloudHaPrincipal, eventType: string, data: Record<string, unknown>): Promise<void> {
    const name = EventTypeParam.safeParse(eventType);
    if (!name.success)
      throw new HaCommandError('invalid_format', name.error.issues[0]?.message ?? 'invalid event_type');
    assertShallow(data);
    const edges = (await this.scope(p)).edges.filter((g) => g.role === 'owner' || g.role === 'admin');
    if (!edges.length) throw new HaCommandError('unauthorized', 'Firing events needs an edge you own or administer.');
    for (const { edgeId } of edges) {
      try {
        await this.s.access
          .relay(edgeId, 'POST', `/v1/events/${encodeURIComponent(eventType)}`, data, {
            userId: p.userId,
            remoteAddr: null,
          })
          .then(checkEdgeAnswer);
      } catch (err) {
        throw toHaError(err, edgeId);
      }
    }
  }

  async entityRegistry(p: CloudHaPrincipal): Promise<HaEntityRegistryEntry[]> {
    const scope = await this.scope(p);
    const edgeIds = [...new Set([...scope.edges.map((e) => e.edgeId), ...scope.shared.map((g) => g.edgeId)])];
    const whole = new Set(scope.edges.map((e) => e.edgeId));
    const shared = new Set(scope.shared.map((g) => key(g.edgeId, g.entityId)));
    // From the records, not the states: a disabled entity has no state but is registered. As with
    // states, an entity_id on several edges is the lowest edge's.
    const records = new Map<number, EntityRecord[]>();
    const owner = new Map<string, number>();
    for (const edgeId of edgeIds) {
      const list = (await this.s.mirror.entityRecords([edgeId])).filter(
        (e) => whole.has(edgeId) || shared.has(key(edgeId, e.entity_id)),
      );
      records.set(edgeId, list);
      for (const e of list) owner.set(e.entity_id, Math.min(owner.get(e.entity_id) ?? edgeId, edgeId));
    }
    const out: HaEntityRegistryEntry[] = [];
    for (const edgeId of edgeIds) {
      for (const e of records.get(edgeId)!) {
        if (owner.get(e.entity_id) !== edgeId) continue;
        out.push({
          id: globalId(edgeId, e.id)!,
          entity_id: e.entity_id,
          unique_id: e.unique_id,
          platform: e.platform,
          config_entry_id: globalId(edgeId, e.config_entry_id),
          device_id: globalId(edgeId, e.device_registry_id),
          area_id: null,
          name: null,
          original_name: e.name,
          icon: null,
          disabled_by: e.disabled_by ?? null,
          hidden_by: null,
          entity_category: null,
          has_entity_name: false,
          translation_key: null,
          labels: [],
          categories: {},
        });
      }
    }
    return out;
  }

  /** Devices of the whole edges in scope (a shared entity does not share its device). */
  async deviceRegistry(p: CloudHaPrincipal): Promise<HaDeviceRegistryEntry[]> {
    const { edges } = await this.scope(p);
    return (await this.s.mirror.devices(edges.map((e) => e.edgeId))).map((d) => {
      const edgeId = d.edge_id ?? 0;
      const entry = globalId(edgeId, d.config_entry_id);
      return {
        id: globalId(edgeId, d.id)!,
        name: d.name,
        name_by_user: null,
        manufacturer: d.manufacturer,
        model: d.model,
        model_id: null,
        sw_version: d.sw_version ?? null,
        hw_version: null,
        serial_number: null,
        identifiers: (d.identifiers ?? []).map((i) => ['mqtt', i] as [string, string]),
        connections: [],
        config_entries: entry ? [entry] : [],
        primary_config_entry: entry,
        area_id: null,
        via_device_id: globalId(edgeId, d.via_device_id ?? null),
        disabled_by: null,
        entry_type: null,
        configuration_url: null,
        labels: [],
      };
    });
  }

  /**
   * auth/current_user: the cloud user. is_admin: it may use every command; what it may see and
   * control is still checked per call (Node-RED's HA nodes refuse a user without it).
   */
  async currentUser(p: CloudHaPrincipal): Promise<HaCurrentUser> {
    const user = await this.s.auth.getUser(p.userId);
    return {
      id: p.userId,
      name: user.name ?? user.email,
      is_owner: false,
      is_admin: true,
      credentials: [],
      mfa_modules: [],
    };
  }

  // ---- what only an edge can answer, relayed (relay.ts); templates rendered here (templates.ts)
  subscribeTemplate(p: CloudHaPrincipal, request: HaTemplateRequest, listener: (u: HaTemplateUpdate) => void) {
    return this.templates.subscribe(p, request, listener);
  }
  renderTemplate(p: CloudHaPrincipal, template: string, variables?: Record<string, unknown>) {
    return this.templates.render(p, template, variables);
  }
  history(p: CloudHaPrincipal, query: HaHistoryQuery) {
    return this.relay.history(p, query);
  }
  logbook(p: CloudHaPrincipal, query: HaLogbookQuery) {
    return this.relay.logbook(p, query);
  }
  subscribeLogbook(
    p: CloudHaPrincipal,
    query: Omit<HaLogbookQuery, 'format'>,
    listener: Parameters<typeof streamLogbook>[4],
  ) {
    return streamLogbook(this.relay, (q, fn) => this.subscribeEvents(q, 'state_changed', fn), p, query, listener);
  }
  async executeScript(p: CloudHaPrincipal, sequence: unknown, variables: Record<string, unknown>) {
    return (await this.relay.executeScript(p, sequence, variables)) as { context: HaContext; response: unknown };
  }
  validateConfig(p: CloudHaPrincipal, kind: 'trigger' | 'condition' | 'action', config: unknown) {
    return this.relay.validateConfig(p, kind, config);
  }
  setState(p: CloudHaPrincipal, entityId: string, state: string, attributes: Record<string, unknown>, force: boolean) {
    return this.relay.setState(p, entityId, state, attributes, force);
  }
  removeState(p: CloudHaPrincipal, entityId: string) {
    return this.relay.removeState(p, entityId);
  }

  /** GET /api/events: the caller's own subscriptions on this replica, per event type ("*" = all types) */
  async eventListeners(p: CloudHaPrincipal): Promise<{ event: string; listener_count: number }[]> {
    const counts = new Map<string, number>();
    for (const l of this.listeners)
      if (l.principal.userId === p.userId) counts.set(l.eventType ?? '*', (counts.get(l.eventType ?? '*') ?? 0) + 1);
    return [...counts].map(([event, listener_count]) => ({ event, listener_count }));
  }

  /** edges have no areas yet */
  async areaRegistry(): Promise<HaAreaRegistryEntry[]> {
    return [];
  }
}
