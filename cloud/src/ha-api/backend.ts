import type { EntityState } from '@smarthome/protocol';
import {
  type HaAreaRegistryEntry,
  type HaCallService,
  type HaContext,
  type HaTemplateUpdate,
  type HaTriggerEvent,
  type HaCallServiceResult,
  type HaConfig,
  type HaCurrentUser,
  type HaDeviceRegistryEntry,
  type HaEntityRegistryChanges,
  HaEntityRegistryEntry,
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
import type { EdgeEvent, StateChanged, TriggerFired } from '../tunnel/hub.ts';
import type { Logger } from '../log.ts';
import { assertShallow, checkEdgeAnswer, toHaError } from './errors.ts';
import { HaRelay, streamLogbook, type Scope } from './relay.ts';
import { cloudHaConfig } from './config.ts';
import { HaEventListeners } from './events.ts';
import {
  areaRegistry,
  cloudEntityEntry,
  deviceRegistry,
  edgeAreaId,
  editableEntityEdge,
  entityRegistry,
} from './registry.ts';
import { controllableEdge, scopeOf, statesInScope } from './scope.ts';
import { servicesFor } from './services.ts';
import { CloudTemplates } from './templates.ts';
import { CloudTriggerSubscriptions } from './trigger-subscriptions.ts';

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
  log: Logger;
  /** the background reload of a listener's scope that no notice reported (HaEventListeners' ttlMs) */
  visibilityTtlMs?: number;
}

const toList = (v: unknown): string[] =>
  v === undefined || v === null ? [] : Array.isArray(v) ? v.map(String) : [String(v)];

/**
 * Home Assistant's API for a cloud caller, across the edges in its scope: states from the
 * mirror, live events from the tunnel hub (and the other replicas, through fanOut*), service
 * calls relayed through the tunnel. Authorization is the one of /v1 (EntityAccess): whole
 * edges for their owner and organization, shared entities with the share's flags. The same
 * entity_id on several edges is shown once, from the lowest edge id (as /v1 resolves it).
 */
export class CloudHaBackend implements HaBackend<CloudHaPrincipal> {
  private readonly s: CloudHaBackendDeps;
  private readonly since = new Date().toISOString();
  /** subscribe_events and the state_changed / edge event fan-out (events.ts) */
  private readonly events: HaEventListeners<CloudHaPrincipal>;
  private readonly relay: HaRelay<CloudHaPrincipal>;
  private readonly templates: CloudTemplates<CloudHaPrincipal>;
  /** subscribe_trigger, armed on the edges (trigger-subscriptions.ts) */
  readonly triggers: CloudTriggerSubscriptions<CloudHaPrincipal>;

  constructor(services: CloudHaBackendDeps) {
    this.s = services;
    this.events = new HaEventListeners({
      scope: (p) => this.scope(p),
      since: this.since,
      log: services.log,
      ttlMs: services.visibilityTtlMs,
    });
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
    this.triggers = new CloudTriggerSubscriptions({
      call: (p, edgeId, body) => this.relay.call(p, edgeId, body),
      scope: (p) => this.scope(p),
      visibleStates: (p, scope) => this.entityStates(p, scope),
      log: services.log,
    });
  }

  /** Starts the background reload of the listeners' scopes (events.ts); the socket server starts and stops it. */
  start(): void {
    this.events.start();
  }

  stop(): void {
    this.events.stop();
  }

  /** Grants changed (the session registry's notice): the caller's listeners go by its reloaded scope from now on. */
  accessChanged(p: CloudHaPrincipal): void {
    this.events.forget(p);
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

  private scope(p: CloudHaPrincipal): Promise<Scope> {
    return scopeOf(this.s.access, p.userId, p.orgId);
  }

  /** Mirror states in scope (one per entity_id), each with its edge. */
  private async entityStates(p: CloudHaPrincipal, scope?: Scope): Promise<EntityState[]> {
    return statesInScope(this.s.mirror, scope ?? (await this.scope(p)));
  }

  async getStates(p: CloudHaPrincipal): Promise<HaState[]> {
    return (await this.entityStates(p)).map((s) => toHaState(s, this.since));
  }

  async getConfig(p: CloudHaPrincipal): Promise<HaConfig> {
    return cloudHaConfig((await this.entityStates(p)).map((s) => s.domain));
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
  private controllable(_p: CloudHaPrincipal, scope: Scope, entityId: string): Promise<number> {
    return controllableEdge(this.s.mirror, scope, entityId);
  }

  subscribeEvents(
    principal: CloudHaPrincipal,
    eventType: string | undefined,
    fn: (event: HaEvent) => void,
  ): Unsubscribe {
    return this.events.subscribe(principal, eventType, fn);
  }
  /** A state change of an edge (this replica's tunnels, and the others' through Redis): to whoever may view it. */
  fanOut(e: StateChanged): Promise<void> {
    return this.events.fanOut(e);
  }
  /** An edge's other bus events: to subscribers of the type (or of all) who see the whole edge. */
  fanOutEvent(e: EdgeEvent): Promise<void> {
    return this.events.fanOutEvent(e);
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
    return entityRegistry(this.s.mirror, await this.scope(p));
  }

  async deviceRegistry(p: CloudHaPrincipal): Promise<HaDeviceRegistryEntry[]> {
    return deviceRegistry(this.s.mirror, await this.scope(p));
  }

  async areaRegistry(p: CloudHaPrincipal): Promise<HaAreaRegistryEntry[]> {
    return areaRegistry(this.s.mirror, await this.scope(p));
  }

  /** Relayed to the entity's edge; the mirror follows with the edge's delta. */
  async updateEntityRegistry(
    p: CloudHaPrincipal,
    entityId: string,
    changes: HaEntityRegistryChanges,
  ): Promise<HaEntityRegistryEntry> {
    const edgeId = await editableEntityEdge(this.s.mirror, await this.scope(p), entityId);
    const area = changes.area_id === undefined ? {} : { area_id: edgeAreaId(edgeId, changes.area_id) };
    const body = { op: 'update_entity_registry' as const, entity_id: entityId, changes: { ...changes, ...area } };
    const entry = HaEntityRegistryEntry.safeParse(await this.relay.call(p, edgeId, body));
    if (!entry.success) throw new HaCommandError('home_assistant_error', `Edge ${edgeId} gave an invalid answer.`);
    return cloudEntityEntry(edgeId, entry.data);
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
  subscribeTrigger(
    p: CloudHaPrincipal,
    trigger: unknown,
    variables: Record<string, unknown>,
    listener: (e: HaTriggerEvent) => void,
  ) {
    return this.triggers.subscribe(p, trigger, variables, listener);
  }
  /** fires and hellos from other replicas' tunnels (ScaleOut.fanOutTo; this replica's come through socket.ts) */
  triggerFired(e: TriggerFired) {
    return this.triggers.fired(e);
  }
  edgeOnline(edgeId: number) {
    return this.triggers.edgeOnline(edgeId);
  }

  /** GET /api/events: the caller's own subscriptions on this replica, per event type ("*" = all types) */
  async eventListeners(p: CloudHaPrincipal): Promise<{ event: string; listener_count: number }[]> {
    return this.events.counts(p.userId);
  }
}
