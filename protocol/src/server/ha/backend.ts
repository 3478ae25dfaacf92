import type {
  HaHistoryResult,
  HaLogbookEntry,
  HaTemplateUpdate,
  HaTriggerEvent,
  HaContext,
  HaAreaRegistryEntry,
  HaDeviceRegistryEntry,
  HaEntityRegistryEntry,
  HaEntityRegistryChanges,
  HaCallService,
  HaCallServiceResult,
  HaConfig,
  HaErrorCode,
  HaEvent,
  HaServices,
  HaState,
} from '../../ha/index.ts';
import type { z } from 'zod';

/** Stops a subscription; may be async (a cloud backend unsubscribes across edges). */
export type Unsubscribe = () => void;

/**
 * What the Home Assistant WebSocket session and REST routes need from a home: the edge
 * implements it on its own components, the cloud across the caller's edges. `P` is the
 * authenticated principal (a local token on the edge, a user + org on the cloud); every
 * method receives it, so authorization happens where the data is loaded.
 */
export interface HaBackend<P> {
  /** the principal for an `auth` message (access_token + optional organization_id), or null (auth_invalid); HaAuthRefused says why */
  authenticate(auth: { access_token: string; organization_id?: string }): Promise<P | null>;
  /** checked before each command: false ends the session (credential revoked/expired); HaAuthRefused ends it saying why */
  stillValid?(principal: P): Promise<boolean> | boolean;
  getStates(principal: P): Promise<HaState[]>;
  getConfig(principal: P): Promise<HaConfig>;
  getServices(principal: P): Promise<HaServices>;
  callService(principal: P, call: Omit<HaCallService, 'id' | 'type'>): Promise<HaCallServiceResult>;
  /** every event of a type (undefined = all types) the principal may see; state_changed carries HaState objects */
  subscribeEvents(
    principal: P,
    eventType: string | undefined,
    listener: (event: HaEvent) => void,
  ): Unsubscribe | Promise<Unsubscribe>;
  fireEvent(principal: P, eventType: string, data: Record<string, unknown>): Promise<void>;
  entityRegistry(principal: P): Promise<HaEntityRegistryEntry[]>;
  deviceRegistry(principal: P): Promise<HaDeviceRegistryEntry[]>;
  areaRegistry(principal: P): Promise<HaAreaRegistryEntry[]>;
  /**
   * config/entity_registry/update (name, icon, area_id, hidden_by, disabled_by; null clears): the
   * updated entry; throws HaCommandError('not_found') for an unknown entity or area
   */
  updateEntityRegistry?(
    principal: P,
    entityId: string,
    changes: HaEntityRegistryChanges,
  ): Promise<HaEntityRegistryEntry>;

  // ---- optional: a backend without one answers HA's unknown_command (WebSocket) or 404 (REST)
  /**
   * render_template: renders now and again whenever what the template reads changes; the
   * first render's failure throws HaCommandError('template_error') when `strict` (else it is
   * an `{error, level}` update with report_errors, nothing without).
   */
  subscribeTemplate?(
    principal: P,
    request: HaTemplateRequest,
    listener: (update: HaTemplateUpdate) => void,
  ): Promise<Unsubscribe>;
  /** POST /api/template: one render as text; throws HaCommandError('template_error') */
  renderTemplate?(principal: P, template: string, variables?: Record<string, unknown>): Promise<string>;
  /** Set (create 201 / update 200) or remove a state, as POST/DELETE /api/states/{entity_id} */
  setState?(
    principal: P,
    entityId: string,
    state: string,
    attributes: Record<string, unknown>,
    forceUpdate: boolean,
  ): Promise<{ state: HaState; created: boolean }>;
  removeState?(principal: P, entityId: string): Promise<boolean>;
  /** GET /api/events: listener counts per event type */
  eventListeners?(principal: P): Promise<{ event: string; listener_count: number }[]>;
  /** history of the period: `websocket` = {entity_id: [{s,a,lu,lc}]}, `rest` = [[HA state, …], …]; may answer pre-serialised JSON */
  history?(principal: P, query: HaHistoryQuery): Promise<z.infer<typeof HaHistoryResult> | unknown[][] | HaRawJson>;
  /** logbook entries of the period (`when` epoch s on the socket, ISO + names on REST) */
  logbook?(principal: P, query: HaLogbookQuery): Promise<HaLogbookEntry[]>;
  /** logbook/event_stream: the period's entries, then (when it reaches now) live ones */
  subscribeLogbook?(
    principal: P,
    query: Omit<HaLogbookQuery, 'format'>,
    listener: (update: { events: HaLogbookEntry[]; start_time?: number; end_time?: number; partial?: boolean }) => void,
  ): Promise<Unsubscribe>;
  /** subscribe_trigger: throws HaCommandError('invalid_format') for a trigger it cannot arm */
  subscribeTrigger?(
    principal: P,
    trigger: unknown,
    variables: Record<string, unknown>,
    listener: (event: HaTriggerEvent) => void,
  ): Promise<Unsubscribe>;
  /** execute_script: runs the sequence; `response` is the script's response (a `stop` with response_variable) */
  executeScript?(
    principal: P,
    sequence: unknown,
    variables: Record<string, unknown>,
  ): Promise<{ context: HaContext; response: unknown }>;
  /** validate_config: null when valid, else HA's message */
  validateConfig?(principal: P, kind: 'trigger' | 'condition' | 'action', config: unknown): Promise<string | null>;
}

export interface HaTemplateRequest {
  template: string;
  variables?: Record<string, unknown>;
  /** seconds */
  timeout?: number;
  strict: boolean;
  report_errors: boolean;
}

export interface HaHistoryQuery {
  format: 'websocket' | 'rest';
  /** epoch seconds */
  start: number;
  end?: number;
  /** undefined: every entity (REST without filter_entity_id) */
  entity_ids?: string[];
  include_start_time_state: boolean;
  significant_changes_only: boolean;
  minimal_response: boolean;
  no_attributes: boolean;
}

export interface HaLogbookQuery {
  format: 'websocket' | 'rest';
  start: number;
  end?: number;
  entity_ids?: string[];
}

/** A result already serialised (large history answers skip building objects); sent as is. */
export class HaRawJson {
  readonly json: string;
  constructor(json: string) {
    this.json = json;
  }
}

/**
 * Authentication refused for a reason the client can act on (e.g. enrol multi-factor sign-in):
 * thrown by authenticate or stillValid, sent as the auth_invalid message instead of the generic one.
 */
export class HaAuthRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HaAuthRefused';
  }
}

/** A command failed in a way HA names: becomes `result` with success false and `error {code, message}`. */
export class HaCommandError extends Error {
  readonly code: HaErrorCode;
  constructor(code: HaErrorCode, message: string) {
    super(message);
    this.name = 'HaCommandError';
    this.code = code;
  }
}
