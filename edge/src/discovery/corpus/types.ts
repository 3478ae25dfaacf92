/**
 * A discovery corpus entry: one config as a real project emits it, and what Home Assistant
 * makes of it (entity, device, state after sample payloads, the exact command per service call).
 */

/** Expected state: a value, null (unknown), or TIMESTAMP (an ISO time: event, scene, button). */
export const TIMESTAMP = '<timestamp>';

export interface CorpusStep {
  /** published by the device (an object is sent as JSON) */
  topic: string;
  payload: string | Record<string, unknown>;
  /** expected afterwards; omitted: not checked */
  state?: string | null;
  /** a subset of the expected attributes (a key set to undefined must be absent) */
  attributes?: Record<string, unknown>;
}

export interface CorpusCommand {
  service: string;
  data?: Record<string, unknown>;
  /** every MQTT publish the call makes, in order, as "topic payload" */
  publish: string[];
  state?: string | null;
  attributes?: Record<string, unknown>;
}

export interface CorpusEntry {
  /** short unique name (the test's name) */
  id: string;
  /** where the config comes from: project + file */
  source: string;
  /** the discovery topic it is published on */
  topic: string;
  config: Record<string, unknown>;
  /** the entity it creates (absent for device triggers) */
  entity_id?: string;
  friendly_name?: string;
  /** state right after discovery (before any sample) */
  initial?: { state?: string | null; attributes?: Record<string, unknown> };
  /** a subset of the device registry record */
  device?: Record<string, unknown>;
  /** enabled_by_default: false → registered but disabled (no state) */
  disabled?: boolean;
  steps?: CorpusStep[];
  commands?: CorpusCommand[];
  /** device triggers: payloads on the trigger topic and whether each fires */
  triggers?: { payload: string; fires: boolean }[];
  /** uses Jinja the edge's template engine does not have yet (issue #18's template part) */
  needsJinja?: boolean;
}
