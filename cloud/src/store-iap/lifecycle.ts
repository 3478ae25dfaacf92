/**
 * Pure subscription state machine for App Store Server Notifications v2.
 *
 * `applyNotification(current, verified, ctx)` maps the stored state of one subscription
 * (keyed by originalTransactionId) plus a *verified* notification to the next state.
 * No I/O, no clock other than `ctx.now`; persistence and idempotency live in store.ts.
 */
import type { Subscription, SubscriptionStatus } from '@smarthome/protocol/billing';
import type { StoreEnvironment, VerifiedNotification } from './verify.ts';

/** The public Subscription (protocol/src/billing.ts) plus the store receiver's internal fields. */
export interface StoreSubscriptionState extends Subscription {
  gateway_provider: 'app_store';
  /** Apple's originalTransactionId: the key of the subscription. */
  original_transaction_id: string;
  /** Owner, resolved through appAccountToken (null until a user with that token exists). */
  user_id: string | null;
  app_account_token: string | null;
  product_id: string;
  environment: StoreEnvironment;
  /** End of the billing grace period while status is grace_period (ISO), else null. */
  grace_period_expires_at: string | null;
  /** signedDate (ms since epoch) of the last notification applied: older ones never move the state. */
  last_signed_date: number;
  last_notification_type: string;
}

/**
 * productId → plan id: a table (e.g. `{ 'com.example.smarthome.pro.monthly': 2 }`) or a function
 * (undefined = unknown product).
 */
export type PlanMap = Readonly<Record<string, number>> | ((productId: string) => number | undefined);

export interface LifecycleContext {
  planByProductId: PlanMap;
  /** Time of processing, for created_at/updated_at. */
  now: Date;
  /** Id for a newly created subscription (e.g. `() => crypto.randomUUID()`). */
  newId: () => string;
  /** User resolved from the transaction's appAccountToken, if any. */
  userId?: string | null;
}

export type LifecycleOutcome =
  /** The state changed (or was created). */
  | 'applied'
  /** A type that never changes anything (TEST, CONSUMPTION_REQUEST) or a type we do not act on. */
  | 'no_change'
  /** Older than the last applied notification for this subscription. */
  | 'stale'
  /** A type that needs signedTransactionInfo arrived without it. */
  | 'no_transaction'
  /** The product (or the new product of a plan change) is not in the plan map. */
  | 'unknown_product';

export interface LifecycleResult {
  outcome: LifecycleOutcome;
  /** The next state; identical to `current` unless outcome is 'applied'. */
  state: StoreSubscriptionState | null;
}

