import type { Migration } from './db/database.ts';
import {
  authMigrations,
  emailVerificationMigrations,
  sessionClientMigrations,
  sessionRevocationMigrations,
  signInNoticeMigrations,
  totpMigrations,
} from './auth/tables.ts';
import { orgMigrations, orgRequireMfaMigrations } from './orgs/tables.ts';
import { shareMigrations } from './authz/shares-table.ts';
import { invitationDeclinedMigrations, invitationMigrations } from './orgs/invitations-table.ts';
import { zoneMigrations } from './zones/tables.ts';
import { dashboardMigrations } from './dashboards/tables.ts';
import { transferMigrations } from './transfers/tables.ts';
import type { TransferResourceHandlers } from './transfers/resources.ts';
import { zoneTransferHandler } from './zones/transfer.ts';
import { dashboardTransferHandler } from './dashboards/transfer.ts';
import { voipMigrations } from './voip/tables.ts';
import { edgeMigrations } from './edges/tables.ts';
import { mirrorDisabledMigrations, mirrorRegistryMigrations, mirrorMigrations } from './mirror/tables.ts';
import { billingMigrations } from './billing/tables.ts';
import { voiceMigrations } from './devices/voice.ts';
import { storeIapMigrations } from './store-iap/tables.ts';
import { flowMigrations } from './devices/flows.ts';
import { mailMigrations } from './mail/tables.ts';

/** Every capability's migrations, in the order they must apply (append only). */
export const migrations: Migration[] = [
  ...authMigrations,
  ...orgMigrations,
  ...shareMigrations,
  ...invitationMigrations,
  ...zoneMigrations,
  ...dashboardMigrations,
  ...transferMigrations,
  ...voipMigrations,
  ...edgeMigrations,
  ...mirrorMigrations,
  ...billingMigrations,
  ...voiceMigrations,
  ...storeIapMigrations,
  ...flowMigrations,
  ...sessionRevocationMigrations,
  ...mailMigrations,
  ...emailVerificationMigrations,
  ...totpMigrations,
  ...sessionClientMigrations,
  ...signInNoticeMigrations,
  ...orgRequireMfaMigrations,
  ...mirrorDisabledMigrations,
  ...invitationDeclinedMigrations,
  ...mirrorRegistryMigrations,
];

/**
 * The transferable resource types: to make another type transferable, implement a
 * TransferResourceHandler next to the resource (as zones/transfer.ts does) and add it here.
 */
export const transferResourceHandlers: TransferResourceHandlers = {
  zone: zoneTransferHandler,
  ui_dashboard: dashboardTransferHandler,
};
