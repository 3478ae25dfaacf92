import { CLOUD_ENTRIES } from './cloud-entries.ts';
import { EDGE_ENTRIES } from './edge-entries.ts';
import { HA_ENTRIES } from './ha-entries.ts';
import type { Entry } from './types.ts';

/**
 * The isolation matrix: one entry per `METHOD path` of /openapi.json. An entry says how to fill
 * the route's parameters from the world's fixtures, who must NOT get a 2xx, and how the owner
 * reads the target back (before and after: it must not change). A route with nothing foreign
 * to name is exempt, with the reason. A route missing here fails the test, so a new route
 * cannot ship without its entry.
 */
export const MATRIX: Record<string, Entry> = { ...CLOUD_ENTRIES, ...EDGE_ENTRIES, ...HA_ENTRIES };

export { GROUPS, type Ctx, type Group, type ListCheck, type Probe } from './types.ts';
