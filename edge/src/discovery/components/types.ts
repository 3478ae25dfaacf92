import type { TemplateEngine } from '../../templates/template.ts';

/** A discovery config with abbreviations expanded. */
export type Cfg = Record<string, unknown>;

export interface Ctx {
  cfg: Cfg;
  tpl: TemplateEngine;
  /** last real state (not masked by availability) */
  state: string | null;
  /** current component attributes (brightness, current_position, …) */
  attrs: Record<string, unknown>;
}

/** A change to apply: `state` when present; `attrs` merged (undefined values delete). */
export interface Update {
  state?: string | null;
  attrs?: Record<string, unknown>;
  /** publish even when nothing changed (an event, a press) */
  force?: boolean;
}

export interface Command {
  topic: string;
  payload: string;
}

export interface ServiceResult {
  commands: Command[];
  /** applied at once when the entity is optimistic (no state topic, or optimistic: true) */
  optimistic?: Update;
}

export type StateHandler = (payload: string, ctx: Ctx) => Update | null;
export type ServiceHandler = (ctx: Ctx, data: Record<string, unknown>) => ServiceResult;

export interface Component {
  domain: string;
  /** an error message when the config cannot work, else null */
  validate(cfg: Cfg): string | null;
  /** attributes that follow from the config (unit, device_class, options, min/max …) */
  staticAttributes(cfg: Cfg): Record<string, unknown>;
  /** attributes a new entity starts with, before any message (HA shows them as null) */
  initialAttributes?(cfg: Cfg): Record<string, unknown>;
  /** the attributes as shown for a state (a light off shows its colour and brightness as null, as HA does) */
  presentAttributes?(cfg: Cfg, state: string | null, attrs: Record<string, unknown>): Record<string, unknown>;
  /** config key of a topic → how a payload on it changes the entity */
  stateHandlers: Record<string, StateHandler>;
  /**
   * config key of a topic → what its template failing on a message makes unavailable (attributes
   * null); null: nothing (the message is only logged). Absent: `state_topic` makes the state
   * `unavailable`, other topics change nothing.
   */
  failedValue?: Record<string, ((ctx: Ctx) => Update) | null>;
  services: Record<string, ServiceHandler>;
}
