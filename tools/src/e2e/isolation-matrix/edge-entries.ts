import { EDGE_AUTOMATION_ENTRIES } from './edge-automation-entries.ts';
import { EDGE_CONFIG_ENTRIES } from './edge-config-entries.ts';
import { EDGE_DEVICE_ENTRIES } from './edge-device-entries.ts';
import { EDGE_MEDIA_ENTRIES } from './edge-media-entries.ts';
import type { Entry } from './types.ts';

/**
 * Matrix entries of what lives on edges, one file per capability; spread in the order they stood
 * in when this was one file, so the matrix keeps its key order.
 */
export const EDGE_ENTRIES: Record<string, Entry> = {
  ...EDGE_DEVICE_ENTRIES,
  ...EDGE_CONFIG_ENTRIES,
  ...EDGE_MEDIA_ENTRIES,
  ...EDGE_AUTOMATION_ENTRIES,
};
