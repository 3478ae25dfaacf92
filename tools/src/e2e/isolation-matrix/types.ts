import type { ActorName, World } from './world.ts';

/** The vocabulary of the isolation matrix (matrix.ts): who tries, what a probe says, what an entry is. */
export type Group = 'foreign' | 'admin' | 'member' | 'viewer' | 'controller';
export const GROUPS: Record<Group, ActorName[]> = {
  // B, and X since X left O
  foreign: ['B', 'B@O', 'B@OB', 'X', 'X@O'],
  admin: ['A', 'A@O'],
  member: ['M', 'M@O'],
  viewer: ['V', 'V@O'],
  controller: ['C', 'C@O'],
};
/** Everyone but the owner: for A's unshared personal resources and O's admin-only actions. */
export const EVERYONE: Group[] = ['foreign', 'member', 'viewer', 'controller'];
/** Everyone but M, O's admin included: for M's personal resources. */
export const NOT_M: Group[] = ['foreign', 'admin', 'viewer', 'controller'];
/** Everyone but X, O's admin included: for X's personal resources. */
export const NOT_X: Array<Group | ActorName> = ['B', 'B@O', 'B@OB', 'admin', 'member', 'viewer', 'controller'];

export interface Probe {
  /** the target, for messages */
  what: string;
  path: string;
  body?: unknown;
  /** who must be refused (no 2xx): groups expand to each of their actors */
  deny: Array<Group | ActorName>;
  /** who may: run for GET probes only (a read changes nothing), proving that the probe names a real, reachable target */
  allow?: ActorName[];
  /** a GET probe no actor may pass, with the reason (instead of `allow`) */
  noneMay?: string;
  /** refusal statuses accepted besides 403 and 404 */
  refusals?: number[];
  /** the owner's reading of the target: identical before and after the probe */
  snapshot: () => Promise<unknown>;
}

/** A list (or self-scoped read) that foreign eyes may call: each actor gets its own rows, never the markers it may not see. */
export interface ListCheck {
  path: string;
  /** an actor whose answer must contain the marker: proves the markers would show if leaked */
  sees?: [ActorName, string];
}

export type Entry =
  | { probes?: (x: Ctx) => Probe[]; lists?: (x: Ctx) => ListCheck[] }
  | { exempt: 'public' | 'self-scoped'; reason: string };

export interface Ctx {
  w: World;
  /** GET as an actor: must answer 200; the body */
  read: (actor: ActorName, path: string) => Promise<unknown>;
}
