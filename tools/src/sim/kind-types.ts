/** What a simulated device kind is (kinds.ts and kinds-zigbee.ts define them, simulator.ts runs them). */

export type Rng = () => number;

export interface SimEntityDef {
  component: string;
  objectId: string;
  config: Record<string, unknown>;
}

export interface Publish {
  topic: string;
  payload: string;
  retain?: boolean;
}

export interface SimKind {
  kind: string;
  model: string;
  entities(base: string): SimEntityDef[];
  initial(rng: Rng): Record<string, unknown>;
  /** the full current state as messages */
  states(base: string, s: Record<string, unknown>): Publish[];
  /** one spontaneous change (sensor drift, motion …); returns what changed */
  tick(base: string, s: Record<string, unknown>, rng: Rng): Publish[];
  /** reacts to a command on one of its command topics */
  command(base: string, s: Record<string, unknown>, topic: string, payload: string): Publish[];
}
