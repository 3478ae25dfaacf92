import { ACCOUNT_ENTRIES } from './cloud-account-entries.ts';
import { EDGE_BILLING_ENTRIES } from './cloud-edge-entries.ts';
import { ORG_ENTRIES } from './cloud-org-entries.ts';
import { ZONE_DASHBOARD_ENTRIES } from './cloud-zone-dashboard-entries.ts';
import type { Entry } from './types.ts';

/**
 * Matrix entries of the cloud's own resources, one file per capability; spread in the order they
 * stood in when this was one file, so the matrix keeps its key order.
 */
export const CLOUD_ENTRIES: Record<string, Entry> = {
  ...ACCOUNT_ENTRIES,
  ...ORG_ENTRIES,
  ...ZONE_DASHBOARD_ENTRIES,
  ...EDGE_BILLING_ENTRIES,
};