/** Notification types that never change a subscription. */
const NO_EFFECT = new Set(['TEST', 'CONSUMPTION_REQUEST']);
/** Types this machine acts on; anything else is recorded and answered, with no change. */
const HANDLED = new Set([
  'SUBSCRIBED',
  'DID_RENEW',
  'DID_FAIL_TO_RENEW',
  'GRACE_PERIOD_EXPIRED',
  'EXPIRED',
  'REFUND',
  'REVOKE',
  'REFUND_REVERSED',
  'DID_CHANGE_RENEWAL_STATUS',
  'DID_CHANGE_RENEWAL_PREF',
  'RENEWAL_EXTENDED',
]);

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function applyNotification(
  current: StoreSubscriptionState | null,
  verified: VerifiedNotification,
  ctx: LifecycleContext,
): LifecycleResult {
  const { payload, transaction, renewal } = verified;
  const type = payload.notificationType;
  const subtype = payload.subtype;
  const unchanged = (outcome: LifecycleOutcome): LifecycleResult => ({ outcome, state: current });

  if (NO_EFFECT.has(type) || !HANDLED.has(type)) return unchanged('no_change');
  if (!transaction) return unchanged('no_transaction');
  if (current && payload.signedDate < current.last_signed_date) return unchanged('stale');

  const plans = ctx.planByProductId;
  const planOf = (productId: string | undefined): number | undefined => {
    if (productId === undefined) return undefined;
    if (typeof plans === 'function') return plans(productId);
    return Object.hasOwn(plans, productId) ? plans[productId] : undefined;
  };
  const transactionPlan = planOf(transaction.productId);
  const nowIso = ctx.now.toISOString();

  let next: StoreSubscriptionState;
  if (current) {
    next = { ...current };
  } else {
    if (transactionPlan === undefined) return unchanged('unknown_product');
    const expires = transaction.expiresDate;
    next = {
      id: ctx.newId(),
      plan_id: transactionPlan,
      // Types below that do not set a status keep this: active unless the period already ended.
      status: expires !== undefined && expires <= payload.signedDate ? 'expired' : 'active',
      gateway_provider: 'app_store',
      auto_renew: true,
      expires_at: iso(expires),
      pending_plan_id: null,
      created_at: nowIso,
      updated_at: nowIso,
      original_transaction_id: transaction.originalTransactionId,
      user_id: null,
      app_account_token: null,
      product_id: transaction.productId,
      environment: transaction.environment ?? 'Production',
      grace_period_expires_at: null,
      last_signed_date: payload.signedDate,
      last_notification_type: type,
    };
  }
  if (transaction.environment) next.environment = transaction.environment;
  if (transaction.appAccountToken) next.app_account_token = transaction.appAccountToken;
  if (ctx.userId && !next.user_id) next.user_id = ctx.userId;
  if (renewal?.autoRenewStatus !== undefined) next.auto_renew = renewal.autoRenewStatus === 1;
  const setStatus = (status: SubscriptionStatus) => {
    next.status = status;
    if (status !== 'grace_period') next.grace_period_expires_at = null;
  };
  // The pending plan a renewal preference points at (null = renews into the current plan).
  const renewalPlan = (): number | null | undefined => {
    const productId = renewal?.autoRenewProductId;
    if (productId === undefined || productId === next.product_id) return null;
    return planOf(productId);
  };

  switch (type) {
    case 'SUBSCRIBED': {
      if (transactionPlan === undefined) return unchanged('unknown_product');
      setStatus('active');
      next.plan_id = transactionPlan;
      next.product_id = transaction.productId;
      next.expires_at = iso(transaction.expiresDate) ?? next.expires_at;
      next.pending_plan_id = renewalPlan() ?? null;
      break;
    }
    case 'DID_RENEW': {
      // A downgrade chosen earlier takes effect now: the renewal transaction carries the new product.
      if (transactionPlan === undefined) return unchanged('unknown_product');
      setStatus('active');
      next.plan_id = transactionPlan;
      next.product_id = transaction.productId;
      next.pending_plan_id = null;
      next.expires_at = iso(transaction.expiresDate) ?? next.expires_at;
      break;
    }
    case 'DID_FAIL_TO_RENEW': {
      if (subtype === 'GRACE_PERIOD') {
        const graceEnd = renewal?.gracePeriodExpiresDate;
        setStatus('grace_period');
        next.grace_period_expires_at = iso(graceEnd);
        // Access lasts until the grace period ends.
        next.expires_at = iso(graceEnd) ?? iso(transaction.expiresDate) ?? next.expires_at;
      } else {
        setStatus('billing_retry');
        next.expires_at = iso(transaction.expiresDate) ?? next.expires_at;
      }
      break;
    }
    case 'GRACE_PERIOD_EXPIRED':
    case 'EXPIRED':
      setStatus('expired');
      if (type === 'EXPIRED') next.auto_renew = false;
      break;
    case 'REFUND':
    case 'REVOKE':
      setStatus('revoked');
      break;
    case 'REFUND_REVERSED':
      setStatus('active');
      next.expires_at = iso(transaction.expiresDate) ?? next.expires_at;
      break;
    case 'DID_CHANGE_RENEWAL_STATUS':
      if (subtype === 'AUTO_RENEW_ENABLED') next.auto_renew = true;
      else if (subtype === 'AUTO_RENEW_DISABLED') next.auto_renew = false;
      break;
    case 'DID_CHANGE_RENEWAL_PREF': {
      if (subtype === 'UPGRADE') {
        // Effective immediately: the transaction is the upgraded product.
        const plan = planOf(renewal?.autoRenewProductId ?? transaction.productId) ?? transactionPlan;
        if (plan === undefined) return unchanged('unknown_product');
        next.plan_id = plan;
        next.product_id = renewal?.autoRenewProductId ?? transaction.productId;
        next.pending_plan_id = null;
        next.expires_at = iso(transaction.expiresDate) ?? next.expires_at;
      } else if (subtype === 'DOWNGRADE') {
        const pending = renewalPlan();
        if (pending === undefined) return unchanged('unknown_product');
        next.pending_plan_id = pending;
      } else {
        // No subtype: the user went back to the current product, cancelling a pending downgrade.
        next.pending_plan_id = renewalPlan() ?? null;
      }
      break;
    }
    case 'RENEWAL_EXTENDED':
      next.expires_at = iso(transaction.expiresDate) ?? next.expires_at;
      break;
  }
  next.last_signed_date = Math.max(next.last_signed_date, payload.signedDate);
  next.last_notification_type = type;
  next.updated_at = nowIso;
  return { outcome: 'applied', state: next };
}

/** The public Subscription view (GET /v1/billing/subscriptions) of a stored state. */
export function toSubscription(state: StoreSubscriptionState): Subscription {
  return {
    id: state.id,
    plan_id: state.plan_id,
    status: state.status,
    gateway_provider: state.gateway_provider,
    auto_renew: state.auto_renew,
    expires_at: state.expires_at,
    pending_plan_id: state.pending_plan_id,
    created_at: state.created_at,
    updated_at: state.updated_at,
  };
}

/** Whether a subscription currently entitles its user to its plan (for /v1/billing/usage). */
export function isEntitling(state: Pick<Subscription, 'status'>): boolean {
  return state.status === 'active' || state.status === 'grace_period';
}
