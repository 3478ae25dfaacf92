import type { HaAreaRegistryEntry, HaDeviceRegistryEntry, HaEntityRegistryEntry, HaCallService, HaCallServiceResult, HaConfig, HaErrorCode, HaEvent, HaServices, HaState } from '../../ha/index.ts';

/** Stops a subscription; may be async (a cloud backend unsubscribes across edges). */
export type Unsubscribe = () => void;

/**
 * What the Home Assistant WebSocket session and REST routes need from a home: the edge
 * implements it on its own components, the cloud across the caller's edges. `P` is the
 * authenticated principal (a local token on the edge, a user + org on the cloud); every
 * method receives it, so authorization happens where the data is loaded.
 */
export interface HaBackend<P> {
  /** the principal for an `auth` message (access_token + optional organization_id), or null (auth_invalid) */
  authenticate(auth: { access_token: string; organization_id?: string }): Promise<P | null>;
  /** checked before each command: false ends the session (credential revoked/expired) */
  stillValid?(principal: P): Promise<boolean> | boolean;
  getStates(principal: P): Promise<HaState[]>;
  getConfig(principal: P): Promise<HaConfig>;
  getServices(principal: P): Promise<HaServices>;
  callService(principal: P, call: Omit<HaCallService, 'id' | 'type'>): Promise<HaCallServiceResult>;
  /** every event of a type (undefined = all types) the principal may see; state_changed carries HaState objects */
  subscribeEvents(principal: P, eventType: string | undefined, listener: (event: HaEvent) => void): Unsubscribe | Promise<Unsubscribe>;
  fireEvent(principal: P, eventType: string, data: Record<string, unknown>): Promise<void>;
  entityRegistry(principal: P): Promise<HaEntityRegistryEntry[]>;
  deviceRegistry(principal: P): Promise<HaDeviceRegistryEntry[]>;
  areaRegistry(principal: P): Promise<HaAreaRegistryEntry[]>;
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
