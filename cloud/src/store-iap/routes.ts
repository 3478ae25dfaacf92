/**
 * POST /v1/webhooks/store-iap (no auth: the signature is inside the JWS).
 *
 * The verifier is built once, when the cloud mounts its routes, from STORE_IAP_ROOTS_FILE /
 * STORE_IAP_BUNDLE_ID / STORE_IAP_ENVIRONMENT. Without a usable configuration (no bundle id,
 * an unreadable or invalid roots file) the cloud still starts (the latter logged as an error):
 * the receiver answers every notification 400 `{error:"store receiver not configured"}` and
 * records it, so the store keeps retrying until the operator fixes the configuration.
 */
import type { Context } from 'hono';
import { routes } from '@smarthome/protocol';
import { parseJsonBody, readBodyBytes } from '@smarthome/protocol/server';
import type { CloudRouter } from '../context.ts';
import type { CloudConfig } from '../config.ts';
import type { CloudDatabase } from '../db/database.ts';
import type { Logger } from '../log.ts';
import { productPlanMap } from './product-plans.ts';
import { DbIapRepository } from './repository.ts';
import {
  handleStoreNotification,
  requireSignedPayload,
  storeError,
  toWireBody,
  type StoreNotificationDeps,
} from './store.ts';
import {
  createStoreVerifier,
  storeVerifierOptionsFromConfig,
  type StoreIapConfig,
  type StoreVerifier,
} from './verify.ts';

/** Apple's notifications are a few KiB; anything beyond this is answered 413 without being read further. */
export const STORE_IAP_BODY_LIMIT = 256 * 1024;
export const NOT_CONFIGURED = 'store receiver not configured';

export type StoreVerifierSetup = { verifier: StoreVerifier; problem: null } | { verifier: null; problem: string };

/** Builds the verifier from the cloud config; a missing or broken configuration is reported, not thrown. */
export function buildStoreVerifier(config: StoreIapConfig): StoreVerifierSetup {
  try {
    return { verifier: createStoreVerifier(storeVerifierOptionsFromConfig(config)), problem: null };
  } catch (err) {
    return { verifier: null, problem: err instanceof Error ? err.message : String(err) };
  }
}

/** The raw body as JSON: empty → undefined (a missing signedPayload); not JSON, or nested too deep → 400 `{error}`. */
async function readStoreBody(c: Context): Promise<unknown> {
  const bytes = await readBodyBytes(c, STORE_IAP_BODY_LIMIT);
  if (bytes.byteLength === 0) return undefined;
  try {
    return parseJsonBody(bytes);
  } catch (err) {
    throw storeError((err as Error).message, err);
  }
}

export interface StoreIapRoutesDeps {
  config: CloudConfig;
  database: CloudDatabase;
  log: Logger;
}

export function createStoreIapDeps(
  s: Pick<StoreIapRoutesDeps, 'config' | 'database'>,
  log: Logger,
): { deps: StoreNotificationDeps | null; repo: DbIapRepository; problem: string | null } {
  const repo = new DbIapRepository(s.database);
  const setup = buildStoreVerifier(s.config);
  if (!setup.verifier) return { deps: null, repo, problem: setup.problem };
  return {
    repo,
    problem: null,
    deps: {
      verifier: setup.verifier,
      repo,
      planByProductId: productPlanMap(s.config.storeIapProductPlans),
      onRejected: (err) =>
        log.warn('store notification rejected', { where: err.where, reason: err.reason, detail: err.message }),
    },
  };
}

export function mountStoreIapRoutes(router: CloudRouter, s: StoreIapRoutesDeps): void {
  const { deps, repo, problem } = createStoreIapDeps(s, s.log);
  // No bundle id is a cloud that does not sell through the store: nothing to say until a
  // notification arrives. A bundle id with a broken rest (roots file) is an operator error.
  if (problem && s.config.storeIapBundleId) s.log.error(`${NOT_CONFIGURED}: ${problem}`);

  // The spec declares the body for the docs with `readBody: 'manual'`: the router's own body
  // parsing would answer a missing body or signedPayload with a validation 400; this receiver
  // answers `{error}` (spec errorShapes) with its own messages, so it reads the body itself.
  router.add(routes.storeIapNotificationRoute, async ({ c }) => {
    const body = await readStoreBody(c);
    if (!deps) {
      requireSignedPayload(body);
      s.log.warn(`store notification refused: ${NOT_CONFIGURED}`, { problem });
      await repo.recordNotification({
        uuid: null,
        type: null,
        subtype: null,
        outcome: 'rejected',
        reason: `not_configured: ${problem}`,
        original_transaction_id: null,
        signed_date: null,
        received_at: new Date().toISOString(),
      });
      throw storeError(NOT_CONFIGURED);
    }
    return toWireBody(await handleStoreNotification(body, deps));
  });
}
