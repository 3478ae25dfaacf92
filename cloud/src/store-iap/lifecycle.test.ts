import { describe, expect, it } from 'vitest';
import { Subscription } from '@smarthome/protocol/billing';
import {
  applyNotification,
  isEntitling,
  toSubscription,
  type LifecycleContext,
  type StoreSubscriptionState,
} from './lifecycle.ts';
import type { VerifiedNotification } from './verify.ts';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
const MONTHLY = 'com.example.smarthome.pro.monthly';
const BUSINESS = 'com.example.smarthome.business.monthly';
const BASIC = 'com.example.smarthome.basic.monthly';
const plans = { [MONTHLY]: 2, [BUSINESS]: 3, [BASIC]: 1 };
const ctx = (overrides: Partial<LifecycleContext> = {}): LifecycleContext => ({
  planByProductId: plans,
  now: new Date(T0 + DAY),
  newId: () => 'sub-1',
  userId: 'user-1',
  ...overrides,
});

let uuid = 0;
function note(
  notificationType: string,
  options: {
    subtype?: string;
    signedDate?: number;
    productId?: string;
    expiresDate?: number;
    renewal?: Record<string, unknown> | null;
  } = {},
): VerifiedNotification {
  const signedDate = options.signedDate ?? T0;
  return {
    payload: {
      notificationType,
      subtype: options.subtype,
      notificationUUID: `n-${++uuid}`,
      signedDate,
      data: { bundleId: 'b', environment: 'Sandbox' },
    },
    transaction: {
      originalTransactionId: '1000',
      productId: options.productId ?? MONTHLY,
      appAccountToken: '6f1c1f47-58b2-4b3a-9c2e-0d7b8f6a9e11',
      expiresDate: options.expiresDate ?? T0 + 30 * DAY,
      environment: 'Sandbox',
    },
    renewal:
      options.renewal === null
        ? undefined
        : {
            originalTransactionId: '1000',
            autoRenewStatus: 1,
            autoRenewProductId: options.productId ?? MONTHLY,
            ...options.renewal,
          },
  };
}

function subscribe(): StoreSubscriptionState {
  const { outcome, state } = applyNotification(null, note('SUBSCRIBED', { subtype: 'INITIAL_BUY' }), ctx());
  expect(outcome).toBe('applied');
  return state!;
}

describe('store-iap lifecycle', () => {
  it('SUBSCRIBED creates an active app_store subscription linked to the user', () => {
    const s = subscribe();
    expect(s).toMatchObject({
      id: 'sub-1',
      plan_id: 2,
      status: 'active',
      gateway_provider: 'app_store',
      auto_renew: true,
      expires_at: new Date(T0 + 30 * DAY).toISOString(),
      pending_plan_id: null,
      original_transaction_id: '1000',
      user_id: 'user-1',
      app_account_token: '6f1c1f47-58b2-4b3a-9c2e-0d7b8f6a9e11',
      last_signed_date: T0,
    });
    expect(Subscription.parse(toSubscription(s))).toEqual(toSubscription(s));
    expect(isEntitling(s)).toBe(true);
  });

  it('DID_RENEW keeps it active with the new expiry', () => {
    const billingRetry = applyNotification(
      subscribe(),
      note('DID_FAIL_TO_RENEW', { signedDate: T0 + DAY }),
      ctx(),
    ).state!;
    const { state } = applyNotification(
      billingRetry,
      note('DID_RENEW', { signedDate: T0 + 2 * DAY, expiresDate: T0 + 60 * DAY }),
      ctx(),
    );
    expect(state).toMatchObject({
      status: 'active',
      expires_at: new Date(T0 + 60 * DAY).toISOString(),
      last_signed_date: T0 + 2 * DAY,
    });
  });

  it('DID_FAIL_TO_RENEW with GRACE_PERIOD → grace_period until its end; without → billing_retry', () => {
    const graceEnd = T0 + 36 * DAY;
    const grace = applyNotification(
      subscribe(),
      note('DID_FAIL_TO_RENEW', {
        subtype: 'GRACE_PERIOD',
        signedDate: T0 + 30 * DAY,
        renewal: { gracePeriodExpiresDate: graceEnd },
      }),
      ctx(),
    ).state!;
    expect(grace).toMatchObject({
      status: 'grace_period',
      grace_period_expires_at: new Date(graceEnd).toISOString(),
      expires_at: new Date(graceEnd).toISOString(),
    });
    expect(isEntitling(grace)).toBe(true);
    const retry = applyNotification(
      subscribe(),
      note('DID_FAIL_TO_RENEW', { signedDate: T0 + 30 * DAY }),
      ctx(),
    ).state!;
    expect(retry).toMatchObject({ status: 'billing_retry', grace_period_expires_at: null });
    expect(isEntitling(retry)).toBe(false);
  });

  it('GRACE_PERIOD_EXPIRED and EXPIRED → expired', () => {
    const grace = applyNotification(
      subscribe(),
      note('DID_FAIL_TO_RENEW', {
        subtype: 'GRACE_PERIOD',
        signedDate: T0 + 30 * DAY,
        renewal: { gracePeriodExpiresDate: T0 + 36 * DAY },
      }),
      ctx(),
    ).state!;
    const expired = applyNotification(grace, note('GRACE_PERIOD_EXPIRED', { signedDate: T0 + 36 * DAY }), ctx()).state!;
    expect(expired).toMatchObject({ status: 'expired', grace_period_expires_at: null });
    for (const subtype of ['VOLUNTARY', 'BILLING_RETRY', 'PRICE_INCREASE', undefined]) {
      const state = applyNotification(
        subscribe(),
        note('EXPIRED', { subtype, signedDate: T0 + 31 * DAY, renewal: { autoRenewStatus: 0 } }),
        ctx(),
      ).state!;
      expect(state).toMatchObject({ status: 'expired', auto_renew: false });
    }
  });

  it('REFUND and REVOKE → revoked; REFUND_REVERSED → active again', () => {
    for (const type of ['REFUND', 'REVOKE']) {
      const revoked = applyNotification(subscribe(), note(type, { signedDate: T0 + DAY }), ctx()).state!;
      expect(revoked.status).toBe('revoked');
      expect(isEntitling(revoked)).toBe(false);
      const restored = applyNotification(revoked, note('REFUND_REVERSED', { signedDate: T0 + 2 * DAY }), ctx()).state!;
      expect(restored).toMatchObject({ status: 'active', plan_id: 2 });
    }
  });

  it('DID_CHANGE_RENEWAL_STATUS toggles auto_renew only', () => {
    const s = subscribe();
    const off = applyNotification(
      s,
      note('DID_CHANGE_RENEWAL_STATUS', { subtype: 'AUTO_RENEW_DISABLED', signedDate: T0 + DAY, renewal: null }),
      ctx(),
    ).state!;
    expect(off).toMatchObject({ status: 'active', auto_renew: false, plan_id: 2, expires_at: s.expires_at });
    const on = applyNotification(
      off,
      note('DID_CHANGE_RENEWAL_STATUS', { subtype: 'AUTO_RENEW_ENABLED', signedDate: T0 + 2 * DAY, renewal: null }),
      ctx(),
    ).state!;
    expect(on.auto_renew).toBe(true);
  });

  it('DID_CHANGE_RENEWAL_PREF UPGRADE changes the plan now', () => {
    const { state } = applyNotification(
      subscribe(),
      note('DID_CHANGE_RENEWAL_PREF', {
        subtype: 'UPGRADE',
        signedDate: T0 + DAY,
        productId: BUSINESS,
        expiresDate: T0 + 31 * DAY,
        renewal: { autoRenewProductId: BUSINESS },
      }),
      ctx(),
    );
    expect(state).toMatchObject({
      plan_id: 3,
      pending_plan_id: null,
      product_id: BUSINESS,
      status: 'active',
      expires_at: new Date(T0 + 31 * DAY).toISOString(),
    });
  });

  it('DID_CHANGE_RENEWAL_PREF DOWNGRADE is pending until the next DID_RENEW', () => {
    const downgraded = applyNotification(
      subscribe(),
      note('DID_CHANGE_RENEWAL_PREF', {
        subtype: 'DOWNGRADE',
        signedDate: T0 + DAY,
        productId: MONTHLY,
        renewal: { autoRenewProductId: BASIC },
      }),
      ctx(),
    ).state!;
    expect(downgraded).toMatchObject({ plan_id: 2, pending_plan_id: 1 });
    const renewed = applyNotification(
      downgraded,
      note('DID_RENEW', {
        signedDate: T0 + 30 * DAY,
        productId: BASIC,
        expiresDate: T0 + 60 * DAY,
        renewal: { autoRenewProductId: BASIC },
      }),
      ctx(),
    ).state!;
    expect(renewed).toMatchObject({ plan_id: 1, pending_plan_id: null, product_id: BASIC, status: 'active' });
  });

  it('DID_CHANGE_RENEWAL_PREF without subtype cancels a pending downgrade', () => {
    const downgraded = applyNotification(
      subscribe(),
      note('DID_CHANGE_RENEWAL_PREF', {
        subtype: 'DOWNGRADE',
        signedDate: T0 + DAY,
        renewal: { autoRenewProductId: BASIC },
      }),
      ctx(),
    ).state!;
    const back = applyNotification(
      downgraded,
      note('DID_CHANGE_RENEWAL_PREF', { signedDate: T0 + 2 * DAY, renewal: { autoRenewProductId: MONTHLY } }),
      ctx(),
    ).state!;
    expect(back).toMatchObject({ plan_id: 2, pending_plan_id: null });
  });

  it('TEST and CONSUMPTION_REQUEST change nothing; unknown types change nothing', () => {
    const s = subscribe();
    for (const type of ['TEST', 'CONSUMPTION_REQUEST', 'PRICE_INCREASE', 'SOMETHING_NEW']) {
      const result = applyNotification(s, note(type, { signedDate: T0 + DAY }), ctx());
      expect(result).toEqual({ outcome: 'no_change', state: s });
    }
    expect(
      applyNotification(null, { payload: { notificationType: 'TEST', notificationUUID: 'x', signedDate: T0 } }, ctx()),
    ).toEqual({ outcome: 'no_change', state: null });
  });

  it('an older notification does not move the subscription backwards', () => {
    const revoked = applyNotification(subscribe(), note('REFUND', { signedDate: T0 + 10 * DAY }), ctx()).state!;
    for (const type of ['DID_RENEW', 'SUBSCRIBED', 'REFUND_REVERSED', 'DID_CHANGE_RENEWAL_STATUS']) {
      const result = applyNotification(
        revoked,
        note(type, { subtype: 'AUTO_RENEW_DISABLED', signedDate: T0 + 5 * DAY }),
        ctx(),
      );
      expect(result.outcome).toBe('stale');
      expect(result.state).toBe(revoked);
    }
    // Renewals delivered out of order: the later expiry wins.
    const late = applyNotification(
      subscribe(),
      note('DID_RENEW', { signedDate: T0 + 60 * DAY, expiresDate: T0 + 90 * DAY }),
      ctx(),
    ).state!;
    const early = applyNotification(
      late,
      note('DID_RENEW', { signedDate: T0 + 30 * DAY, expiresDate: T0 + 60 * DAY }),
      ctx(),
    );
    expect(early.outcome).toBe('stale');
    expect(early.state!.expires_at).toBe(new Date(T0 + 90 * DAY).toISOString());
  });

  it('creates the subscription from a first notification other than SUBSCRIBED', () => {
    const { state } = applyNotification(
      null,
      note('DID_RENEW', { signedDate: T0 + 30 * DAY, expiresDate: T0 + 60 * DAY }),
      ctx(),
    );
    expect(state).toMatchObject({ status: 'active', plan_id: 2, expires_at: new Date(T0 + 60 * DAY).toISOString() });
    const refund = applyNotification(null, note('REFUND', { signedDate: T0 + DAY }), ctx());
    expect(refund.state).toMatchObject({ status: 'revoked' });
  });

  it('maps plans through the configured map and ignores unknown products', () => {
    expect(applyNotification(null, note('SUBSCRIBED', { productId: 'com.unknown' }), ctx())).toEqual({
      outcome: 'unknown_product',
      state: null,
    });
    const s = subscribe();
    expect(
      applyNotification(s, note('DID_RENEW', { productId: 'com.unknown', signedDate: T0 + DAY }), ctx()).outcome,
    ).toBe('unknown_product');
    expect(
      applyNotification(s, note('DID_RENEW', { signedDate: T0 + DAY }), ctx({ planByProductId: { [MONTHLY]: 7 } }))
        .state!.plan_id,
    ).toBe(7);
    // Prototype keys are not products.
    expect(applyNotification(null, note('SUBSCRIBED', { productId: 'constructor' }), ctx()).outcome).toBe(
      'unknown_product',
    );
  });

  it('needs transaction info for state-changing types', () => {
    const s = subscribe();
    const result = applyNotification(
      s,
      { payload: { notificationType: 'DID_RENEW', notificationUUID: 'x', signedDate: T0 + DAY } },
      ctx(),
    );
    expect(result).toEqual({ outcome: 'no_transaction', state: s });
  });

  it('keeps the first linked user and links a user that appears later', () => {
    const unlinked = applyNotification(null, note('SUBSCRIBED'), ctx({ userId: null })).state!;
    expect(unlinked.user_id).toBeNull();
    const linked = applyNotification(
      unlinked,
      note('DID_RENEW', { signedDate: T0 + DAY }),
      ctx({ userId: 'user-2' }),
    ).state!;
    expect(linked.user_id).toBe('user-2');
    const kept = applyNotification(
      linked,
      note('DID_RENEW', { signedDate: T0 + 2 * DAY }),
      ctx({ userId: 'user-3' }),
    ).state!;
    expect(kept.user_id).toBe('user-2');
  });
});
